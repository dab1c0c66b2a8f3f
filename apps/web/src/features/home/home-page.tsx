import { useEffect, useState, type ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type AuditEvent, type CommandId, type FamilyCommandId } from '@lintel/commands';
import type { Filter, Licence, LicenceList } from '@lintel/core';
import { runCommand, sessionStore } from '../../api/client';
import { useCan } from '../../access/use-can';
import { dataVersionAtom } from '../../commands/execute';
import { defaultDateStyle, formatCount, formatDate, formatDay, formatRelative } from '../../resources/format';
import { tableHref } from '../../resources/table-url';
import { focusRing } from '../../ui/button';
import { Icon, type IconName } from '../../ui/icon';
import { linkClass } from '../../layout/auth-layout';
import { HourChart } from './hour-chart';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { profileAtom, useProjects, useSession } from '../../session/session';
import { auditWord } from '../audit-events/audit-events-page';
import { eventWord, useLiveDeviceEvents } from '../device-events/device-events-page';

function Row({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[9rem_1fr] gap-3 px-3 py-1.5 text-sm even:bg-slate-50/70">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 truncate text-slate-900" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

function Panel({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white" aria-label={title}>
      <header className="flex h-9 items-center justify-between border-b border-slate-200 px-3">
        <h2 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">{title}</h2>
        {action}
      </header>
      <dl className="py-1">{children}</dl>
    </section>
  );
}

const COUNTED: {
  id: string;
  list: FamilyCommandId<'list'>;
  path: string;
  titleKey: 'users.title' | 'groups.title' | 'roles.title';
  icon: IconName;
}[] = [
  { id: 'users', list: 'user.list', path: '/users', titleKey: 'users.title', icon: 'users' },
  { id: 'groups', list: 'group.list', path: '/groups', titleKey: 'groups.title', icon: 'building' },
  { id: 'roles', list: 'role.list', path: '/roles', titleKey: 'roles.title', icon: 'shield' },
];

type Loaded<T> = T | null | 'failed';

/** A command's reply, asked again when data changes (`dataVersionAtom`); null while it loads. */
function useReply<T>(read: () => Promise<T>, key: string, enabled = true): Loaded<T> {
  const version = useAtomValue(dataVersionAtom);
  const [reply, setReply] = useState<Loaded<T>>(null);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    read()
      .then((r) => live && setReply(r))
      .catch(() => live && setReply('failed'));
    return () => {
      live = false;
    };
    // `read` is a new function each render: `key` names what it reads
  }, [key, enabled, version]);
  return reply;
}

function CountCard({ item }: { item: (typeof COUNTED)[number] }) {
  const { t, i18n } = useTranslation();
  const total = useReply(() => runCommand(item.list, { limit: 1 }).then((r) => r.meta.total), item.list);
  return (
    <Link
      to={item.path}
      data-testid={`count-${item.id}`}
      className={`flex items-center gap-3 rounded-lg border border-slate-200 bg-white px-4 py-3 hover:border-blue-300 hover:bg-blue-50/40 ${focusRing}`}
    >
      <span className="flex size-9 items-center justify-center rounded-md bg-slate-100 text-slate-600">
        <Icon name={item.icon} className="size-5" />
      </span>
      <span className="min-w-0">
        <span className="block text-xs text-slate-500">{t(item.titleKey)}</span>
        <span
          className="block text-xl font-semibold text-slate-900 tabular-nums"
          data-testid={`count-${item.id}-value`}
        >
          {total === null
            ? '…'
            : total === 'failed'
              ? '—'
              : formatCount(total, i18n.resolvedLanguage ?? 'en')}
        </span>
      </span>
    </Link>
  );
}

/** A card of the dashboard: a title, a link into the table behind it, and its rows. */
function Card({
  title,
  icon,
  href,
  linkText,
  testId,
  children,
}: {
  title: string;
  icon: IconName;
  href?: string;
  linkText?: string;
  testId: string;
  children: ReactNode;
}) {
  return (
    <section
      className="flex min-w-0 flex-col rounded-lg border border-slate-200 bg-white"
      aria-label={title}
      data-testid={testId}
    >
      <header className="flex h-10 items-center gap-2 border-b border-slate-200 px-3">
        <Icon name={icon} className="size-4 text-slate-500" />
        <h2 className="min-w-0 flex-1 truncate text-sm font-semibold text-slate-800">{title}</h2>
        {href && linkText && (
          <Link to={href} className={`${linkClass} text-xs whitespace-nowrap`} data-testid={`${testId}-all`}>
            {linkText}
          </Link>
        )}
      </header>
      {children}
    </section>
  );
}

/**
 * The last day in pictures (issue 25 item 11): device events and access decisions per hour, devices online
 * over time, failed tasks per hour and how many fail now — what an operator would rather look at than
 * read. Read again when the websocket brings a device event or status (as the cards beside it).
 */
function DeviceChartsCard() {
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

/** What a card shows while it loads, when it failed, and when there is nothing. */
function CardState({ state, empty }: { state: 'loading' | 'failed' | 'empty'; empty: string }) {
  const { t } = useTranslation();
  return (
    <p
      className="px-3 py-4 text-sm text-slate-500"
      role={state === 'failed' ? 'alert' : undefined}
      aria-busy={state === 'loading' || undefined}
    >
      {state === 'loading' ? '…' : state === 'failed' ? t('home.failed') : empty}
    </p>
  );
}

const AUDIT_LIMIT = 6;
const SIGN_IN: Filter = { field: 'action', rule: 'equals', value: 'login' };
/** activity: what people did, without the sign-ins and sign-outs the other card and the log hold */
const ACTIVITY: Filter[] = [
  { field: 'action', rule: 'not_equals', value: 'login' },
  { field: 'action', rule: 'not_equals', value: 'logout' },
];

function useEvents(filters: Filter[], enabled: boolean): Loaded<AuditEvent[]> {
  return useReply(
    () => runCommand('audit_event.list', { limit: AUDIT_LIMIT, filters }).then((r) => r.data),
    JSON.stringify(filters),
    enabled,
  );
}

/** One line of a card: a link into the table on that row; what happened, then by whom (or from where) and when. */
function EventLine({
  href,
  title,
  main,
  mainText,
  sub,
  at,
}: {
  href: string;
  title: string;
  main: ReactNode;
  /** the first line as text: its tooltip when it is cut */
  mainText: string;
  sub: string;
  at: string;
}) {
  const { i18n } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const style = {
    timeFormat: profile?.profile.time_format ?? defaultDateStyle.timeFormat,
    timeZone: profile?.profile.time_zone ?? defaultDateStyle.timeZone,
  };
  return (
    <li>
      <Link
        to={href}
        aria-description={title}
        className={`block px-3 py-1.5 text-sm hover:bg-blue-50/60 ${focusRing}`}
      >
        <span className="block truncate text-slate-900" title={mainText}>
          {main}
        </span>
        <span className="flex min-w-0 gap-1.5 text-xs text-slate-500">
          <span className="truncate">{sub}</span>
          <span aria-hidden="true">·</span>
          <time
            dateTime={at}
            title={formatDate(at, style)}
            className="shrink-0 whitespace-nowrap tabular-nums"
          >
            {formatRelative(at, i18n.resolvedLanguage ?? 'en')}
          </time>
        </span>
      </Link>
    </li>
  );
}

function SignInsCard() {
  const { t } = useTranslation();
  const events = useEvents([SIGN_IN], true);
  return (
    <Card
      title={t('home.sign_ins')}
      icon="user"
      href={tableHref('/audit-events', [SIGN_IN])}
      linkText={t('home.sign_ins_all')}
      testId="home-sign-ins"
    >
      {events === null || events === 'failed' || events.length === 0 ? (
        <CardState
          state={events === null ? 'loading' : events === 'failed' ? 'failed' : 'empty'}
          empty={t('home.sign_ins_none')}
        />
      ) : (
        <ul className="py-1">
          {events.map((e) => (
            <EventLine
              key={e.id}
              // this person's sign-ins (the event names the account)
              href={tableHref(
                '/audit-events',
                e.entity_id
                  ? [SIGN_IN, { field: 'entity_id', rule: 'equals', value: e.entity_id }]
                  : [SIGN_IN],
              )}
              title={t('home.sign_ins_of')}
              main={<span className="font-medium">{e.entity_name ?? e.user?.name ?? t('home.none')}</span>}
              mainText={e.entity_name ?? e.user?.name ?? t('home.none')}
              sub={e.ip ?? t('home.none')}
              at={e.created_at}
            />
          ))}
        </ul>
      )}
    </Card>
  );
}

function ActivityCard() {
  const { t } = useTranslation();
  const events = useEvents(ACTIVITY, true);
  return (
    <Card
      title={t('home.activity')}
      icon="list"
      href={tableHref('/audit-events', ACTIVITY)}
      linkText={t('home.activity_all')}
      testId="home-activity"
    >
      {events === null || events === 'failed' || events.length === 0 ? (
        <CardState
          state={events === null ? 'loading' : events === 'failed' ? 'failed' : 'empty'}
          empty={t('home.activity_none')}
        />
      ) : (
        <ul className="py-1">
          {events.map((e) => {
            // the row's history when the event names one, else every event of that kind
            const filters: Filter[] =
              e.entity && e.entity_id
                ? [
                    { field: 'entity', rule: 'equals', value: e.entity },
                    { field: 'entity_id', rule: 'equals', value: e.entity_id },
                  ]
                : [{ field: 'action', rule: 'equals', value: e.action }];
            return (
              <EventLine
                key={e.id}
                href={tableHref('/audit-events', filters)}
                title={t(e.entity && e.entity_id ? 'home.history_of' : 'home.events_like')}
                mainText={[
                  auditWord('audit.actions', e.action),
                  e.entity ? auditWord('audit.entities', e.entity) : '',
                  e.entity_name ?? '',
                ]
                  .filter(Boolean)
                  .join(' · ')}
                main={
                  <>
                    {auditWord('audit.actions', e.action)}
                    {e.entity && (
                      <span className="text-slate-500"> · {auditWord('audit.entities', e.entity)} </span>
                    )}
                    {e.entity_name && <span className="font-medium">{e.entity_name}</span>}
                  </>
                }
                sub={e.user?.name || t('home.system')}
                at={e.created_at}
              />
            );
          })}
        </ul>
      )}
    </Card>
  );
}

type LicenceState = Licence['state'] | 'none';

/** The licence that decides: the one in force that ends last, else the reason none is in force. */
export function licenceSummary(list: LicenceList): {
  state: LicenceState;
  licence: Licence | null;
  daysLeft: number | null;
} {
  const inForce = list.in_force ? (list.items.find((l) => l.id === list.in_force!.id) ?? null) : null;
  if (inForce) return { state: inForce.state, licence: inForce, daysLeft: list.in_force!.days_left };
  for (const state of ['not_started', 'expired', 'disabled'] as const) {
    const l = list.items.find((x) => x.state === state);
    if (l) return { state, licence: l, daysLeft: l.days_left };
  }
  return { state: 'none', licence: null, daysLeft: null };
}

const STATE_STYLE: Record<LicenceState, string> = {
  active: 'bg-green-50 text-green-800 ring-green-200',
  ending: 'bg-amber-50 text-amber-900 ring-amber-200',
  not_started: 'bg-slate-100 text-slate-700 ring-slate-200',
  expired: 'bg-red-50 text-red-800 ring-red-200',
  disabled: 'bg-slate-100 text-slate-700 ring-slate-200',
  superseded: 'bg-slate-100 text-slate-700 ring-slate-200',
  none: 'bg-red-50 text-red-800 ring-red-200',
};

function LicenceCard() {
  const { t } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const list = useReply(() => runCommand('licence.list', {}), 'licence.list');
  const style = {
    timeFormat: profile?.profile.time_format ?? defaultDateStyle.timeFormat,
    timeZone: profile?.profile.time_zone ?? defaultDateStyle.timeZone,
  };
  let body: ReactNode;
  if (list === null || list === 'failed')
    body = <CardState state={list === null ? 'loading' : 'failed'} empty="" />;
  else {
    const { state, licence, daysLeft } = licenceSummary(list);
    const inForce = state === 'active' || state === 'ending';
    body = (
      <div className="space-y-3 px-3 py-3 text-sm">
        <div className="flex items-center gap-2">
          <span
            className={`rounded-full px-2 py-0.5 text-xs font-semibold ring-1 ${STATE_STYLE[state]}`}
            data-testid="home-licence-state"
          >
            {t(`home.licence_state.${state}`)}
          </span>
          {list.evaluation && <span className="text-xs text-slate-600">{t('home.licence_evaluation')}</span>}
        </div>
        {inForce ? (
          <dl className="grid grid-cols-2 gap-3">
            <div>
              <dt className="text-xs text-slate-500">{t('home.licence_days_left')}</dt>
              <dd
                className={`text-2xl font-semibold tabular-nums ${state === 'ending' ? 'text-amber-800' : 'text-slate-900'}`}
                data-testid="home-licence-days"
              >
                {daysLeft === null ? '∞' : Math.max(daysLeft, 0)}
              </dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">{t('home.licence_valid_to')}</dt>
              <dd className="pt-1.5 text-slate-900 tabular-nums">
                {licence?.valid_to ? formatDay(licence.valid_to, style) : t('home.licence_no_end')}
              </dd>
            </div>
            {licence?.issuer && (
              <div className="col-span-2">
                <dt className="text-xs text-slate-500">{t('home.licence_issuer')}</dt>
                <dd className="truncate text-slate-900">{licence.issuer}</dd>
              </div>
            )}
          </dl>
        ) : (
          <p className="text-slate-700">{t('home.licence_off')}</p>
        )}
      </div>
    );
  }
  return (
    <Card
      title={t('home.licence')}
      icon="key"
      href="/licenses"
      linkText={t('home.licence_open')}
      testId="home-licence"
    >
      {body}
    </Card>
  );
}

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
function DevicesCard({ tasks, events }: { tasks: boolean; events: boolean }) {
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

const gatesOf = (id: CommandId) => getCommand(id).gates;

/**
 * /home: the dashboard: what an administrator checks first — the counts, who signed in lately, what
 * changed, and the licence's state and days left; each card links into the table behind it, filtered, and
 * is shown only to those whose permissions (and licence) allow its command. Then who is signed in, and where.
 */
export function HomePage() {
  const { t } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const session = useSession();
  const projects = useProjects();
  const can = useCan();
  usePageTitle(t('home.title'));
  const counted = COUNTED.filter((c) => can(getCommand(c.list).gates).can);
  const audit = can(gatesOf('audit_event.list')).can;
  const licence = can(gatesOf('licence.list')).can;
  const devices = can(gatesOf('device.list')).can;
  const deviceTasks = can(gatesOf('device.tasks')).can;
  const deviceEvents = can(gatesOf('device_event.list')).can;
  if (!profile || !session) return null;

  const many = (projects?.sessions.length ?? 0) > 1;
  const none = <span className="text-slate-400">{t('home.none')}</span>;

  return (
    <div className="max-w-6xl space-y-4">
      <p className="text-sm text-slate-600" data-testid="home-greeting">
        {t('home.signed_in_as')} <strong className="font-semibold text-slate-900">{profile.name}</strong>{' '}
        <span className="text-slate-500">({profile.login})</span> · {t('home.in_project')}{' '}
        <strong className="font-semibold text-slate-900">{profile.project.name}</strong>
      </p>
      {counted.length > 0 && (
        <div className="grid gap-3 sm:grid-cols-3" data-testid="home-counts">
          {counted.map((c) => (
            <CountCard key={c.id} item={c} />
          ))}
        </div>
      )}
      {(audit || licence || devices) && (
        <div className="grid gap-4 lg:grid-cols-3" data-testid="home-watch">
          {audit && <SignInsCard />}
          {audit && <ActivityCard />}
          {licence && <LicenceCard />}
          {devices && <DevicesCard tasks={deviceTasks} events={deviceEvents} />}
        </div>
      )}
      {devices && <DeviceChartsCard />}
      <div className="grid items-start gap-4 lg:grid-cols-2">
        <Panel title={t('home.account')}>
          <Row label={t('home.name')} testId="home-name">
            {profile.name}
          </Row>
          <Row label={t('home.login')} testId="home-login">
            {profile.login}
          </Row>
          <Row label={t('home.email')}>{profile.email ?? none}</Row>
          <Row label={t('home.role')} testId="home-role">
            {profile.role.name}
          </Row>
          <Row label={t('home.groups')}>
            {profile.domains.length ? profile.domains.map((d) => d.name).join(', ') : none}
          </Row>
          <Row label={t('home.language')}>{t(`language.${profile.locale}`)}</Row>
        </Panel>
        <Panel
          title={t('home.project')}
          action={
            many && (
              <Link to="/choose-project" className={`${linkClass} text-xs`}>
                {t('user_menu.switch_project')}
              </Link>
            )
          }
        >
          <Row label={t('home.project_name')} testId="home-project">
            {profile.project.name}
          </Row>
          <Row label={t('home.project_uid')}>
            <code className="font-mono text-xs">{profile.project.uid}</code>
          </Row>
          <Row label={t('home.project_description')}>{profile.project.description || none}</Row>
          <Row label={t('home.session_kept')}>
            {sessionStore.remember === 'infinity' ? t('home.kept_infinity') : t('home.kept_session')}
          </Row>
        </Panel>
      </div>
    </div>
  );
}
