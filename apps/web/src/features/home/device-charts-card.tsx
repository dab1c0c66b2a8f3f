import { useTranslation } from 'react-i18next';
import { runCommand } from '../../api/client';
import { useFormatDate } from '../../format/use-format-date';
import { useLiveDeviceEvents } from '../device-events/device-events-page';
import { Card, CardState } from './card';
import { HourChart } from './hour-chart';
import { useReply } from './use-reply';

/**
 * The last day in pictures (issue 25 item 11): device events and access decisions per hour, devices online
 * over time, failed tasks per hour and how many fail now — what an operator would rather look at than
 * read. Read again when the websocket brings a device event or status (as the cards beside it).
 */
export function DeviceChartsCard() {
  const { t } = useTranslation();
  const formatDate = useFormatDate();
  const tick = useLiveDeviceEvents();
  const reply = useReply(() => runCommand('device.activity', {}), `activity-${tick}`);
  if (reply === null || reply === 'failed')
    return (
      <Card title={t('home.charts.title')} icon="device" testId="home-charts">
        <CardState state={reply === null ? 'loading' : 'failed'} empty="" />
      </Card>
    );
  const hours = reply.hours.map((h) => /(\d{2}:\d{2})(:\d{2})?$/.exec(formatDate(h.at))?.[1] ?? '');
  const of = (k: 'events' | 'granted' | 'denied' | 'online' | 'failed_tasks') =>
    reply.hours.map((h) => h[k] ?? 0);
  const hint = t('home.charts.hint');
  return (
    <Card
      title={t('home.charts.title')}
      icon="device"
      href="/devices"
      linkText={t('home.devices_all')}
      testId="home-charts"
    >
      <div className="grid gap-1 sm:grid-cols-2 lg:grid-cols-4">
        {reply.hours[0]?.events !== null && (
          <HourChart
            title={t('home.charts.events')}
            hours={hours}
            kind="bars"
            testId="chart-events"
            hint={hint}
            series={[
              {
                key: 'events',
                label: t('home.charts.events'),
                className: 'fill-blue-600',
                values: of('events'),
              },
            ]}
          />
        )}
        {reply.hours[0]?.granted !== null && (
          <HourChart
            title={t('home.charts.decisions')}
            hours={hours}
            kind="bars"
            testId="chart-decisions"
            hint={hint}
            series={[
              {
                key: 'granted',
                label: t('home.charts.granted'),
                className: 'fill-emerald-600',
                values: of('granted'),
              },
              {
                key: 'denied',
                label: t('home.charts.denied'),
                className: 'fill-red-600',
                values: of('denied'),
              },
            ]}
          />
        )}
        <HourChart
          title={t('home.charts.online')}
          hours={hours}
          kind="bars"
          testId="chart-online"
          hint={hint}
          series={[
            {
              key: 'online',
              label: t('home.charts.online_label'),
              className: 'fill-emerald-500',
              values: of('online'),
            },
          ]}
        />
        {reply.failing_tasks !== null && (
          <HourChart
            title={`${t('home.charts.failed')} · ${t('home.charts.failing_now', { count: reply.failing_tasks })}`}
            hours={hours}
            kind="bars"
            testId="chart-failed"
            hint={hint}
            series={[
              {
                key: 'failed',
                label: t('home.charts.failed_label'),
                className: 'fill-red-600',
                values: of('failed_tasks'),
              },
            ]}
          />
        )}
      </div>
    </Card>
  );
}
