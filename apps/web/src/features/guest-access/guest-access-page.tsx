import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { GuestPass } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';
import { CompactField, compactInputClass } from '../../ui/field';

/** `2026-11-27T09:00` as the input gives it → the local time and the instant (the browser's zone). */
const periodOf = (from: string, to: string) => {
  const local = (v: string) => (v.length === 16 ? `${v}:00` : v);
  const instant = (v: string) => new Date(v).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { from: local(from), to: local(to), from_u: instant(from), to_u: instant(to) };
};

interface Rule {
  id: number;
  name: string;
  devices: { id: number; name: string }[];
}

/**
 * /guest-access (spec part 1 §2.4 guest identifier form, guest access URL): grant a guest a QR pass — the
 * shareable rules the caller may give, a validity and a pass limit (held to the group's limits by the
 * server), the guest's e-mail — then the page's address to pass on (shown once); the passes made, their
 * state, and deleting one.
 */
export function GuestAccessPage() {
  const { t: typed } = useTranslation();
  const t = typed as unknown as (k: string, o?: Record<string, unknown>) => string;
  const f = (k: string) => t(`commands:fields.guest_access.${k}`);
  const p = (k: string) => t(`commands:pages.guest_access.${k}`);
  usePageTitle(p('title'));
  const [rules, setRules] = useState<Rule[]>([]);
  const [passes, setPasses] = useState<GuestPass[]>([]);
  const [chosen, setChosen] = useState<number[]>([]);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [limit, setLimit] = useState('1');
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [made, setMade] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const [r, l] = await Promise.all([
        runCommand('guest_access.access_rules', {}),
        runCommand('guest_access.list', {}),
      ]);
      setRules(r.data);
      setPasses(l.data);
    } catch (e) {
      pushAlert('error', describeError(e, 'guest_access.list').message);
    }
  }, []);
  useEffect(() => void load(), [load]);

  async function grant() {
    setBusy(true);
    try {
      const r = await runCommand('guest_access.create', {
        selectedAccessRules: chosen,
        restrictPeriod: true,
        validatePeriod: periodOf(from, to),
        restrictPassCount: limit.trim() !== '',
        passLimit: limit.trim() === '' ? 0 : Number(limit),
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(email.trim() ? { email: email.trim() } : {}),
      } as never);
      setMade(r.url);
      await load();
    } catch (e) {
      pushAlert('error', describeError(e, 'guest_access.create').message);
    } finally {
      setBusy(false);
    }
  }

  async function remove(id: number) {
    try {
      await runCommand('guest_access.delete', { id });
      await load();
    } catch (e) {
      pushAlert('error', describeError(e, 'guest_access.delete').message);
    }
  }

  const toggle = (id: number) => setChosen((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id]));
  const shown = (v: string | null) => (v ? v.replace('T', ' ').slice(0, 16) : '');
  return (
    <div className="flex flex-col gap-4" data-testid="guest-access">
      <form
        className="flex flex-col gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          void grant();
        }}
      >
        <fieldset className="flex flex-col gap-1 text-sm">
          <legend className="text-xs text-slate-600">{f('selectedAccessRules')}</legend>
          {rules.length === 0 && <p className="text-slate-500">{p('no_rules')}</p>}
          {rules.map((r) => (
            <label key={r.id} className="flex items-center gap-2">
              <input type="checkbox" checked={chosen.includes(r.id)} onChange={() => toggle(r.id)} />
              {r.name}
              <span className="text-slate-500">{r.devices.map((d) => d.name).join(', ')}</span>
            </label>
          ))}
        </fieldset>
        <div className="flex flex-wrap items-end gap-3">
          <CompactField label={p('valid_from')}>
            <input
              className={compactInputClass}
              type="datetime-local"
              required
              value={from}
              onChange={(e) => setFrom(e.target.value)}
              name="from"
            />
          </CompactField>
          <CompactField label={p('valid_to')}>
            <input
              className={compactInputClass}
              type="datetime-local"
              required
              value={to}
              onChange={(e) => setTo(e.target.value)}
              name="to"
            />
          </CompactField>
          <CompactField label={f('passLimit')}>
            <input
              className={compactInputClass}
              inputMode="numeric"
              value={limit}
              onChange={(e) => setLimit(e.target.value)}
              name="passLimit"
            />
          </CompactField>
          <CompactField label={f('name')}>
            <input
              className={compactInputClass}
              value={name}
              onChange={(e) => setName(e.target.value)}
              name="name"
            />
          </CompactField>
          <CompactField label={f('email')}>
            <input
              className={compactInputClass}
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              name="email"
            />
          </CompactField>
          <Button type="submit" variant="primary" busy={busy} disabled={!chosen.length}>
            {t('commands:guest_access.create.label')}
          </Button>
        </div>
      </form>
      {made && (
        <div className="rounded border border-emerald-300 bg-emerald-50 p-3 text-sm" data-testid="guest-url">
          <p>{p('url_once')}</p>
          <p className="mt-1 font-mono break-all">{made}</p>
          <Button type="button" onClick={() => void navigator.clipboard?.writeText(made)}>
            {p('copy')}
          </Button>
        </div>
      )}
      <table className="w-full text-sm" data-testid="guest-passes">
        <thead>
          <tr className="text-left text-slate-600">
            {['name', 'valid_from', 'valid_to', 'passes', 'state', 'email'].map((k) => (
              <th key={k} className="px-2 py-1 font-medium">
                {p(k)}
              </th>
            ))}
            <th className="px-2 py-1 font-medium">
              <span className="sr-only">{p('actions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {passes.map((g) => (
            <tr key={g.id} className="border-t border-slate-100">
              <td className="px-2 py-1">{g.name}</td>
              <td className="px-2 py-1">{shown(g.valid_from)}</td>
              <td className="px-2 py-1">{shown(g.valid_to)}</td>
              <td className="px-2 py-1">
                {g.passes_restrict_active ? `${g.passes_count} / ${g.pass_limit}` : String(g.passes_count)}
              </td>
              <td className="px-2 py-1">{p(`states.${g.state}`)}</td>
              <td className="px-2 py-1">{g.email ?? ''}</td>
              <td className="px-2 py-1">
                <Button type="button" size="sm" onClick={() => void remove(g.id)}>
                  {t('commands:guest_access.delete.label')}
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
