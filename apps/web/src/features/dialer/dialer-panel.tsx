import { useEffect, useRef, useState } from 'react';
import { useAtom, useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import {
  Dialer,
  dialerButton,
  isRingingIncoming,
  liveCalls,
  planCall,
  pressKey,
  showsVideo,
  type DialerCall,
  type KeypadKey,
} from '@lintel/core';
import { i18next } from '../../i18n';
import { pushAlert } from '../../alerts/alerts';
import { useShortcut } from '../../keys/shortcuts';
import { Button, focusRing } from '../../ui/button';
import { Icon, Spinner, type IconName } from '../../ui/icon';
import {
  callActions,
  currentCall,
  dialerOpenAtom,
  dialerTabAtom,
  focusEntryAtom,
  usePhoneState,
} from './dialer-state';
import { ContactsTab, DialerTabStrip, DoorsTab, RecentsTab, useDialerTabs } from './dialer-directory';
import { InterceptionTab } from './dialer-interception';

const COLOURS = {
  default: 'text-slate-600 hover:bg-slate-100',
  success: 'text-green-700 bg-green-50 hover:bg-green-100',
  warning: 'text-amber-700 bg-amber-50 hover:bg-amber-100',
  error: 'text-red-700 bg-red-50 hover:bg-red-100',
} as const;

const ICONS: Record<string, IconName> = {
  phone: 'phone',
  phone_locked: 'phone-locked',
  phone_disabled: 'phone-off',
};

/**
 * The dialer button of the top bar (spec part 1 §2.5): loading while registering or unregistering, green when
 * registered, warning colour with a locked phone when unregistered, error colour with a disabled phone on an
 * error, a locked phone on an invalid registration; it pulses while a call rings.
 */
export function DialerButton() {
  const { t } = useTranslation();
  const { phone, registration, calls } = usePhoneState();
  const [open, setOpen] = useAtom(dialerOpenAtom);
  if (!phone) return null;
  const look = dialerButton(registration.state);
  const live = liveCalls(calls).length;
  return (
    <button
      type="button"
      onClick={() => setOpen(!open)}
      data-testid="dialer-button"
      data-state={registration.state}
      data-ringing={calls.ringing || undefined}
      aria-pressed={open}
      aria-label={`${t('dialer.title')}: ${t(`dialer.registration.${registration.state}`)}`}
      title={`${t('dialer.title')}: ${t(`dialer.registration.${registration.state}`)} (Alt+P)`}
      className={`relative flex size-8 items-center justify-center rounded-md ${COLOURS[look.colour]} ${calls.ringing ? 'animate-pulse ring-2 ring-green-500' : ''} ${focusRing}`}
    >
      {look.icon === 'loading' ? <Spinner className="size-4" /> : <Icon name={ICONS[look.icon]!} />}
      {live > 0 && (
        <span className="absolute -top-0.5 -right-0.5 min-w-4 rounded-full bg-blue-700 px-1 text-center text-[10px] leading-4 font-semibold text-white">
          {live}
        </span>
      )}
    </button>
  );
}

/** The seconds since `from`, ticking every second (spec part 2 §9: the call timer ticks each 1 s). */
function useElapsed(from: number, running: boolean): string {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const id = window.setInterval(() => setNow(Date.now()), Dialer.callTimerTickMs);
    return () => window.clearInterval(id);
  }, [running]);
  const s = Math.max(0, Math.floor((now - from) / 1000));
  const hh = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return hh ? `${hh}:${mm}:${ss}` : `${mm}:${ss}`;
}

function CardButton({
  icon,
  label,
  onClick,
  tone = 'plain',
  pressed,
  testId,
}: {
  icon: IconName;
  label: string;
  onClick: () => void;
  tone?: 'plain' | 'accept' | 'end';
  pressed?: boolean;
  testId: string;
}) {
  const tones = {
    plain: pressed
      ? 'border-blue-700 bg-blue-50 text-blue-800'
      : 'border-slate-300 bg-white text-slate-700 hover:bg-slate-50',
    accept: 'border-green-800/40 bg-green-700 text-white hover:bg-green-800',
    end: 'border-red-800/40 bg-red-700 text-white hover:bg-red-800',
  };
  return (
    <button
      type="button"
      onClick={onClick}
      aria-label={label}
      title={label}
      aria-pressed={pressed}
      data-testid={testId}
      className={`flex size-8 items-center justify-center rounded-md border ${tones[tone]} ${focusRing}`}
    >
      <Icon name={icon} />
    </button>
  );
}

/**
 * The far end's video (a door panel's camera), muted: its sound plays through the call's audio. The stream's
 * tracks may come after the call is established: the element follows the stream as they are added.
 */
function RemoteVideo({ stream, label }: { stream: MediaStream | null; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    const video = ref.current;
    if (!video || !stream) return;
    video.srcObject = stream;
    video.play().catch(() => {});
    return () => {
      video.srcObject = null;
    };
  }, [stream]);
  return (
    <video
      ref={ref}
      muted
      autoPlay
      playsInline
      aria-label={label}
      data-testid="call-video"
      className="mt-2 aspect-video w-full rounded bg-slate-900 object-cover"
    />
  );
}

function CallCard({ call, current }: { call: DialerCall; current: boolean }) {
  const { t } = useTranslation();
  const { phone } = usePhoneState();
  const can = callActions(call);
  const ringing = isRingingIncoming(call);
  const live = call.status !== 'destroyed';
  const elapsed = useElapsed(call.started, live);
  const send = (e: Parameters<NonNullable<typeof phone>['call']>[0]) => phone?.call(e);
  const id = call.speechId;
  const status = call.answeredByOther
    ? 'answered_elsewhere'
    : ringing
      ? 'ringing'
      : can.join && !call.hasSipSession && call.status === 'paused'
        ? 'waiting'
        : call.status;
  return (
    <li
      data-testid="call-card"
      data-number={call.number}
      data-status={call.status}
      data-type={call.type}
      data-answered-elsewhere={call.answeredByOther || undefined}
      data-current={current || undefined}
      aria-current={current || undefined}
      onClick={() => live && send({ type: 'select', speechId: id })}
      className={`rounded-md border p-2.5 text-sm ${ringing ? 'bg-green-50' : 'bg-white'} ${current ? 'border-blue-600 ring-1 ring-blue-600' : 'border-slate-200'} ${!live || call.answeredByOther ? 'opacity-60' : ''}`}
    >
      <div className="flex items-center gap-2">
        <Icon
          name={call.direction === 'incoming' ? 'phone-in' : 'phone-out'}
          className={`size-4 shrink-0 ${ringing ? 'text-green-700' : 'text-slate-500'}`}
        />
        <span
          className="min-w-0 flex-1 truncate font-mono text-[15px] font-semibold text-slate-900"
          data-testid="call-number"
        >
          {call.number}
        </span>
        {call.sosCall && (
          <span className="rounded bg-red-700 px-1.5 text-[10px] leading-4 font-bold text-white">SOS</span>
        )}
        <span className="font-mono text-xs text-slate-600 tabular-nums" data-testid="call-timer">
          {elapsed}
        </span>
      </div>
      <div className="mt-0.5 flex items-center gap-2 text-xs text-slate-600">
        <span data-testid="call-status" className={ringing ? 'font-medium text-green-800' : ''}>
          {t(`dialer.status.${status}`)}
        </span>
        {call.info?.address && <span className="truncate">· {call.info.address}</span>}
        {call.type === 'awaiting' && <span>· {t('dialer.awaiting')}</span>}
      </div>
      {call.refusal && live && (
        // a refused join: why, on the card; the call stays as it was
        <p role="alert" className="mt-1 text-xs font-medium text-red-800" data-testid="call-refusal">
          {(i18next.t as unknown as (k: string) => string)(`errors:http.${call.refusal}`)}
        </p>
      )}
      {showsVideo(call) && phone && (
        <RemoteVideo stream={phone.remoteStream(id)} label={t('dialer.video_of', { number: call.number })} />
      )}
      {showsVideo(call) && ringing && (
        // early media: the panel's camera before answering; the visitor hears nothing yet
        <p className="mt-1 text-xs text-slate-600" data-testid="call-early-media">
          {t('dialer.early_media')}
        </p>
      )}
      {live && !call.answeredByOther && (
        <div className="mt-2 flex flex-wrap gap-1.5" onClick={(e) => e.stopPropagation()}>
          {can.accept && (
            <CardButton
              icon="phone"
              tone="accept"
              label={t('dialer.actions.answer')}
              testId="call-accept"
              onClick={() => send({ type: 'accept', speechId: id })}
            />
          )}
          {can.mute && (
            <CardButton
              icon={call.settings.micMuted ? 'mic-off' : 'mic'}
              pressed={call.settings.micMuted}
              label={t(call.settings.micMuted ? 'dialer.actions.unmute_mic' : 'dialer.actions.mute_mic')}
              testId="call-mute-mic"
              onClick={() =>
                send({ type: 'mute', speechId: id, what: 'mic', muted: !call.settings.micMuted })
              }
            />
          )}
          {can.mute && (
            <CardButton
              icon={call.settings.volumeMuted ? 'volume-off' : 'volume'}
              pressed={call.settings.volumeMuted}
              label={t(
                call.settings.volumeMuted ? 'dialer.actions.unmute_volume' : 'dialer.actions.mute_volume',
              )}
              testId="call-mute-volume"
              onClick={() =>
                send({ type: 'mute', speechId: id, what: 'volume', muted: !call.settings.volumeMuted })
              }
            />
          )}
          {can.join && (
            <CardButton
              icon="phone-in"
              tone="accept"
              label={t('dialer.actions.join')}
              testId="call-join"
              onClick={() => send({ type: 'join', speechId: id })}
            />
          )}
          {(can.hold || (can.resume && !can.join)) && (
            <CardButton
              icon={can.resume ? 'play' : 'pause'}
              pressed={can.resume}
              label={t(can.resume ? 'dialer.actions.resume' : 'dialer.actions.hold')}
              testId="call-hold"
              onClick={() =>
                send(can.resume ? { type: 'join', speechId: id } : { type: 'pause', speechId: id })
              }
            />
          )}
          {can.door && (
            <CardButton
              icon="door"
              label={t('dialer.actions.door')}
              testId="call-door"
              onClick={() => send({ type: 'door_open', speechId: id })}
            />
          )}
          <span className="flex-1" />
          {can.end && (
            <CardButton
              icon="phone-end"
              tone="end"
              label={t('dialer.actions.end')}
              testId="call-end"
              onClick={() => send({ type: 'hangup', speechId: id })}
            />
          )}
        </div>
      )}
    </li>
  );
}

/** The question the calls reducer asks (another call holds the media; return to the previous call). */
function Confirmation() {
  const { t } = useTranslation();
  const { phone, calls } = usePhoneState();
  const pending = calls.pending;
  if (!pending) return null;
  const text =
    pending.kind === 'return'
      ? t('dialer.confirm.return')
      : pending.outcome === 'hold'
        ? t('dialer.confirm.switch_hold')
        : t('dialer.confirm.switch_cancel');
  const answer = (accept: boolean) => phone?.call({ type: 'confirm', accept });
  return (
    <div
      role="alertdialog"
      aria-label={text}
      data-testid="dialer-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          answer(false);
        }
      }}
      className="rounded-md border border-amber-300 bg-amber-50 p-2.5 text-sm text-amber-900"
    >
      <p>{text}</p>
      <div className="mt-2 flex justify-end gap-2">
        <Button size="sm" onClick={() => answer(false)}>
          {t('dialer.confirm.no')}
        </Button>
        {/* the question takes the focus: Enter answers yes, Escape no */}
        <Button
          size="sm"
          variant="primary"
          autoFocus
          onClick={() => answer(true)}
          data-testid="dialer-confirm-yes"
        >
          {t('dialer.confirm.yes')}
        </Button>
      </div>
    </div>
  );
}

const KEYPAD_LETTERS: Record<string, string> = {
  '2': 'ABC',
  '3': 'DEF',
  '4': 'GHI',
  '5': 'JKL',
  '6': 'MNO',
  '7': 'PQRS',
  '8': 'TUV',
  '9': 'WXYZ',
  '0': '+',
};

/** The keypad (spec part 1 §2.5): 1–9, *, 0, #, voice call, video call, backspace. */
function Keypad() {
  const { t } = useTranslation();
  const { phone, calls, registration } = usePhoneState();
  const [entry, setEntry] = useState('');
  const inputRef = useRef<HTMLInputElement>(null);
  const focusRequest = useAtomValue(focusEntryAtom);
  const [, setOpen] = useAtom(dialerOpenAtom);
  const [focused, setFocused] = useState(false);
  useEffect(() => {
    if (focusRequest) inputRef.current?.focus();
  }, [focusRequest]);

  const current = currentCall(calls);
  const press = (key: KeypadKey | 'backspace') => {
    // with a call active, a key sends its tone; the entry keeps what was dialled
    if (key !== 'backspace' && current && callActions(current).door)
      phone?.call({ type: 'dtmf', speechId: current.speechId, key });
    else setEntry((e) => pressKey(e, key));
    inputRef.current?.focus();
  };
  const place = (video: boolean) => {
    const plan = planCall({
      entry,
      video,
      ownNumber: phone ? calls.ownNumber : null,
      lastNumber: calls.lastNumber,
    });
    if (!plan.ok) {
      pushAlert('error', (i18next.t as unknown as (k: string) => string)(`errors:http.${plan.code}`));
      return;
    }
    phone?.call({ type: 'dial', speechId: crypto.randomUUID(), number: plan.number, video: plan.video });
    setEntry('');
  };

  useShortcut(
    'enter',
    (e) => {
      e.preventDefault();
      place(false);
    },
    {
      labelKey: 'dialer.keys.call',
      inInputs: true,
      enabled: focused,
    },
  );
  useShortcut(
    'shift+enter',
    (e) => {
      e.preventDefault();
      place(true);
    },
    {
      labelKey: 'dialer.keys.video_call',
      inInputs: true,
      enabled: focused,
    },
  );
  useShortcut(
    'escape',
    () => {
      inputRef.current?.blur();
      setOpen(false);
    },
    {
      labelKey: 'dialer.keys.close',
      inInputs: true,
      enabled: focused,
    },
  );

  const registered = registration.state === 'registered';
  const keyClass = `flex h-10 flex-col items-center justify-center rounded-md border border-slate-200 bg-white leading-none text-slate-900 hover:bg-slate-50 active:bg-slate-100 ${focusRing}`;
  return (
    <div className="space-y-2">
      <label className="sr-only" htmlFor="dialer-entry">
        {t('dialer.entry')}
      </label>
      <input
        id="dialer-entry"
        ref={inputRef}
        value={entry}
        onChange={(e) => setEntry(e.target.value.replace(/[^0-9*#+]/g, ''))}
        onFocus={() => setFocused(true)}
        onBlur={() => setFocused(false)}
        placeholder="…"
        inputMode="tel"
        autoComplete="off"
        data-testid="dialer-entry"
        className="h-10 w-full rounded-md border border-slate-300 bg-white px-3 text-center font-mono text-lg tracking-wider text-slate-900 placeholder:text-slate-400 focus:border-blue-600 focus:ring-1 focus:ring-blue-600 focus:outline-none"
      />
      <div className="grid grid-cols-3 gap-1.5" role="group" aria-label={t('dialer.keypad')}>
        {Dialer.keypad.map((k) => (
          <button
            key={k}
            type="button"
            tabIndex={-1}
            className={keyClass}
            onClick={() => press(k)}
            data-testid={`keypad-${k}`}
          >
            <span className="font-mono text-base font-semibold">{k}</span>
            <span className="h-2.5 text-[9px] tracking-widest text-slate-400">{KEYPAD_LETTERS[k] ?? ''}</span>
          </button>
        ))}
      </div>
      <div className="grid grid-cols-3 gap-1.5">
        <button
          type="button"
          onClick={() => place(true)}
          disabled={!registered}
          aria-label={t('dialer.actions.video_call')}
          title={`${t('dialer.actions.video_call')} (Shift+Enter)`}
          className={`flex h-9 items-center justify-center rounded-md border border-slate-300 bg-white text-slate-700 hover:bg-slate-50 disabled:opacity-50 ${focusRing}`}
        >
          <Icon name="video" />
        </button>
        <button
          type="button"
          onClick={() => place(false)}
          disabled={!registered}
          aria-label={t('dialer.actions.call')}
          title={`${t('dialer.actions.call')} (Enter)`}
          data-testid="dialer-call"
          className={`flex h-9 items-center justify-center rounded-md border border-green-800/40 bg-green-700 text-white hover:bg-green-800 disabled:opacity-50 ${focusRing}`}
        >
          <Icon name="phone" />
        </button>
        <button
          type="button"
          onClick={() => press('backspace')}
          aria-label={t('dialer.actions.backspace')}
          title={t('dialer.actions.backspace')}
          className={`flex h-9 items-center justify-center rounded-md border border-slate-300 bg-white text-slate-700 hover:bg-slate-50 ${focusRing}`}
        >
          <Icon name="backspace" />
        </button>
      </div>
    </div>
  );
}

/** The dialer screen (spec part 1 §2.5): call cards, the keypad, and the dialer's questions, beside the page. */
export function DialerPanel() {
  const { t } = useTranslation();
  const { phone, calls, registration } = usePhoneState();
  const [open, setOpen] = useAtom(dialerOpenAtom);
  const tab = useAtomValue(dialerTabAtom);
  const tabs = useDialerTabs();
  if (!phone || !open) return null;
  // a tab the user may no longer use shows the keypad
  const shown = tabs.includes(tab) ? tab : 'keypad';
  const current = currentCall(calls);
  const look = dialerButton(registration.state);
  const badge = {
    default: 'bg-slate-100 text-slate-700',
    success: 'bg-green-100 text-green-800',
    warning: 'bg-amber-100 text-amber-800',
    error: 'bg-red-100 text-red-800',
  }[look.colour];
  return (
    <aside
      aria-label={t('dialer.title')}
      data-testid="dialer-panel"
      className="flex w-[320px] shrink-0 flex-col border-l border-slate-200 bg-slate-50"
    >
      <div className="flex h-11 shrink-0 items-center gap-2 border-b border-slate-200 bg-white px-3">
        <Icon name="phone" className="size-4 text-slate-500" />
        <h2 className="text-sm font-semibold text-slate-900">{t('dialer.title')}</h2>
        <span className="font-mono text-xs text-slate-600" data-testid="dialer-own-number">
          {calls.ownNumber}
        </span>
        <span
          className={`rounded px-1.5 text-[11px] leading-5 font-medium ${badge}`}
          data-testid="dialer-registration"
        >
          {t(`dialer.registration.${registration.state}`)}
        </span>
        <span className="flex-1" />
        <button
          type="button"
          onClick={() => setOpen(false)}
          aria-label={t('dialer.actions.close')}
          className={`flex size-7 items-center justify-center rounded-md text-slate-500 hover:bg-slate-100 ${focusRing}`}
        >
          <Icon name="close" />
        </button>
      </div>
      <div className="min-h-0 flex-1 space-y-3 overflow-y-auto p-3">
        {phone.mirrored && (
          <p
            className="rounded-md bg-slate-100 px-2 py-1.5 text-xs text-slate-600"
            data-testid="dialer-mirrored"
          >
            {t('dialer.mirrored')}
          </p>
        )}
        <Confirmation />
        <section aria-label={t('dialer.calls')}>
          <h3 className="mb-1.5 text-[11px] font-semibold tracking-wide text-slate-500 uppercase">
            {t('dialer.calls')}
          </h3>
          {calls.calls.length === 0 ? (
            <p
              className="rounded-md border border-dashed border-slate-300 px-3 py-4 text-center text-sm text-slate-500"
              data-testid="dialer-no-calls"
            >
              {t('dialer.no_calls')}
            </p>
          ) : (
            <ul className="space-y-2">
              {calls.calls.map((c) => (
                <CallCard key={c.speechId} call={c} current={c.speechId === current?.speechId} />
              ))}
            </ul>
          )}
        </section>
        <section aria-label={t(`dialer.tabs.${shown}`)} className="space-y-2">
          {tabs.length > 1 && <DialerTabStrip tabs={tabs} />}
          <div role={tabs.length > 1 ? 'tabpanel' : undefined} aria-label={t(`dialer.tabs.${shown}`)}>
            {shown === 'keypad' && <Keypad />}
            {shown === 'contacts' && <ContactsTab />}
            {shown === 'recents' && <RecentsTab />}
            {shown === 'doors' && <DoorsTab />}
            {shown === 'interception' && <InterceptionTab />}
          </div>
        </section>
      </div>
    </aside>
  );
}
