/**
 * One tab of several holds the registration (issue 23 item 7, "no double registration"): the tabs of one
 * browser that show the same user's dialer elect one by a Web Lock; it registers and carries the calls, and
 * the others mirror it over a BroadcastChannel — its registration and calls in, their actions (answer, end,
 * hold, door…) out to it. When that tab closes its lock passes to another tab, which registers in turn. The
 * media stay in the tab that holds the registration (the browser plays them whichever tab is in front).
 */
import {
  initialCalls,
  initialRegistration,
  type CallEvent,
  type CallsState,
  type Registration,
} from '@lintel/core';
import type { PhoneSnapshot } from './sip-phone';

/** What the console reads and drives: a registered phone, or the mirror of another tab's. */
export interface DialerPhone {
  subscribe(listener: () => void): () => void;
  snapshot(): PhoneSnapshot;
  call(event: CallEvent): void;
  /** the far end's media, in the tab that holds them; null in a mirror */
  remoteStream(speechId: string): MediaStream | null;
  /** true in a tab that shows the calls of the tab holding the registration */
  readonly mirrored: boolean;
}

type TabMessage =
  | { type: 'hello' }
  | { type: 'snapshot'; snapshot: { registration: Registration; calls: CallsState } }
  | { type: 'call'; event: CallEvent };

/** The channel and lock of one user's dialer (project, user and number: a new number is another dialer). */
export const tabChannelName = (key: string) => `lintel-dialer:${key}`;

/** Whether this browser can share one registration between tabs (Web Locks need a secure context). */
export const tabsCanShare = (): boolean =>
  typeof BroadcastChannel !== 'undefined' && typeof navigator !== 'undefined' && 'locks' in navigator;

/** Another tab's phone, seen and driven from this one. */
export class MirrorPhone implements DialerPhone {
  readonly mirrored = true;
  private state: PhoneSnapshot;
  private readonly listeners = new Set<() => void>();

  /**
   * `onLive`: called at the first state the holding tab sends — until then there is nothing to show (the
   * holding tab may have found SIP off, or no WebRTC, and share nothing).
   */
  constructor(
    private readonly channel: BroadcastChannel,
    ownNumber: string,
    onLive: () => void = () => {},
  ) {
    this.state = { registration: initialRegistration, calls: initialCalls(ownNumber) };
    let live = false;
    channel.onmessage = (e: MessageEvent<TabMessage>) => {
      if (e.data?.type !== 'snapshot') return;
      this.state = e.data.snapshot;
      if (!live) {
        live = true;
        onLive();
      }
      for (const l of this.listeners) l();
    };
    // the holder answers with what it has now
    channel.postMessage({ type: 'hello' } satisfies TabMessage);
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): PhoneSnapshot => this.state;

  call(event: CallEvent): void {
    this.channel.postMessage({ type: 'call', event } satisfies TabMessage);
  }

  remoteStream(): MediaStream | null {
    return null;
  }

  close(): void {
    this.channel.onmessage = null;
    this.listeners.clear();
  }
}

/** Shares the registered phone of this tab with the others: its state out on each change, their actions in. */
export function shareWithTabs(phone: DialerPhone, channel: BroadcastChannel): () => void {
  const send = () =>
    channel.postMessage({ type: 'snapshot', snapshot: phone.snapshot() } satisfies TabMessage);
  const off = phone.subscribe(send);
  channel.onmessage = (e: MessageEvent<TabMessage>) => {
    if (e.data?.type === 'hello') send();
    else if (e.data?.type === 'call') phone.call(e.data.event);
  };
  send();
  return () => {
    off();
    channel.onmessage = null;
  };
}

/**
 * Runs `lead` in the one tab holding the lock `name` and `follow` in the others; a follower leads once the
 * lock comes to it (the leading tab closed or left the dialer): `follow`'s cleanup runs first. `lead` holds
 * the lock until its promise settles. The returned function ends both (the dialer leaving this tab).
 */
export function electTab(
  name: string,
  lead: (ended: Promise<void>) => Promise<void>,
  follow: () => () => void,
): () => void {
  const abort = new AbortController();
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  let unfollow: (() => void) | null = null;
  const locks = navigator.locks;
  void locks
    .request(name, { ifAvailable: true }, async (lock) => {
      if (lock) return lead(ended);
      if (abort.signal.aborted) return;
      unfollow = follow();
      // in the queue: this tab leads when the lock is free
      void locks
        .request(name, { signal: abort.signal }, async () => {
          unfollow?.();
          unfollow = null;
          return lead(ended);
        })
        .catch(() => undefined);
    })
    .catch((err: unknown) => console.warn('lintel: the dialer tabs', err));
  return () => {
    abort.abort();
    unfollow?.();
    unfollow = null;
    end();
  };
}
