import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { IdentifierTypes } from '@lintel/core';
import type { AccessMatrixRow } from '@lintel/commands';
import { api, runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';
import { CompactField, compactInputClass } from '../../ui/field';

/** The filters as the form holds them (empty: not filtered). */
interface Filters {
  user: string;
  group: string;
  device: string;
  type: string;
  allowed: '' | 'true' | 'false';
  at: string;
}
const initial: Filters = { user: '', group: '', device: '', type: '', allowed: '', at: '' };

/** The arguments the filters make: ids as numbers, the moment as an instant (the browser's zone). */
function argsOf(f: Filters): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const k of ['user', 'group', 'device'] as const) if (/^\d+$/.test(f[k].trim())) out[k] = Number(f[k]);
  if (f.type) out.type = f.type;
  if (f.allowed) out.allowed = f.allowed;
  if (f.at) out.at = new Date(f.at).toISOString();
  return out;
}

const PAGE = 200;

async function download(args: Record<string, string | number>, format: 'csv' | 'xlsx') {
  const token = api.store.get()?.token;
  const res = await fetch(api.url('/access-matrix/export', { ...args, format }), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!res.ok) throw new Error(String(res.status));
  const name =
    /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `access-matrix.${format}`;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * /access-matrix: who may pass where, as the one decision answers it now (or at the moment chosen), for the
 * identifiers and devices some rule names both of; filters, pages by keyset ("More") and the download.
 */
export function AccessMatrixPage() {
  const { t: typed } = useTranslation();
  // keys of other namespaces (the commands' texts, the catalogue's reasons)
  const t = typed as unknown as (k: string) => string;
  const f = (k: string) => t(`commands:fields.access_matrix.${k}`);
  usePageTitle(t('commands:pages.access_matrix.title'));
  const [filters, setFilters] = useState<Filters>(initial);
  const [applied, setApplied] = useState<Filters>(initial);
  const [rows, setRows] = useState<AccessMatrixRow[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    async (cursor?: string) => {
      setBusy(true);
      try {
        const r = await runCommand('access_matrix.list', {
          ...argsOf(applied),
          limit: PAGE,
          ...(cursor ? { cursor } : {}),
        } as never);
        setRows((old) => (cursor ? [...old, ...r.data] : r.data));
        setNext(r.meta.next);
      } catch (e) {
        pushAlert('error', describeError(e, 'access_matrix.list').message);
      } finally {
        setBusy(false);
      }
    },
    [applied],
  );
  useEffect(() => void load(), [load]);

  const set = (k: keyof Filters) => (e: { target: { value: string } }) =>
    setFilters({ ...filters, [k]: e.target.value });
  return (
    <div className="flex flex-col gap-3" data-testid="access-matrix">
      <form
        className="flex flex-wrap items-end gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filters);
        }}
      >
        {(['user', 'group', 'device'] as const).map((k) => (
          <CompactField key={k} label={f(k)}>
            <input
              className={compactInputClass}
              inputMode="numeric"
              value={filters[k]}
              onChange={set(k)}
              name={k}
            />
          </CompactField>
        ))}
        <CompactField label={f('type')}>
          <select className={compactInputClass} value={filters.type} onChange={set('type')} name="type">
            <option value="">{t('commands:pages.access_matrix.any')}</option>
            {IdentifierTypes.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </CompactField>
        <CompactField label={f('allowed')}>
          <select
            className={compactInputClass}
            value={filters.allowed}
            onChange={set('allowed')}
            name="allowed"
          >
            <option value="">{t('commands:pages.access_matrix.any')}</option>
            <option value="true">{t('commands:pages.access_matrix.allowed')}</option>
            <option value="false">{t('commands:pages.access_matrix.refused')}</option>
          </select>
        </CompactField>
        <CompactField label={f('at')}>
          <input
            className={compactInputClass}
            type="datetime-local"
            value={filters.at}
            onChange={set('at')}
            name="at"
          />
        </CompactField>
        <Button type="submit">{t('commands:access_matrix.list.label')}</Button>
        {(['csv', 'xlsx'] as const).map((format) => (
          <Button
            key={format}
            type="button"
            onClick={() =>
              download(argsOf(applied), format).catch((e) =>
                pushAlert('error', describeError(e, 'access_matrix.export').message),
              )
            }
          >
            {`${t('commands:pages.access_matrix.download')} ${format.toUpperCase()}`}
          </Button>
        ))}
      </form>
      <table className="w-full text-sm" data-testid="access-matrix-table">
        <thead>
          <tr className="text-left text-slate-600">
            {['identifier', 'type', 'value', 'owner', 'device', 'allowed', 'rule', 'reason'].map((k) => (
              <th key={k} className="px-2 py-1 font-medium">
                {f(k)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.identifier.id}.${r.device.id}`} className="border-t border-slate-100">
              <td className="px-2 py-1">{r.identifier.name || `#${r.identifier.id}`}</td>
              <td className="px-2 py-1">{r.identifier.type}</td>
              <td className="px-2 py-1 font-mono">{r.identifier.value}</td>
              <td className="px-2 py-1">{r.owner?.name ?? ''}</td>
              <td className="px-2 py-1">{r.device.name}</td>
              <td className={`px-2 py-1 ${r.allowed ? 'text-emerald-700' : 'text-rose-700'}`}>
                {t(`commands:pages.access_matrix.${r.allowed ? 'allowed' : 'refused'}`)}
              </td>
              <td className="px-2 py-1">{r.rule?.name ?? ''}</td>
              <td className="px-2 py-1">{r.reason ? t(`errors:http.${r.reason}`) : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {next && (
        <Button type="button" disabled={busy} onClick={() => void load(next)}>
          {t('commands:pages.access_matrix.more')}
        </Button>
      )}
    </div>
  );
}
