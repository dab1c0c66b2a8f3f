import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { deviceEventFields, type DeviceEvent } from '@lintel/commands';
import { RealtimeTopics } from '@lintel/core';
import { codeWord, JournalPage, useLiveJournal, type Journal } from '../../resources/journal-page';
import type { ColumnOverride } from '../../resources/table-columns';

/** The event type the server sends on `private-devices` for each stored event (events/define.ts). */
export const DeviceEventCreated = 'DeviceEventCreatedEvent';

/**
 * /devices/events: what the devices the user sees pushed — identifiers used or refused, doors opened, calls,
 * alarms — newest first, live: a new event reloads the table without a reload of the page.
 */
const deviceJournal: Journal = {
  resource: {
    noun: 'device_event',
    fields: deviceEventFields,
    refs: { device: { family: 'device' }, domain: { family: 'group' } },
  },
  listCommand: 'device_event.list',
  title: 'device_events.title',
  storageKey: 'device-events',
  live: { topic: RealtimeTopics.devices, eventType: DeviceEventCreated },
  export: { path: '/devices/events/export', file: 'device-events.csv' },
};

/** A code of the events (`device_events.kinds.alarm`) in words of the interface language, else the code. */
export const eventWord = (
  prefix: 'device_events.kinds' | 'device_events.results' | 'device_events.reasons',
  value: string | null,
) => codeWord(`${prefix}.${value}`, value);

/** Reloads when a device event arrives on the websocket (`private-devices`): a counter to key a reload by. */
export const useLiveDeviceEvents = (): number => useLiveJournal(deviceJournal.live);

export function DeviceEventsPage() {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage;
  const columns = useMemo<Partial<Record<string, ColumnOverride<DeviceEvent>>>>(() => {
    void lang;
    const kind = (r: DeviceEvent) => eventWord('device_events.kinds', r.kind);
    const result = (r: DeviceEvent) => eventWord('device_events.results', r.result);
    const reason = (r: DeviceEvent) => eventWord('device_events.reasons', r.reason);
    return {
      device: {
        render: (r) => r.device?.name ?? r.serial_number,
        text: (r) => r.device?.name ?? r.serial_number,
      },
      kind: { render: kind, text: kind },
      result: { render: result, text: result },
      reason: { render: reason, text: reason },
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
  return <JournalPage<DeviceEvent> journal={deviceJournal} columns={columns} />;
}
