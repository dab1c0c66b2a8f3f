import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useAtomValue } from 'jotai';
import { DeviceTypes, type DeviceSearch, type FoundDevice } from '@lintel/commands';
import { RealtimeTopics, WsReply, type WsServerMessage } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { CommandForm, type FieldOverride } from '../../forms/command-form';
import { useCommandForm } from '../../forms/use-command-form';
import { usePageTitle } from '../../layout/page-title';
import { enumWord } from '../../resources/enum-word';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/field';
import { EntityPicker } from '../../pickers/entity-picker';
import { profileAtom } from '../../session/session';
import { realtime } from '../../session/realtime';

/** A device reporting a kind the platform does not know cannot be added as it is. */
const knownType = (f: FoundDevice) => (DeviceTypes as readonly string[]).includes(f.device_type);

/** The first field takes the cursor; the addresses say what they look like. */
const FIELDS: Record<string, FieldOverride> = {
  start_ip: { autoFocus: true, hint: '192.168.1.1' },
  end_ip: { hint: '192.168.1.254' },
};

/**
 * /devices/search (spec part 1 §2.1; part 2 §7 "POST network search", "PUT found devices"): an address range
 * (and the devices' port) searched on Enter, its progress live, the devices found listed as they come with a
 * checkbox each (Space), and the chosen ones added into a group. The search's request id is in the address,
 * so a reload or a reconnect reads it again and catches up (`device.search_result`).
 */
export function DeviceSearchPage() {
  const { t } = useTranslation();
  usePageTitle(t('device_search.title'));
  const profile = useAtomValue(profileAtom);
  const [params, setParams] = useSearchParams();
  const requestId = params.get('request') ?? '';
  // the generic form of `device.search` (issue 25 item 7): its fields, labels, checks and refusals as on
  // every form; the request id is the server's (the reply names it)
  const form = useCommandForm('device.search', { omit: ['request_id'] });
  const [search, setSearch] = useState<DeviceSearch | null>(null);
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [groupId, setGroupId] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const current = useRef(requestId);
  current.current = requestId;

  const refetch = useCallback(async (id: string) => {
    try {
      const r = await runCommand('device.search_result', { request_id: id });
      if (current.current === id) setSearch(r);
    } catch (e) {
      setError(describeError(e).message);
    }
  }, []);

  // the search named in the address: read it (a reload, a link), then follow it live
  useEffect(() => {
    if (!requestId) return;
    void refetch(requestId);
  }, [requestId, refetch]);

  useEffect(() => {
    if (profile?.id === undefined) return;
    const off = realtime.subscribe(RealtimeTopics.user(profile.id), (m: WsServerMessage) => {
      const id = current.current;
      if (!id) return;
      if (m.data.type === WsReply.resync) return void refetch(id);
      if (m.data.type !== 'DeviceSearchEvent' || m.data.requestId !== id) return;
      const d = m.data as unknown as {
        phase: string;
        probed: number;
        total: number;
        timedOut: number;
        device?: FoundDevice;
      };
      setSearch((s) => {
        if (!s || s.request_id !== id) return s;
        const found =
          d.device && !s.found.some((f) => f.serial_number === d.device!.serial_number)
            ? [...s.found, d.device]
            : s.found;
        return { ...s, probed: Math.max(s.probed, d.probed), timed_out: d.timedOut, found };
      });
      // the end: the whole result, as stored
      if (d.phase === 'done' || d.phase === 'interrupted') void refetch(id);
    });
    return off;
  }, [profile?.id, refetch]);

  // the first field has the cursor when the page opens, as on every form page
  const formRef = useRef<HTMLFormElement>(null);
  const loaded = form.fields.length > 0;
  useEffect(() => {
    if (loaded) formRef.current?.querySelector<HTMLElement>('[data-autofocus]')?.focus();
  }, [loaded]);

  const start = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setAdded(null);
    setChosen(new Set());
    const r = (await form.submit()) as DeviceSearch | null;
    if (!r) return;
    current.current = r.request_id;
    setSearch(r);
    setParams({ request: r.request_id }, { replace: true });
  };

  const toggle = (serial: string) =>
    setChosen((c) => {
      const next = new Set(c);
      if (next.has(serial)) next.delete(serial);
      else next.add(serial);
      return next;
    });

  const addChosen = async () => {
    if (!search || !groupId) return;
    setBusy(true);
    setError(null);
    setAdded(null);
    try {
      const items = search.found.filter((f) => chosen.has(f.serial_number));
      const r = await runCommand('device.add_found', {
        domain_id: groupId,
        items: items.map((f) => ({
          serial_number: f.serial_number,
          device_type: f.device_type as 'panel',
          ip_address: f.ip_address,
          port: f.port,
          ...(f.device_name ? { name: f.device_name } : {}),
        })),
      });
      const ids = new Map(r.data.map((d) => [d.serial_number, d.id]));
      setSearch({
        ...search,
        found: search.found.map((f) =>
          ids.has(f.serial_number) ? { ...f, registered: true, device_id: ids.get(f.serial_number)! } : f,
        ),
      });
      setChosen(new Set());
      setAdded(t('device_search.added', { count: r.data.length }));
    } catch (err) {
      setError(describeError(err, 'device.add_found').message);
    } finally {
      setBusy(false);
    }
  };

  const running = search?.state === 'running';
  const percent = search && search.total ? Math.round((search.probed / search.total) * 100) : 0;

  return (
    <div className="space-y-4">
      <form
        ref={formRef}
        onSubmit={(e) => void start(e)}
        noValidate
        className="max-w-3xl space-y-3 rounded-lg border border-slate-200 bg-white p-4"
        data-testid="device-search-form"
      >
        <FormError message={form.failure?.message} />
        <CommandForm
          commandId="device.search"
          fields={form.fields}
          values={form.values}
          onChange={form.set}
          errors={form.failure?.fields ?? {}}
          overrides={FIELDS}
          known={form.known}
        />
        <div className="flex items-center gap-3">
          <Button
            type="submit"
            variant="primary"
            busy={form.busy}
            disabled={running}
            data-testid="device-search-start"
          >
            {t('device_search.start')}
          </Button>
          <span className="text-xs text-slate-500">{t('device_search.hint')}</span>
        </div>
      </form>
      <FormError message={error} />
      {search && (
        <section className="space-y-3" aria-label={t('device_search.results')}>
          <div className="flex items-center gap-3 text-sm">
            <div
              role="progressbar"
              aria-valuenow={search.probed}
              aria-valuemin={0}
              aria-valuemax={search.total || 1}
              aria-label={t('device_search.progress_label')}
              className="h-1.5 w-64 overflow-hidden rounded-full bg-slate-200"
            >
              <div className="h-full rounded-full bg-blue-600" style={{ width: `${percent}%` }} />
            </div>
            <span data-testid="search-progress">
              {t('device_search.progress', {
                probed: search.probed,
                total: search.total,
                found: search.found.length,
                percent,
              })}
            </span>
            <span data-testid="search-state">{t(`device_search.states.${search.state}`)}</span>
            {search.timed_out > 0 && (
              <span className="text-slate-500">
                {t('device_search.timed_out', { count: search.timed_out })}
              </span>
            )}
          </div>
          <div className="overflow-x-auto rounded-md border border-slate-200">
            <table className="w-full text-left text-sm">
              <thead className="bg-slate-50 text-slate-600">
                <tr>
                  {(
                    ['choose', 'ip_address', 'serial_number', 'device_type', 'device_name', 'status'] as const
                  ).map((c) => (
                    <th key={c} scope="col" className="px-2 py-1.5 font-semibold whitespace-nowrap">
                      {t(`device_search.columns.${c}`)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {search.found.map((f) => (
                  <tr key={f.serial_number} className="border-t border-slate-100">
                    <td className="px-2 py-1">
                      <input
                        type="checkbox"
                        checked={chosen.has(f.serial_number)}
                        disabled={f.registered || !knownType(f)}
                        onChange={() => toggle(f.serial_number)}
                        aria-label={t('device_search.choose', { serial: f.serial_number })}
                      />
                    </td>
                    <td className="px-2 py-1 whitespace-nowrap">
                      {f.ip_address}:{f.port}
                    </td>
                    <td className="px-2 py-1">{f.serial_number}</td>
                    <td className="px-2 py-1">{enumWord('type', f.device_type)}</td>
                    <td className="px-2 py-1">{f.device_name}</td>
                    <td className="px-2 py-1">
                      {f.registered
                        ? t('device_search.registered')
                        : knownType(f)
                          ? t('device_search.new')
                          : t('device_search.unknown_type')}
                    </td>
                  </tr>
                ))}
                {!search.found.length && (
                  <tr>
                    <td colSpan={6} className="px-2 py-2 text-slate-500">
                      {running ? t('device_search.searching') : t('device_search.none')}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          <div className="flex flex-wrap items-end gap-3">
            <div className="w-72">
              <EntityPicker
                family="group"
                value={groupId}
                onChange={(v) => setGroupId(typeof v === 'number' ? v : null)}
                label={t('device_search.group')}
                name="domain_id"
                required
              />
            </div>
            <Button
              variant="primary"
              onClick={() => void addChosen()}
              busy={busy}
              disabled={busy || !chosen.size || !groupId}
            >
              {t('device_search.add', { count: chosen.size })}
            </Button>
            {added && (
              <span role="status" data-testid="search-added">
                {added}
              </span>
            )}
          </div>
        </section>
      )}
    </div>
  );
}
