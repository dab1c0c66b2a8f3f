import { useSyncExternalStore } from 'react';
import { atom, useAtomValue } from 'jotai';
import {
  holdsMedia,
  initialCalls,
  initialRegistration,
  isRingingIncoming,
  liveCalls,
  type CallsState,
  type DialerCall,
} from '@lintel/core';
import type { PhoneSnapshot } from './sip-phone';
import type { DialerPhone } from './tab-phone';

/** The signed-in user's phone, once the dialer shows (SIP on, web dialer licensed, a number); else null. */
export const phoneAtom = atom<DialerPhone | null>(null);
/** The dialer panel beside the page. */
export const dialerOpenAtom = atom(false);
/** Asks the panel to focus the number field (a counter: each request focuses once). */
export const focusEntryAtom = atom(0);

const idle: PhoneSnapshot = { registration: initialRegistration, calls: initialCalls('') };
const noop = () => () => {};

/** The phone's registration and calls, re-rendered on each change. */
export function usePhoneState(): PhoneSnapshot & { phone: DialerPhone | null } {
  const phone = useAtomValue(phoneAtom);
  const snapshot = useSyncExternalStore(phone?.subscribe ?? noop, phone?.snapshot ?? (() => idle));
  return { ...snapshot, phone };
}

/**
 * The call the dialer's keys act on: the one chosen, else the one ringing, else the one holding the media,
 * else the first one still live.
 */
export function currentCall(calls: CallsState): DialerCall | null {
  const live = liveCalls(calls);
  const selected = live.find((c) => c.speechId === calls.selectedId);
  return selected ?? live.find(isRingingIncoming) ?? live.find(holdsMedia) ?? live.find(() => true) ?? null;
}

/** The awaiting call to join: the current one if it may be joined, else the first that may. */
export function joinableCall(calls: CallsState): DialerCall | null {
  const current = currentCall(calls);
  if (current && callActions(current).join) return current;
  return liveCalls(calls).find((c) => callActions(c).join) ?? null;
}

/** The call after `current` among the live ones, round the list. */
export function nextCall(calls: CallsState): DialerCall | null {
  const live = liveCalls(calls);
  if (!live.length) return null;
  const at = live.findIndex((c) => c.speechId === currentCall(calls)?.speechId);
  return live[(at + 1) % live.length] ?? null;
}

/** What a call's buttons may do now. */
export function callActions(call: DialerCall) {
  const ours = call.hasSipSession && !call.answeredByOther;
  return {
    accept: isRingingIncoming(call),
    end: call.status !== 'destroyed' && (call.hasSipSession || !call.answeredByOther),
    hold: ours && call.status === 'active',
    resume:
      !call.answeredByOther &&
      (call.status === 'paused' || (call.status === 'processed_paused' && call.type === 'awaiting')),
    /** an awaiting call waiting on the platform: joined (the join MESSAGE), not resumed */
    join:
      !call.answeredByOther &&
      call.type === 'awaiting' &&
      (call.status === 'paused' || call.status === 'processed_paused'),
    // a ringing call has no media yet to mute
    mute: ours && call.status !== 'destroyed' && !isRingingIncoming(call),
    door: ours && call.status === 'active',
  };
}

/** The dialer's tabs below the calls (spec part 1 §2.5): keypad, contacts, recents, doors. */
export const DialerTabs = ['keypad', 'contacts', 'recents', 'doors', 'interception'] as const;
export type DialerTab = (typeof DialerTabs)[number];
export const dialerTabAtom = atom<DialerTab>('keypad');
/** Asks the tab on show to focus its search (a counter: each request focuses once). */
export const focusTabAtom = atom(0);
/** The door chosen in the doors tab, for the palette's "open" and "call" */
export const chosenDoorAtom = atom<{ id: number; name: string; number: string | null } | null>(null);
