import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, type CallHistoryItem, type Door } from '@lintel/commands';
import { callDuration, Dialer, groupByDay, groupContacts, planCall, recentOf } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { useShortcut } from '../../keys/shortcuts';
import { usePageAction } from '../../palette/page-actions';
import { focusRing } from '../../ui/button';
import { Icon, Spinner } from '../../ui/icon';
import { i18next } from '../../i18n';
import { chosenDoorAtom, dialerTabAtom, focusTabAtom, usePhoneState, type DialerTab } from './dialer-state';

const tr = (key: string, options?: Record<string, unknown>) =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, options);

/** Which of the dialer's tabs this user may use: each reads through a command with its own gates. */
export function useDialerTabs(): DialerTab[] {
  const can = useCan();
  return [
    'keypad',
    ...(can(getCommand('sip_number.list').gates).can ? (['contacts'] as const) : []),
    ...(can(getCommand('call_history.list').gates).can ? (['recents'] as const) : []),
    ...(can(getCommand('door.list').gates).can ? (['doors'] as const) : []),
    ...(can(getCommand('call.interception').gates).can ? (['interception'] as const) : []),
  ];
}

/** Places a voice call to `number` from a list (the keypad's rules: a number, not one's own). */
function useDial(): (number: string) => void {
  const { phone, calls } = usePhoneState();
  return (number: string) => {
    const plan = planCall({ entry: number, video: false, ownNumber: calls.ownNumber, lastNumber: null });
    if (!plan.ok) {
      pushAlert('error', tr(`errors:http.${plan.code}`));
      return;
    }
    phone?.call({ type: 'dial', speechId: crypto.randomUUID(), number: plan.number, video: false });
  };
}

/** The tabs' strip: buttons reached by Tab, the chosen one pressed. */
export function DialerTabStrip({ tabs }: { tabs: DialerTab[] }) {
  const { t } = useTranslation();
  const [tab, setTab] = useAtom(dialerTabAtom);
  return (
    <div role="tablist" aria-label={t('dialer.tabs.label')} className="flex gap-1">
      {tabs.map((k) => (
        <button
          key={k}
          type="button"
          role="tab"
          aria-selected={tab === k}
          data-testid={`dialer-tab-${k}`}
          onClick={() => setTab(k)}
          className={`flex-1 rounded-md px-1.5 py-1 text-xs font-medium ${tab === k ? 'bg-blue-700 text-white' : 'text-slate-700 hover:bg-slate-100'} ${focusRing}`}
        >
          {t(`dialer.tabs.${k}`)}
        </button>
      ))}
    </div>
  );
}

/** A search field that takes the focus when the palette asks for its tab. */
export function SearchField({
  value,
  onChange,
  label,
  testId,
  onFocusChange,
  controls,
  active,
}: {
  value: string;
  onChange: (v: string) => void;
  label: string;
  testId: string;
  onFocusChange: (focused: boolean) => void;
  controls: string;
  active?: string;
}) {
  const ref = useRef<HTMLInputElement>(null);
  const focusRequest = useAtomValue(focusTabAtom);
  useEffect(() => {
    if (focusRequest) ref.current?.focus();
  }, [focusRequest]);
  return (
    <div className="relative">
      <Icon name="search" className="pointer-events-none absolute top-2 left-2 size-4 text-slate-400" />
      <input
        ref={ref}
        type="search"
        aria-controls={controls}
        aria-describedby={active}
        aria-label={label}
        placeholder={label}
        value={value}
        autoComplete="off"
        data-testid={testId}
        onChange={(e) => onChange(e.target.value)}
        onFocus={() => onFocusChange(true)}
        onBlur={() => onFocusChange(false)}
        className="h-8 w-full rounded-md border border-slate-300 bg-white pr-2 pl-7 text-sm text-slate-900 placeholder:text-slate-400 focus:border-blue-600 focus:ring-1 focus:ring-blue-600 focus:outline-none"
      />
    </div>
  );
}

/** Loads `load(search)` again 200 ms after the search changes (and on `refresh`), the last answer wins. */
function useSearched<T>(
  load: (search: string, signal: AbortSignal) => Promise<T>,
  search: string,
  refresh = 0,
) {
  const [state, setState] = useState<{ data: T | null; loading: boolean }>({ data: null, loading: true });
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    const timer = window.setTimeout(() => {
      load(search.trim(), ctl.signal)
        .then((data) => !ctl.signal.aborted && setState({ data, loading: false }))
        .catch((err: unknown) => {
          if (ctl.signal.aborted) return;
          setState((s) => ({ ...s, loading: false }));
          pushAlert('error', describeError(err).message);
        });
    }, 200);
    return () => {
      ctl.abort();
      window.clearTimeout(timer);
    };
    // `load` is a module-level function of each tab
  }, [search, refresh]);
  return state;
}

function RowButton({
  label,
  icon,
  onClick,
  testId,
  disabled,
  tone = 'plain',
}: {
  label: string;
  icon: 'phone' | 'door';
  onClick: () => void;
  testId: string;
  disabled?: boolean;
  tone?: 'plain' | 'call';
}) {
  return (
    <button
      type="button"
      tabIndex={-1}
      aria-label={label}
      title={label}
      disabled={disabled}
      data-testid={testId}
      onClick={(e) => {
        e.stopPropagation();
        onClick();
      }}
      className={`flex size-7 shrink-0 items-center justify-center rounded-md border disabled:opacity-40 ${tone === 'call' ? 'border-green-800/40 bg-green-700 text-white hover:bg-green-800' : 'border-slate-300 bg-white text-slate-700 hover:bg-slate-50'} ${focusRing}`}
    >
      <Icon name={icon} className="size-3.5" />
    </button>
  );
}

const loadDoors = (search: string, signal: AbortSignal) =>
  runCommand('door.list', { limit: 50, ...(search ? { search } : {}) }, { signal });

/**
 * Door management (spec part 1 §2.5): pick a door (search by name, serial or SIP number), open it through
 * the server (`door.open`), or call its SIP number. Down and Up choose in the search field, Enter opens the
 * chosen door, Shift+Enter calls it; the palette offers both for the chosen door.
 */
export function DoorsTab() {
  const { t } = useTranslation();
  const { registration } = usePhoneState();
  const dial = useDial();
  const [search, setSearch] = useState('');
  const [focused, setFocused] = useState(false);
  const [at, setAt] = useState(0);
  const [opening, setOpening] = useState<number | null>(null);
  const setChosen = useSetAtom(chosenDoorAtom);
  const { data, loading } = useSearched(loadDoors, search);
  const doors = data?.data ?? [];
  const chosen: Door | undefined = doors[Math.min(at, doors.length - 1)];
  useEffect(() => setAt(0), [search]);
  useEffect(() => {
    setChosen(
      chosen ? { id: chosen.id, name: chosen.name, number: chosen.sip_number?.number ?? null } : null,
    );
  }, [chosen?.id, chosen?.name, chosen?.sip_number?.number, setChosen]);
  useEffect(() => () => setChosen(null), [setChosen]);

  const open = async (door: Door | undefined) => {
    if (!door || opening !== null) return;
    setOpening(door.id);
    try {
      await runCommand('door.open', { id: door.id, lock: 1 });
      pushAlert('success', t('dialer.doors.opened', { name: door.name }));
    } catch (err) {
      pushAlert('error', describeError(err, 'door.open').message);
    } finally {
      setOpening(null);
    }
  };
  const call = (door: Door | undefined) => {
    if (door?.sip_number) dial(door.sip_number.number);
  };
  const registered = registration.state === 'registered';

  const opts = { inInputs: true, enabled: focused } as const;
  const move = (by: number) => setAt((i) => Math.max(0, Math.min(doors.length - 1, i + by)));
  useShortcut('down', () => move(1), { ...opts, labelKey: 'dialer.keys.door_next' });
  useShortcut('up', () => move(-1), { ...opts, labelKey: 'dialer.keys.door_previous' });
  useShortcut('enter', () => void open(chosen), { ...opts, labelKey: 'dialer.keys.door_open' });
  useShortcut('shift+enter', () => call(chosen), { ...opts, labelKey: 'dialer.keys.door_call' });
  usePageAction(
    chosen
      ? {
          id: 'dialer.door_open_chosen',
          labelKey: 'dialer.doors.open_chosen',
          icon: 'door',
          group: 'dialer',
          run: () => void open(chosen),
        }
      : null,
  );
  usePageAction(
    chosen?.sip_number && registered
      ? {
          id: 'dialer.door_call_chosen',
          labelKey: 'dialer.doors.call_chosen',
          icon: 'phone-out',
          group: 'dialer',
          run: () => call(chosen),
        }
      : null,
  );

  return (
    <div className="space-y-2" data-testid="dialer-doors">
      <SearchField
        value={search}
        onChange={setSearch}
        label={t('dialer.doors.search')}
        testId="doors-search"
        onFocusChange={setFocused}
        controls="dialer-doors-list"
        active={chosen ? `dialer-door-${chosen.id}` : undefined}
      />
      <p className="flex items-center gap-1.5 text-xs text-slate-600" data-testid="doors-count">
        {loading && <Spinner className="size-3" />}
        {t('dialer.doors.count', { shown: doors.length, total: data?.meta.total ?? 0 })}
      </p>
      {!loading && doors.length === 0 ? (
        <p className="rounded-md border border-dashed border-slate-300 px-3 py-3 text-center text-sm text-slate-500">
          {t('dialer.doors.none')}
        </p>
      ) : (
        <ul id="dialer-doors-list" aria-label={t('dialer.tabs.doors')} className="space-y-1">
          {doors.map((d, i) => (
            <li
              key={d.id}
              id={`dialer-door-${d.id}`}
              aria-current={d.id === chosen?.id || undefined}
              data-testid="door-row"
              data-id={d.id}
              onClick={() => setAt(i)}
              className={`flex items-center gap-2 rounded-md border px-2 py-1.5 text-sm ${d.id === chosen?.id ? 'border-blue-600 bg-blue-50' : 'border-slate-200 bg-white'}`}
            >
              <span
                aria-label={t(`dialer.doors.status.${d.status}`)}
                title={t(`dialer.doors.status.${d.status}`)}
                className={`size-2 shrink-0 rounded-full ${d.status === 'online' ? 'bg-green-600' : 'bg-slate-400'}`}
              />
              <span className="min-w-0 flex-1">
                <span className="block truncate font-medium text-slate-900">{d.name}</span>
                <span className="block truncate text-xs text-slate-600">
                  {d.sip_number ? (
                    <span className="font-mono">{d.sip_number.number}</span>
                  ) : (
                    t('dialer.doors.no_number')
                  )}
                  {d.domain ? ` · ${d.domain.name}` : ''}
                </span>
              </span>
              <RowButton
                icon="door"
                label={t('dialer.doors.open', { name: d.name })}
                testId="door-open"
                disabled={opening !== null}
                onClick={() => void open(d)}
              />
              <RowButton
                icon="phone"
                tone="call"
                label={t('dialer.doors.call', { name: d.name })}
                testId="door-call"
                disabled={!d.sip_number || !registered}
                onClick={() => call(d)}
              />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

interface Contact {
  id: number;
  name: string;
  number: string;
}

const loadContacts = async (search: string, signal: AbortSignal) => {
  const page = await runCommand(
    'sip_number.list',
    {
      limit: 1000,
      sort: 'name',
      filters: [{ field: 'is_active', rule: 'equals', value: true }],
      ...(search ? { search } : {}),
    },
    { signal },
  );
  return {
    contacts: page.data.map((n): Contact => ({ id: n.id, name: n.name, number: n.number })),
    total: page.meta.total,
  };
};

/**
 * Contacts (spec part 1 §2.5): the project's active SIP numbers the user may see, their count, search,
 * refresh, grouped by the first letter of the name ("?" when none), each with a call button. Down and Up
 * choose in the search field, Enter calls.
 */
export function ContactsTab() {
  const { t, i18n } = useTranslation();
  const dial = useDial();
  const { registration, calls } = usePhoneState();
  const [search, setSearch] = useState('');
  const [refresh, setRefresh] = useState(0);
  const [focused, setFocused] = useState(false);
  const [at, setAt] = useState(0);
  const { data, loading } = useSearched(loadContacts, search, refresh);
  // the user's own number is no contact of his (calling it is refused)
  const mine = (data?.contacts ?? []).filter((c) => c.number === calls.ownNumber).length;
  const groups = groupContacts(
    (data?.contacts ?? []).filter((c) => c.number !== calls.ownNumber),
    i18n.resolvedLanguage ?? 'en',
  );
  const flat = groups.flatMap((g) => g.contacts);
  const chosen = flat[Math.min(at, flat.length - 1)];
  useEffect(() => setAt(0), [search]);
  const registered = registration.state === 'registered';

  const opts = { inInputs: true, enabled: focused } as const;
  const move = (by: number) => setAt((i) => Math.max(0, Math.min(flat.length - 1, i + by)));
  useShortcut('down', () => move(1), { ...opts, labelKey: 'dialer.keys.contact_next' });
  useShortcut('up', () => move(-1), { ...opts, labelKey: 'dialer.keys.contact_previous' });
  useShortcut('enter', () => chosen && registered && dial(chosen.number), {
    ...opts,
    labelKey: 'dialer.keys.contact_call',
  });
  usePageAction({
    id: 'dialer.contacts_refresh',
    labelKey: 'dialer.contacts.refresh',
    icon: 'refresh',
    group: 'dialer',
    run: () => setRefresh((n) => n + 1),
  });

  return (
    <div className="space-y-2" data-testid="dialer-contacts">
      <div className="flex gap-1.5">
        <div className="flex-1">
          <SearchField
            value={search}
            onChange={setSearch}
            label={t('dialer.contacts.search')}
            testId="contacts-search"
            onFocusChange={setFocused}
            controls="dialer-contacts-list"
            active={chosen ? `dialer-contact-${chosen.id}` : undefined}
          />
        </div>
        <button
          type="button"
          aria-label={t('dialer.contacts.refresh')}
          title={t('dialer.contacts.refresh')}
          data-testid="contacts-refresh"
          onClick={() => setRefresh((n) => n + 1)}
          className={`flex size-8 items-center justify-center rounded-md border border-slate-300 bg-white text-slate-700 hover:bg-slate-50 ${focusRing}`}
        >
          <Icon name="refresh" className="size-4" />
        </button>
      </div>
      <p className="flex items-center gap-1.5 text-xs text-slate-600" data-testid="contacts-count">
        {loading && <Spinner className="size-3" />}
        {t('dialer.contacts.count', { count: Math.max(0, (data?.total ?? 0) - mine) })}
      </p>
      {!loading && flat.length === 0 ? (
        <p className="rounded-md border border-dashed border-slate-300 px-3 py-3 text-center text-sm text-slate-500">
          {t('dialer.contacts.none')}
        </p>
      ) : (
        <div id="dialer-contacts-list" aria-label={t('dialer.tabs.contacts')}>
          {groups.map((g) => (
            <div
              key={g.letter}
              role="group"
              aria-label={g.letter}
              data-testid="contact-group"
              data-letter={g.letter}
            >
              <div className="px-1 pt-1.5 pb-0.5 text-[11px] font-semibold text-slate-500">{g.letter}</div>
              {g.contacts.map((c) => (
                <div
                  key={c.id}
                  id={`dialer-contact-${c.id}`}
                  aria-current={c.id === chosen?.id || undefined}
                  data-testid="contact-row"
                  data-number={c.number}
                  onClick={() => setAt(flat.indexOf(c))}
                  className={`flex items-center gap-2 rounded-md px-2 py-1 text-sm ${c.id === chosen?.id ? 'bg-blue-50 ring-1 ring-blue-600' : ''}`}
                >
                  <span className="min-w-0 flex-1 truncate text-slate-900">{c.name || '—'}</span>
                  <span className="font-mono text-xs text-slate-600">{c.number}</span>
                  <RowButton
                    icon="phone"
                    tone="call"
                    label={t('dialer.contacts.call', { name: c.name || c.number })}
                    testId="contact-call"
                    disabled={!registered}
                    onClick={() => dial(c.number)}
                  />
                </div>
              ))}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

type Recent = ReturnType<typeof recentOf<CallHistoryItem>>;

/**
 * Recents (spec part 1 §2.5, part 2 §7 "Call history query: page size 50, filter from_number or to_number
 * equal to the user's number, match any"): grouped by day in the user's locale, with the direction and
 * result icon, duration, time and a call button; the next 50 on demand.
 */
export function RecentsTab() {
  const { t, i18n } = useTranslation();
  const dial = useDial();
  const { registration, calls } = usePhoneState();
  const own = calls.ownNumber;
  const [rows, setRows] = useState<Recent[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [refresh, setRefresh] = useState(0);
  const lang = i18n.resolvedLanguage ?? 'en';

  const load = async (cursor: string | null, signal?: AbortSignal) => {
    setLoading(true);
    try {
      const page = await runCommand(
        'call_history.list',
        {
          limit: Dialer.historyPageSize,
          match: 'any',
          filters: [
            { field: 'from_number', rule: 'equals', value: own },
            { field: 'to_number', rule: 'equals', value: own },
          ],
          ...(cursor ? { cursor } : {}),
        },
        { signal },
      );
      if (signal?.aborted) return;
      const more = page.data.map((r) => recentOf(r, own));
      setRows((old) => (cursor ? [...old, ...more] : more));
      setNext(page.meta.next);
    } catch (err) {
      if (!signal?.aborted) pushAlert('error', describeError(err).message);
    } finally {
      if (!signal?.aborted) setLoading(false);
    }
  };
  useEffect(() => {
    const ctl = new AbortController();
    void load(null, ctl.signal);
    return () => ctl.abort();
  }, [own, refresh]);
  usePageAction({
    id: 'dialer.recents_refresh',
    labelKey: 'dialer.recents.refresh',
    icon: 'refresh',
    group: 'dialer',
    run: () => setRefresh((n) => n + 1),
  });

  const dayFormat = new Intl.DateTimeFormat(lang, { dateStyle: 'long' });
  const timeFormat = new Intl.DateTimeFormat(lang, { timeStyle: 'short' });
  const registered = registration.state === 'registered';
  let body: ReactNode;
  if (!loading && rows.length === 0)
    body = (
      <p className="rounded-md border border-dashed border-slate-300 px-3 py-3 text-center text-sm text-slate-500">
        {t('dialer.recents.none')}
      </p>
    );
  else
    body = groupByDay(rows).map((g) => (
      <section
        key={g.day}
        aria-label={dayFormat.format(new Date(g.rows[0]!.created_at))}
        data-testid="recent-day"
      >
        <h4
          className="px-1 pt-1.5 pb-0.5 text-[11px] font-semibold text-slate-500"
          data-testid="recent-day-title"
        >
          {dayFormat.format(new Date(g.rows[0]!.created_at))}
        </h4>
        <ul>
          {g.rows.map((r) => {
            const missed = r.status !== 'answered';
            const what = `${t(`call_history.directions.${r.way}`)}, ${t(`call_history.results.${r.status}`)}`;
            return (
              <li
                key={r.id}
                data-testid="recent-row"
                data-number={r.other.number}
                data-way={r.way}
                data-status={r.status}
                className="flex items-center gap-2 rounded-md px-2 py-1 text-sm"
              >
                <span role="img" aria-label={what} title={what}>
                  <Icon
                    name={r.way === 'incoming' ? 'phone-in' : 'phone-out'}
                    className={`size-4 ${missed ? 'text-red-700' : 'text-green-700'}`}
                  />
                </span>
                <span className="min-w-0 flex-1">
                  <span className="block truncate text-slate-900">{r.other.name ?? r.other.number}</span>
                  <span className="block truncate text-xs text-slate-600">
                    <span className="font-mono">{r.other.number}</span> ·{' '}
                    {t(`call_history.results.${r.status}`)}
                  </span>
                </span>
                <span className="text-right text-xs text-slate-600 tabular-nums">
                  <span className="block" data-testid="recent-time">
                    {timeFormat.format(new Date(r.created_at))}
                  </span>
                  <span className="block font-mono" data-testid="recent-duration">
                    {callDuration(r.duration)}
                  </span>
                </span>
                <button
                  type="button"
                  aria-label={t('dialer.recents.call', { number: r.other.number })}
                  title={t('dialer.recents.call', { number: r.other.number })}
                  disabled={!registered}
                  data-testid="recent-call"
                  onClick={() => dial(r.other.number)}
                  className={`flex size-7 shrink-0 items-center justify-center rounded-md border border-green-800/40 bg-green-700 text-white hover:bg-green-800 disabled:opacity-40 ${focusRing}`}
                >
                  <Icon name="phone" className="size-3.5" />
                </button>
              </li>
            );
          })}
        </ul>
      </section>
    ));
  return (
    <div className="space-y-1" data-testid="dialer-recents">
      {body}
      {next && (
        <button
          type="button"
          disabled={loading}
          data-testid="recents-more"
          onClick={() => void load(next)}
          className={`w-full rounded-md border border-slate-300 bg-white py-1 text-xs text-slate-700 hover:bg-slate-50 ${focusRing}`}
        >
          {t('dialer.recents.more', { count: Dialer.historyPageSize })}
        </button>
      )}
      {loading && <Spinner className="mx-auto size-4" />}
    </div>
  );
}
