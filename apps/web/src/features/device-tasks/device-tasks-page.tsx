import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { deviceTaskFields, type DeviceTask } from '@lintel/commands';
import { ApiError, RealtimeTopics, type WsServerMessage } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { usePageTitle } from '../../layout/page-title';
import { ResourceTable, type BulkAction } from '../../resources/resource-table';
import type { ColumnOverride } from '../../resources/table-columns';
import { realtime } from '../../session/realtime';
import { focusRing } from '../../ui/button';

/**
 * The tasks as the generic table reads them (issue 25 item 7): their fields, the device's picker for the
 * device filter, and their live state — a task's change patches its row in place.
 */
const deviceTaskResource = {
  noun: 'device_task',
  fields: deviceTaskFields,
  refs: { device: { family: 'device' } },
  live: [
    {
      topic: RealtimeTopics.devices,
      event: 'DeviceTaskChangedEvent',
      id: 'taskId',
      set: { state: 'state', attempts: 'attempts', error: 'error', updated_at: 'at' },
    },
  ],
};

const OPEN = ['new', 'queued', 'started', 'waiting'];
const DONE = ['error', 'stopped'];

/** A new task (one not on screen yet) reloads the list; changes of those on screen patch them in place. */
function useNewTasks(): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const seen = new Set<number>();
    return realtime.subscribe(RealtimeTopics.devices, (m: WsServerMessage) => {
      const data = m.data as Record<string, unknown>;
      if (data.type !== 'DeviceTaskChangedEvent' || typeof data.taskId !== 'number') return;
      if (seen.has(data.taskId)) return;
      seen.add(data.taskId);
      setTick((n) => n + 1);
    });
  }, []);
  return tick;
}

/**
 * /devices/tasks: every change sent to the devices the user sees, newest first — the generic table (j/k,
 * search, filters, sort, columns, the cursor) as on every list. A failed or stopped task can be queued
 * again, one not yet acknowledged stopped (`device.task_retry`, `device.task_stop`): a button on its row
 * and a bulk action on the selected rows. The home's failed tasks open it on `state equals error`.
 */
export function DeviceTasksPage() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('device_tasks.title'));
  const lang = i18n.resolvedLanguage;
  const tick = useNewTasks();
  const [acted, setActed] = useState(0);

  const act = async (ids: number[], verb: 'device.task_retry' | 'device.task_stop') => {
    for (const id of ids)
      await runCommand(verb, { id }).catch((e: unknown) => pushAlert('error', describeError(e).message));
    setActed((n) => n + 1);
  };

  const columns = useMemo<Partial<Record<string, ColumnOverride<DeviceTask>>>>(() => {
    void lang;
    const word = (prefix: 'kinds' | 'states', v: string) =>
      t(`device_tasks.${prefix}.${v}` as 'device_tasks.kinds.restart');
    return {
      kind: { text: (r) => word('kinds', r.kind) },
      state: { text: (r) => word('states', r.state) },
      error: {
        text: (r) => (r.error ? describeError(new ApiError(409, r.error, r.error)).message : ''),
      },
      actions: {
        labelKey: 'device_tasks.columns.actions',
        width: 120,
        render: (r) =>
          DONE.includes(r.state) ? (
            <RowButton onClick={() => void act([r.id], 'device.task_retry')}>
              {t('device_tasks.retry')}
            </RowButton>
          ) : OPEN.includes(r.state) ? (
            <RowButton onClick={() => void act([r.id], 'device.task_stop')}>
              {t('device_tasks.stop')}
            </RowButton>
          ) : (
            ''
          ),
      },
    };
  }, [lang, t]);

  const bulk = useMemo<BulkAction[]>(
    () => [
      { id: 'retry', labelKey: 'device_tasks.retry', run: (ids) => act(ids, 'device.task_retry') },
      { id: 'stop', labelKey: 'device_tasks.stop', run: (ids) => act(ids, 'device.task_stop') },
    ],
    [],
  );

  return (
    <ResourceTable<DeviceTask>
      resource={deviceTaskResource}
      listCommand="device.tasks"
      columns={columns}
      bulkActions={bulk}
      storageKey="device-tasks"
      refreshKey={`${tick}:${acted}`}
    />
  );
}

function RowButton({ onClick, children }: { onClick: () => void; children: string }) {
  return (
    <button
      type="button"
      onClick={(e) => {
        e.stopPropagation();
        onClick();
      }}
      className={`h-6 rounded-md border border-slate-300 bg-white px-2 text-xs font-medium text-slate-800 hover:bg-slate-50 ${focusRing}`}
    >
      {children}
    </button>
  );
}
