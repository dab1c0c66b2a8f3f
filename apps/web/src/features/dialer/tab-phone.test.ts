import { afterEach, describe, expect, it } from 'vitest';
import { initialCalls, initialRegistration, type CallEvent } from '@lintel/core';
import type { PhoneSnapshot } from './sip-phone';
import { MirrorPhone, shareWithTabs, type DialerPhone } from './tab-phone';

/** A registered phone as the holding tab has it: its state, and the actions it received. */
class HeldPhone implements DialerPhone {
  readonly mirrored = false;
  state: PhoneSnapshot = {
    registration: { ...initialRegistration, state: 'registered', wanted: true },
    calls: initialCalls('101'),
  };
  received: CallEvent[] = [];
  private readonly listeners = new Set<() => void>();
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  snapshot = () => this.state;
  call(event: CallEvent) {
    this.received.push(event);
  }
  remoteStream() {
    return null;
  }
  change(state: PhoneSnapshot) {
    this.state = state;
    for (const l of this.listeners) l();
  }
}

const channels: BroadcastChannel[] = [];
const channel = (name: string) => {
  const c = new BroadcastChannel(name);
  channels.push(c);
  return c;
};
afterEach(() => {
  for (const c of channels.splice(0)) c.close();
});

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('the dialer shared between tabs', () => {
  it('a tab opened later sees the holding tab’s registration and calls, and each change after', async () => {
    const held = new HeldPhone();
    const stop = shareWithTabs(held, channel('dialer-a'));
    const mirror = new MirrorPhone(channel('dialer-a'), '101');
    expect(mirror.mirrored).toBe(true);
    // the holder answers the newcomer's hello with what it has
    await until(() => mirror.snapshot().registration.state === 'registered');
    let seen = 0;
    mirror.subscribe(() => seen++);
    held.change({ ...held.state, calls: { ...held.state.calls, ringing: true } });
    await until(() => mirror.snapshot().calls.ringing);
    expect(seen).toBeGreaterThan(0);
    stop();
    mirror.close();
  });

  it('carries the mirror’s actions to the holding tab, and stops listening when it stops sharing', async () => {
    const held = new HeldPhone();
    const shared = channel('dialer-b');
    const stop = shareWithTabs(held, shared);
    const mirror = new MirrorPhone(channel('dialer-b'), '101');
    mirror.call({ type: 'accept', speechId: 's1' });
    await until(() => held.received.length === 1);
    expect(held.received).toEqual([{ type: 'accept', speechId: 's1' }]);
    stop();
    expect(shared.onmessage).toBeNull();
    mirror.close();
  });

  it('shows nothing until the holding tab shares a phone (it shares none when SIP is off)', async () => {
    const holder = channel('dialer-c');
    let hellos = 0;
    holder.onmessage = (e: MessageEvent<{ type: string }>) => {
      if (e.data.type === 'hello') hellos++;
    };
    let live = 0;
    const mirror = new MirrorPhone(channel('dialer-c'), '101', () => live++);
    // a holding tab that found SIP off hears the newcomer and answers nothing: the mirror stays unshown
    await until(() => hellos === 1);
    expect(live).toBe(0);
    holder.onmessage = null;
    const held = new HeldPhone();
    const stop = shareWithTabs(held, holder);
    await until(() => live === 1);
    held.change({ ...held.state, calls: { ...held.state.calls, ringing: true } });
    await until(() => mirror.snapshot().calls.ringing);
    expect(live).toBe(1);
    stop();
    mirror.close();
  });
});
