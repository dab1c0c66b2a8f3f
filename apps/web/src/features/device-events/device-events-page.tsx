import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { deviceEventFields, type DeviceEvent } from '@lintel/commands';
import { RealtimeTopics, type ListQuery, type WsServerMessage } from '@lintel/core';
import { api } from '../../api/client';
import { i18next } from '../../i18n';
import { usePageTitle } from '../../layout/page-title';
import { ResourceTable } from '../../resources/resource-table';
import type { ColumnOverride } from '../../resources/table-columns';
import { realtime } from '../../session/realtime';
import { useJumpToDay } from '../../resources/jump-to-day';

/** The device events journal: the table needs its noun, fields and the families its refs name. */
const deviceEventResource = {
  noun: 'device_event',
  fields: deviceEventFields,
  refs: { device: { family: 'device' }, domain: { family: 'group' } },
};

/** The event type the server sends on `private-devices` for each stored event (events/define.ts). */
export const DeviceEventCreated = 'DeviceEventCreatedEvent';

/** A code of the events (`device_events.kinds.alarm`) in words of the interface language, else the code. */
export const eventWord = (
  prefix: 'device_events.kinds' | 'device_events.results' | 'device_events.reasons',
  value: string | null,
) => {
  if (!value) return '';
  const key = `${prefix}.${value}`;
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : value;
};

/** Reloads when a device event arrives on the websocket (`private-devices`): a counter to key a reload by. */
export function useLiveDeviceEvents(): number {
  const [tick, setTick] = useState(0);
  useEffect(
    () =>
      realtime.subscribe(RealtimeTopics.devices, (m: WsServerMessage) => {
        if (m.data.type === DeviceEventCreated || m.data.type === 'resync') setTick((n) => n + 1);
      }),
    [],
  );
  return tick;
}

/** Downloads the events of the table's query as CSV: the server streams it (`device_event.export`). */
async function downloadCsv(query: ListQuery, to: string | null) {
  const token = api.store.get()?.token;
  const args: Record<string, string> = { format: 'csv' };
  if (query.search) args.search = query.search;
  const filters = query.filters as unknown[] | undefined;
  if (filters?.length) args.filters = JSON.stringify(filters);
  if (query.match) args.match = query.match;
  if (query.sort) args.sort = query.sort;
  if (to) args.to = to;
  const res = await fetch(api.url('/devices/events/export', args), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!res.ok) throw new Error(String(res.status));
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = 'device-events.csv';
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * /devices/events: what the devices the user sees pushed — identifiers used or refused, doors opened, calls,
 * alarms — newest first, live: a new event reloads the table without a reload of the page. A journal:
 * "jump to day" loads the page at the end of that day.
 */
export function DeviceEventsPage() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('device_events.title'));
  const lang = i18n.resolvedLanguage;
  const tick = useLiveDeviceEvents();
  const columns = useMemo<Partial<Record<string, ColumnOverride<DeviceEvent>>>>(() => {
    void lang;
    return {
      device: {
        render: (r) => r.device?.name ?? r.serial_number,
        text: (r) => r.device?.name ?? r.serial_number,
      },
      kind: {
        render: (r) => eventWord('device_events.kinds', r.kind),
        text: (r) => eventWord('device_events.kinds', r.kind),
      },
      result: {
        render: (r) => eventWord('device_events.results', r.result),
        text: (r) => eventWord('device_events.results', r.result),
      },
      reason: {
        render: (r) => eventWord('device_events.reasons', r.reason),
        text: (r) => eventWord('device_events.reasons', r.reason),
      },
      image: {
        render: (r) =>
          r.image ? (
            <a href={r.image} target="_blank" rel="noreferrer" className="text-sky-700 underline">
              {t('device_events.image')}
            </a>
          ) : (
            ''
          ),
        text: (r) => (r.image ? t('device_events.image') : ''),
      },
    };
  }, [lang, t]);
  const { to, listArgs, toolbar } = useJumpToDay();
  return (
    <ResourceTable<DeviceEvent>
      resource={deviceEventResource}
      listCommand="device_event.list"
      columns={columns}
      storageKey="device-events"
      toolbar={toolbar}
      listArgs={listArgs}
      refreshKey={tick}
      onExport={(query) => void downloadCsv(query, to).catch(() => undefined)}
    />
  );
}
