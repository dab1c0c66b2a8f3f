import { useCallback, useEffect } from 'react';
import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { getCommand } from '@lintel/commands';
import type { ErrorKey } from '@lintel/core';
import { runCommand } from '../../api/client';
import { pushAlert } from '../../alerts/alerts';
import { evaluateGates } from '../../access/gates';
import { holderOf } from '../../access/use-can';
import { i18next } from '../../i18n';
import { useShortcut } from '../../keys/shortcuts';
import { usePageAction, type PageAction } from '../../palette/page-actions';
import { profileAtom } from '../../session/session';
import type { SipPhone } from './sip-phone';
import { followServerCalls } from './server-calls';
import { electTab, MirrorPhone, shareWithTabs, tabChannelName, tabsCanShare } from './tab-phone';
import { useDialerTabs } from './dialer-directory';
import { useInterception, useInterceptionLoader } from './dialer-interception';
import { askNotifications, startRing, stopRing, unlockAudioOnGesture } from './ringer';
import {
  callActions,
  currentCall,
  dialerOpenAtom,
  dialerTabAtom,
  focusEntryAtom,
  focusTabAtom,
  joinableCall,
  nextCall,
  type DialerTab,
  phoneAtom,
  usePhoneState,
} from './dialer-state';

const tr = (key: string, options?: Record<string, unknown>) =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, options);
const errorText = (code: ErrorKey) => tr(`errors:http.${code}`);

/**
 * Starts the web dialer when it shows (spec part 1 §1: SIP enabled on the server, the web dialer licensed,
 * and the user has a SIP number): the phone registers with the user's number and the HA1 from `sip.profile`
 * over the SIP websocket on the console's host. Mounted once in the signed-in layout; the phone is closed
 * (unregistered) when the user signs out or loses the licence or the number.
 */
export function DialerProvider() {
  const profile = useAtomValue(profileAtom);
  const [phone, setPhone] = useAtom(phoneAtom);
  const licensed = evaluateGates({ licence: ['sip.is_web_dialer_enabled'] }, holderOf(profile)).can;
  const number = profile?.profile.sip_number ?? null;
  const key = profile && licensed && number ? `${profile.project.id}:${profile.id}:${number}` : '';
  // the server's calls (its list, its updates) and the project's waiting calls, when the role allows them
  const mayList = evaluateGates(getCommand('call.list').gates, holderOf(profile)).can;
  const mayIntercept = evaluateGates(getCommand('call.interception').gates, holderOf(profile)).can;

  useEffect(() => unlockAudioOnGesture(), []);

  useEffect(() => {
    if (!key) return;
    let live = true;
    let started: SipPhone | null = null;
    /** Registers this tab's phone (null when SIP is off or the browser has no WebRTC). */
    const startPhone = async (): Promise<SipPhone | null> => {
      const settings = await runCommand('server.settings', {});
      if (!live || !settings.sip_enabled) return null;
      const sip = await runCommand('sip.profile', {});
      if (!live || !sip) return null;
      if (typeof RTCPeerConnection === 'undefined' || !navigator.mediaDevices) {
        pushAlert('warning', errorText('media_not_supported'));
        return null;
      }
      // sip.js (a third of the console's code) loads only for a user who has a phone to register
      const { SipPhone } = await import('./sip-phone');
      if (!live) return null;
      const host = window.location.hostname;
      const phone: SipPhone = new SipPhone(
        {
          number: sip.number,
          name: sip.name,
          ha1: sip.ha1,
          server: `${sip.ws_secure ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${sip.ws_port}`,
          domain: host.includes(':') ? `[${host}]` : host,
          iceServers: sip.ice_servers,
        },
        {
          ring: () => {
            const ringing = phone.snapshot().calls.calls.find((c) => c.status === 'new' && c.hasSipSession);
            startRing(tr('dialer.incoming'), tr('dialer.incoming_from', { number: ringing?.number ?? '' }));
          },
          stopRing,
          refused: (code) => pushAlert(code === 'media_not_supported' ? 'warning' : 'error', errorText(code)),
          // the telephony's call management (POST /calls/management/{id}/stop)
          stopOnServer: async (id) => {
            await runCommand('call.stop', { id });
          },
        },
      );
      started = phone;
      setPhone(phone);
      phone.register();
      unfollow = followServerCalls(phone, sip.number, { list: mayList, intercept: mayIntercept });
      return phone;
    };
    let unfollow = () => {};
    const stopPhone = () => {
      stopRing();
      unfollow();
      unfollow = () => {};
      const phone = started;
      started = null;
      return phone?.close() ?? Promise.resolve();
    };
    // a closing tab unregisters, so its number's next call does not fork to a page that is gone
    const onPageHide = () => void stopPhone();
    window.addEventListener('pagehide', onPageHide);

    let stop: () => void;
    if (tabsCanShare()) {
      // one tab of this browser registers; the others show its calls (tab-phone.ts)
      const channel = new BroadcastChannel(tabChannelName(key));
      const end = electTab(
        tabChannelName(key),
        async (ended) => {
          const phone = await startPhone().catch((err: unknown) => {
            console.warn('lintel: the dialer did not start', err);
            return null;
          });
          const unshare = phone && live ? shareWithTabs(phone, channel) : () => {};
          await ended;
          unshare();
        },
        () => {
          // shown once the holding tab shares a phone (none when it found SIP off)
          const mirror: MirrorPhone = new MirrorPhone(channel, number ?? '', () => setPhone(mirror));
          return () => {
            mirror.close();
            setPhone(null);
          };
        },
      );
      stop = () => {
        end();
        channel.close();
      };
    } else {
      void startPhone().catch((err: unknown) => console.warn('lintel: the dialer did not start', err));
      stop = () => {};
    }
    return () => {
      live = false;
      window.removeEventListener('pagehide', onPageHide);
      stop();
      setPhone(null);
      void stopPhone();
    };
  }, [key, number, setPhone, mayList, mayIntercept]);

  return phone ? <DialerKeys /> : null;
}

/** The dialer's keys (declared in keys/bindings.ts, scope `dialer`) and its actions in the palette. */
function DialerKeys() {
  const { phone, calls } = usePhoneState();
  const [open, setOpen] = useAtom(dialerOpenAtom);
  const focusEntry = useSetAtom(focusEntryAtom);
  const current = currentCall(calls);
  const can = current ? callActions(current) : null;
  const ringing = calls.calls.find(
    (c) => c.status === 'new' && c.hasSipSession && c.direction === 'incoming',
  );

  // a call ringing opens the panel (the popup of spec §2.3), without taking the focus from what is typed
  useEffect(() => {
    if (ringing) setOpen(true);
  }, [ringing?.speechId, setOpen]);
  // a question about another call (switch, return) is asked in the panel
  useEffect(() => {
    if (calls.pending) setOpen(true);
  }, [calls.pending, setOpen]);

  const [tab, setTab] = useAtom(dialerTabAtom);
  const focusTab = useSetAtom(focusTabAtom);
  const toggle = useCallback(() => {
    askNotifications();
    if (open) setOpen(false);
    else {
      setOpen(true);
      // the focus goes where the tab on show takes it: the number, or its search
      if (tab === 'keypad') focusEntry((n) => n + 1);
      else focusTab((n) => n + 1);
    }
  }, [open, setOpen, focusEntry, focusTab, tab]);
  const dial = useCallback(() => {
    askNotifications();
    setOpen(true);
    setTab('keypad');
    focusEntry((n) => n + 1);
  }, [setOpen, setTab, focusEntry]);

  const on = (id: string | undefined, fn: (id: string) => void) => () => {
    if (id) fn(id);
  };
  const answer = on(ringing?.speechId, (id) => phone?.call({ type: 'accept', speechId: id }));
  const end = on(can?.end ? current?.speechId : undefined, (id) =>
    phone?.call({ type: 'hangup', speechId: id }),
  );
  const hold = on(can?.hold || can?.resume ? current?.speechId : undefined, (id) =>
    phone?.call(can?.hold ? { type: 'pause', speechId: id } : { type: 'join', speechId: id }),
  );
  const muteMic = on(can?.mute ? current?.speechId : undefined, (id) =>
    phone?.call({ type: 'mute', speechId: id, what: 'mic', muted: !current?.settings.micMuted }),
  );
  const muteVolume = on(can?.mute ? current?.speechId : undefined, (id) =>
    phone?.call({ type: 'mute', speechId: id, what: 'volume', muted: !current?.settings.volumeMuted }),
  );
  const door = on(can?.door ? current?.speechId : undefined, (id) =>
    phone?.call({ type: 'door_open', speechId: id }),
  );
  const joinable = joinableCall(calls);
  const join = on(joinable?.speechId, (id) => phone?.call({ type: 'join', speechId: id }));
  useInterceptionLoader();
  const interception = useInterception();
  const next = nextCall(calls);
  const switchCall = on(next && next.speechId !== current?.speechId ? next.speechId : undefined, (id) =>
    phone?.call({ type: 'select', speechId: id }),
  );

  const opts = { inInputs: true } as const;
  useShortcut('alt+p', toggle, { ...opts, labelKey: 'dialer.keys.toggle' });
  useShortcut('alt+a', answer, { ...opts, labelKey: 'dialer.keys.answer', enabled: !!ringing });
  useShortcut('alt+x', end, { ...opts, labelKey: 'dialer.keys.end', enabled: !!can?.end });
  useShortcut('alt+h', hold, {
    ...opts,
    labelKey: 'dialer.keys.hold',
    enabled: !!(can?.hold || can?.resume),
  });
  useShortcut('alt+m', muteMic, { ...opts, labelKey: 'dialer.keys.mute_mic', enabled: !!can?.mute });
  useShortcut('alt+s', muteVolume, { ...opts, labelKey: 'dialer.keys.mute_volume', enabled: !!can?.mute });
  useShortcut('alt+o', door, { ...opts, labelKey: 'dialer.keys.door', enabled: !!can?.door });
  useShortcut('alt+j', join, { ...opts, labelKey: 'dialer.keys.join', enabled: !!joinable });
  useShortcut('alt+t', () => void interception.toggle(), {
    ...opts,
    labelKey: 'dialer.keys.intercept',
    enabled: interception.may && !!interception.settings,
  });
  useShortcut('alt+n', switchCall, {
    ...opts,
    labelKey: 'dialer.keys.next',
    enabled: !!next && next !== current,
  });

  const action = (id: string, labelKey: string, icon: PageAction['icon'], run: () => void, when = true) =>
    when ? { id: `dialer.${id}`, labelKey, icon, run, group: 'dialer' as const } : null;
  usePageAction(action('toggle', open ? 'dialer.actions.close' : 'dialer.actions.open', 'phone', toggle));
  usePageAction(action('dial', 'dialer.actions.dial', 'phone-out', dial));
  usePageAction(action('answer', 'dialer.actions.answer', 'phone-in', answer, !!ringing));
  usePageAction(action('end', 'dialer.actions.end', 'phone-end', end, !!can?.end));
  usePageAction(
    action(
      'hold',
      can?.resume ? 'dialer.actions.resume' : 'dialer.actions.hold',
      can?.resume ? 'play' : 'pause',
      hold,
      !!(can?.hold || can?.resume),
    ),
  );
  usePageAction(
    action(
      'mute_mic',
      current?.settings.micMuted ? 'dialer.actions.unmute_mic' : 'dialer.actions.mute_mic',
      'mic-off',
      muteMic,
      !!can?.mute,
    ),
  );
  usePageAction(
    action(
      'mute_volume',
      current?.settings.volumeMuted ? 'dialer.actions.unmute_volume' : 'dialer.actions.mute_volume',
      'volume-off',
      muteVolume,
      !!can?.mute,
    ),
  );
  usePageAction(action('door', 'dialer.actions.door', 'door', door, !!can?.door));
  usePageAction(action('join', 'dialer.actions.join', 'phone-in', join, !!joinable));
  const intercepting = !!interception.settings?.isActive;
  usePageAction(
    action(
      'intercept',
      intercepting ? 'dialer.interception.stop' : 'dialer.interception.start',
      'shield',
      () => void interception.toggle(),
      interception.may && !!interception.settings,
    ),
  );
  usePageAction(action('next', 'dialer.actions.next', 'swap', switchCall, !!next && next !== current));
  // the tabs below the calls: each shows its tab in the open dialer and puts the focus in its search
  const tabs = useDialerTabs();
  const show = (tab: DialerTab) => () => {
    setOpen(true);
    setTab(tab);
    if (tab === 'keypad') focusEntry((n) => n + 1);
    else focusTab((n) => n + 1);
  };
  usePageAction(
    action('tab_contacts', 'dialer.tabs.show_contacts', 'users', show('contacts'), tabs.includes('contacts')),
  );
  usePageAction(
    action('tab_recents', 'dialer.tabs.show_recents', 'list', show('recents'), tabs.includes('recents')),
  );
  usePageAction(action('tab_doors', 'dialer.tabs.show_doors', 'door', show('doors'), tabs.includes('doors')));
  usePageAction(
    action(
      'tab_interception',
      'dialer.tabs.show_interception',
      'shield',
      show('interception'),
      tabs.includes('interception'),
    ),
  );
  return null;
}
