import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  dialerButton,
  initialRegistration,
  reduceRegistration,
  RegistrationStates,
  type Registration,
  type RegistrationEvent,
} from './registration';

function run(r: Registration, events: RegistrationEvent['type'][]) {
  let effects: ReturnType<typeof reduceRegistration>['effects'] = [];
  for (const type of events) ({ state: r, effects } = reduceRegistration(r, { type } as RegistrationEvent));
  return { state: r, effects };
}

describe('the dialer registration (spec part 1 §4)', () => {
  it('unregistered → registering → registered', () => {
    const a = run(initialRegistration, ['register']);
    expect(a.state.state).toBe('registering');
    expect(a.effects).toEqual([{ type: 'send_register' }]);
    const b = run(a.state, ['registered']);
    expect(b.state.state).toBe('registered');
    expect(b.effects).toEqual([]);
  });

  it('a transport error retries in 5 s; the retry registers again', () => {
    const e = run(initialRegistration, ['register', 'registered', 'transport_error']);
    expect(e.state).toEqual({ state: 'error', wanted: true, retryPending: true });
    expect(e.effects).toEqual([{ type: 'schedule_retry', delayMs: 5000 }]);
    const r = run(e.state, ['retry']);
    expect(r.state.state).toBe('registering');
    expect(r.effects).toEqual([{ type: 'send_register' }]);
    // and again while the transport stays down
    expect(run(r.state, ['transport_error']).effects).toEqual([{ type: 'schedule_retry', delayMs: 5000 }]);
  });

  it('an invalid registration retries in 30 s', () => {
    const e = run(initialRegistration, ['register', 'rejected']);
    expect(e.state.state).toBe('invalid_registration');
    expect(e.effects).toEqual([{ type: 'schedule_retry', delayMs: 30_000 }]);
    expect(run(e.state, ['retry']).effects).toEqual([{ type: 'send_register' }]);
  });

  it('registering or unregistered stops the retries', () => {
    const e = run(initialRegistration, ['register', 'transport_error']).state;
    const reg = run(e, ['register']);
    expect(reg.effects).toEqual([{ type: 'cancel_retry' }, { type: 'send_register' }]);
    expect(reg.state.retryPending).toBe(false);
    const off = run(e, ['unregister']);
    expect(off.state).toEqual({ state: 'unregistered', wanted: false, retryPending: false });
    expect(off.effects).toEqual([{ type: 'cancel_retry' }]);
    // a timer that fires anyway is stale
    expect(run(off.state, ['retry'])).toEqual({ state: off.state, effects: [] });
    expect(run(reg.state, ['retry']).effects).toEqual([]);
  });

  it('registered → unregistering → unregistered; no retry once the user unregistered', () => {
    const u = run(initialRegistration, ['register', 'registered', 'unregister']);
    expect(u.state.state).toBe('unregistering');
    expect(u.effects).toEqual([{ type: 'send_unregister' }]);
    expect(run(u.state, ['unregistered']).state.state).toBe('unregistered');
    // the socket closing under an unregister is the end of it, not an error
    expect(run(u.state, ['transport_error'])).toEqual({
      state: { state: 'unregistered', wanted: false, retryPending: false },
      effects: [],
    });
    expect(run(u.state, ['rejected']).state.state).toBe('unregistered');
    // a late 200 to a REGISTER after unregister does not count
    expect(run(u.state, ['registered']).state.state).toBe('unregistering');
  });

  it('repeated register or unregister does nothing more', () => {
    const r = run(initialRegistration, ['register']).state;
    expect(run(r, ['register']).effects).toEqual([]);
    expect(run(initialRegistration, ['unregister']).effects).toEqual([]);
  });

  it('at most one retry is pending and retries are only scheduled while the user wants the registration', () => {
    const types: RegistrationEvent['type'][] = [
      'register',
      'unregister',
      'registered',
      'unregistered',
      'transport_error',
      'rejected',
      'retry',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...types), { maxLength: 40 }), (events) => {
        let r = initialRegistration;
        let timers = 0;
        for (const type of events) {
          const out = reduceRegistration(r, { type } as RegistrationEvent);
          if (type === 'retry' && r.retryPending) timers -= 1;
          for (const e of out.effects) {
            if (e.type === 'schedule_retry') {
              timers += 1;
              expect(out.state.wanted).toBe(true);
              expect(e.delayMs).toBe(out.state.state === 'error' ? 5000 : 30_000);
            }
            if (e.type === 'cancel_retry') timers -= 1;
          }
          r = out.state;
          expect(timers).toBe(r.retryPending ? 1 : 0);
          if (r.state === 'registering' || r.state === 'unregistered') expect(r.retryPending).toBe(false);
        }
      }),
    );
  });
});

describe('the dialer button (spec part 1 §2.5)', () => {
  it('has a colour and icon for every state', () => {
    expect(Object.fromEntries(RegistrationStates.map((s) => [s, dialerButton(s)]))).toEqual({
      registering: { colour: 'default', icon: 'loading' },
      unregistering: { colour: 'default', icon: 'loading' },
      registered: { colour: 'success', icon: 'phone' },
      unregistered: { colour: 'warning', icon: 'phone_locked' },
      error: { colour: 'error', icon: 'phone_disabled' },
      invalid_registration: { colour: 'error', icon: 'phone_locked' },
    });
  });
});
