import { useCallback, useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { DeviceTaskStates, type DeviceTask } from '@lintel/commands';
import { ApiError, RealtimeTopics, type WsServerMessage } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { realtime } from '../../session/realtime';

type State = (typeof DeviceTaskStates)[number];

/**
 * /devices/tasks: every change sent to the devices the user sees, newest first, by state; a failed or stopped
 * task can be queued again, one not yet acknowledged stopped (`device.task_retry`, `device.task_stop`). Live:
 * read again on every task change the websocket brings.
 */
export function DeviceTasksPage() {
  const { t } = useTranslation();
  const formatDate = useFormatDate();
  usePageTitle(t('device_tasks.title'));
  // the state shown is in the address (`?state=error`), so a link (the home's failed tasks) opens it filtered
  const [params, setParams] = useSearchParams();
  const asked = params.get('state') ?? '';
  const state: State | '' = (DeviceTaskStates as readonly string[]).includes(asked) ? (asked as State) : '';
  const setState = (next: State | '') =>
    setParams(
      (p) => {
        const out = new URLSearchParams(p);
        if (next) out.set('state', next);
        else out.delete('state');
        return out;
      },
      { replace: true },
    );
  const [rows, setRows] = useState<DeviceTask[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const reply = await runCommand('device.tasks', { limit: 100, ...(state ? { state } : {}) });
      setRows(reply.data);
      setTotal(reply.meta.total);
      setError(null);
    } catch (e) {
      setError(describeError(e).message);
    }
  }, [state]);
  useEffect(() => void load(), [load]);
  // live: a task's state changed (`private-devices`), or the connection came back and may have missed some
  useEffect(
    () =>
      realtime.subscribe(RealtimeTopics.devices, (m: WsServerMessage) => {
        if (m.data.type === 'DeviceTaskChangedEvent' || m.data.type === 'resync') void load();
      }),
    [load],
  );

  const act = async (id: number, verb: 'device.task_retry' | 'device.task_stop') => {
    await runCommand(verb, { id }).catch((e: unknown) => setError(describeError(e).message));
    await load();
  };

  return (
    <div className="space-y-3">
      <div className="flex items-center gap-3">
        <label className="text-sm">
          {t('device_tasks.state')}{' '}
          <select
            value={state}
            onChange={(e) => setState(e.currentTarget.value as State | '')}
            className="rounded border border-slate-300 px-1 py-0.5"
          >
            <option value="">{t('device_tasks.all')}</option>
            {DeviceTaskStates.map((s) => (
              <option key={s} value={s}>
                {t(`device_tasks.states.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void load()} className="rounded border px-2 py-0.5 text-sm">
          {t('device_tasks.refresh')}
        </button>
        <span className="text-sm text-slate-500">{t('device_tasks.total', { total })}</span>
      </div>
      {error && <p role="alert">{error}</p>}
      <div className="overflow-x-auto rounded-md border border-slate-200">
        <table className="w-full text-left text-sm">
          <thead className="bg-slate-50 text-slate-600">
            <tr>
              {(['device', 'kind', 'state', 'attempts', 'error', 'updated_at', 'actions'] as const).map(
                (c) => (
                  <th key={c} scope="col" className="px-2 py-1.5 font-semibold whitespace-nowrap">
                    {t(`device_tasks.columns.${c}`)}
                  </th>
                ),
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} className="border-t border-slate-100">
                <td className="px-2 py-1">{r.device.name}</td>
                <td className="px-2 py-1">{t(`device_tasks.kinds.${r.kind}`)}</td>
                <td className="px-2 py-1">{t(`device_tasks.states.${r.state}`)}</td>
                <td className="px-2 py-1">{r.attempts}</td>
                <td className="px-2 py-1">
                  {r.error ? describeError(new ApiError(409, r.error, r.error)).message : ''}
                </td>
                <td className="px-2 py-1 whitespace-nowrap">{formatDate(r.updated_at)}</td>
                <td className="px-2 py-1">
                  {(r.state === 'error' || r.state === 'stopped') && (
                    <button type="button" onClick={() => void act(r.id, 'device.task_retry')}>
                      {t('device_tasks.retry')}
                    </button>
                  )}
                  {['new', 'queued', 'started', 'waiting'].includes(r.state) && (
                    <button type="button" onClick={() => void act(r.id, 'device.task_stop')}>
                      {t('device_tasks.stop')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
