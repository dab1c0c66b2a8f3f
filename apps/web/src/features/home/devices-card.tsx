import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { Filter } from '@lintel/core';
import { runCommand } from '../../api/client';
import { formatCount } from '../../resources/format';
import { tableHref } from '../../resources/table-url';
import { focusRing } from '../../ui/button';
import { eventWord, useLiveDeviceEvents } from '../device-events/device-events-page';
import { Card, CardState, EventLine } from './card';
import { useReply } from './use-reply';

/** A figure of the devices card: a count that links into the table showing those rows. */
function DeviceFigure({
  label,
  to,
  read,
  testId,
  alarm,
}: {
  label: string;
  to: string;
  read: () => Promise<number>;
  testId: string;
  alarm?: boolean;
}) {
  const { i18n } = useTranslation();
  const n = useReply(read, testId);
  const value = n === null ? '…' : n === 'failed' ? '—' : formatCount(n, i18n.resolvedLanguage ?? 'en');
  return (
    <Link
      to={to}
      className={`block rounded-md px-3 py-2 hover:bg-blue-50/60 ${focusRing}`}
      data-testid={testId}
    >
      <span className="block text-xs text-slate-500">{label}</span>
      <span
        className={`block text-2xl font-semibold tabular-nums ${alarm && typeof n === 'number' && n > 0 ? 'text-red-700' : 'text-slate-900'}`}
        data-testid={`${testId}-value`}
      >
        {value}
      </span>
    </Link>
  );
}

const statusFilter = (status: 'online' | 'offline'): Filter[] => [
  { field: 'status', rule: 'equals', value: status },
];

/**
 * Devices online and offline, and tasks that failed (spec part 1 §2.1 /home; issue 16 item 11): each a link
 * into the devices table filtered by status, or the task list showing the failed ones.
 */
export function DevicesCard({ tasks, events }: { tasks: boolean; events: boolean }) {
  const { t } = useTranslation();
  const count = (status: 'online' | 'offline') => () =>
    runCommand('device.list', { limit: 1, filters: statusFilter(status) }).then((r) => r.meta.total);
  return (
    <Card
      title={t('home.devices')}
      icon="device"
      href="/devices"
      linkText={t('home.devices_all')}
      testId="home-devices"
    >
      <div className="grid grid-cols-3 gap-1 px-1 py-2">
        <DeviceFigure
          label={t('home.devices_online')}
          to={tableHref('/devices', statusFilter('online'))}
          read={count('online')}
          testId="home-devices-online"
        />
        <DeviceFigure
          label={t('home.devices_offline')}
          to={tableHref('/devices', statusFilter('offline'))}
          read={count('offline')}
          testId="home-devices-offline"
        />
        {tasks && (
          <DeviceFigure
            label={t('home.tasks_failed')}
            to={tableHref('/devices/tasks', [{ field: 'state', rule: 'equals', value: 'error' }])}
            read={() => runCommand('device.tasks', { limit: 1, state: 'error' }).then((r) => r.meta.total)}
            testId="home-tasks-failed"
            alarm
          />
        )}
      </div>
      {events && <LatestDeviceEvents />}
    </Card>
  );
}

/** The latest device events, live (a new one on `private-devices` reads them again); each opens /devices/events. */
function LatestDeviceEvents() {
  const { t } = useTranslation();
  const tick = useLiveDeviceEvents();
  const events = useReply(
    () => runCommand('device_event.list', { limit: 5 }).then((r) => r.data),
    `device_event.list:${tick}`,
  );
  return (
    <div className="border-t border-slate-100" data-testid="home-device-events">
      <h3 className="px-3 pt-2 text-xs font-semibold text-slate-600">{t('home.device_events')}</h3>
      {events === null || events === 'failed' || events.length === 0 ? (
        <CardState
          state={events === null ? 'loading' : events === 'failed' ? 'failed' : 'empty'}
          empty={t('home.device_events_none')}
        />
      ) : (
        <ul className="py-1">
          {events.map((e) => {
            const what = [
              eventWord('device_events.kinds', e.kind),
              e.identifier_number ?? e.number ?? '',
              eventWord('device_events.results', e.result),
            ]
              .filter(Boolean)
              .join(' · ');
            return (
              <EventLine
                key={e.id}
                href={tableHref('/devices/events', [
                  { field: 'device', rule: 'equals', value: String(e.device?.id ?? '') },
                ])}
                title={t('home.device_events_of')}
                mainText={what}
                main={what}
                sub={e.device?.name ?? e.serial_number}
                at={e.created_at}
              />
            );
          })}
        </ul>
      )}
    </div>
  );
}
