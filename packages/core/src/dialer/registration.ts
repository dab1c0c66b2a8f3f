/**
 * The dialer's registration (spec part 1 §4 "Dialer registration", §2.5 "Dialer button"): the states
 * registering, registered, unregistering, unregistered, error and invalid_registration; a transport error
 * retries every 5 s, an invalid registration every 30 s; registering or unregistered stops the retries.
 * Pure: the retries are effects with a delay, the sip.js layer keeps the one timer.
 */
import { Dialer } from '../constants';

export const RegistrationStates = [
  'registering',
  'registered',
  'unregistering',
  'unregistered',
  'error',
  'invalid_registration',
] as const;
export type RegistrationState = (typeof RegistrationStates)[number];

export interface Registration {
  state: RegistrationState;
  /** whether the user wants the dialer registered (false after unregister: no retry then) */
  wanted: boolean;
  /** a retry is scheduled (the layer holds the timer) */
  retryPending: boolean;
}

export type RegistrationEvent =
  /** the user (or the page opening) asks to register */
  | { type: 'register' }
  /** the user asks to unregister */
  | { type: 'unregister' }
  /** the registrar accepted the REGISTER */
  | { type: 'registered' }
  /** the un-REGISTER completed (or the registerer stopped) */
  | { type: 'unregistered' }
  /** the websocket failed or closed */
  | { type: 'transport_error' }
  /** the registrar refused the credentials (a final 4xx to REGISTER) */
  | { type: 'rejected' }
  /** the retry timer fired */
  | { type: 'retry' };

export type RegistrationEffect =
  | { type: 'send_register' }
  | { type: 'send_unregister' }
  | { type: 'schedule_retry'; delayMs: number }
  | { type: 'cancel_retry' };

export const initialRegistration: Registration = {
  state: 'unregistered',
  wanted: false,
  retryPending: false,
};

function cancel(r: Registration): RegistrationEffect[] {
  return r.retryPending ? [{ type: 'cancel_retry' }] : [];
}

export function reduceRegistration(
  r: Registration,
  event: RegistrationEvent,
): { state: Registration; effects: RegistrationEffect[] } {
  switch (event.type) {
    case 'register':
      if (r.state === 'registering' || r.state === 'registered')
        return { state: { ...r, wanted: true }, effects: [] };
      return {
        state: { state: 'registering', wanted: true, retryPending: false },
        effects: [...cancel(r), { type: 'send_register' }],
      };
    case 'unregister':
      if (r.state === 'unregistered' || r.state === 'unregistering') {
        return { state: { ...r, wanted: false, retryPending: false }, effects: cancel(r) };
      }
      if (r.state === 'error' || r.state === 'invalid_registration') {
        // nothing registered to take back: straight to unregistered
        return { state: { state: 'unregistered', wanted: false, retryPending: false }, effects: cancel(r) };
      }
      return {
        state: { state: 'unregistering', wanted: false, retryPending: false },
        effects: [...cancel(r), { type: 'send_unregister' }],
      };
    case 'registered':
      if (!r.wanted) return { state: r, effects: [] };
      return { state: { state: 'registered', wanted: true, retryPending: false }, effects: cancel(r) };
    case 'unregistered':
      return { state: { state: 'unregistered', wanted: r.wanted, retryPending: false }, effects: cancel(r) };
    case 'transport_error':
      if (!r.wanted)
        return { state: { state: 'unregistered', wanted: false, retryPending: false }, effects: cancel(r) };
      return {
        state: { state: 'error', wanted: true, retryPending: true },
        effects: [...cancel(r), { type: 'schedule_retry', delayMs: Dialer.retryAfterErrorMs }],
      };
    case 'rejected':
      if (!r.wanted)
        return { state: { state: 'unregistered', wanted: false, retryPending: false }, effects: cancel(r) };
      return {
        state: { state: 'invalid_registration', wanted: true, retryPending: true },
        effects: [...cancel(r), { type: 'schedule_retry', delayMs: Dialer.retryAfterInvalidRegistrationMs }],
      };
    case 'retry':
      // a timer that fired after the state moved on is stale
      if (!r.retryPending || !r.wanted || (r.state !== 'error' && r.state !== 'invalid_registration')) {
        return { state: { ...r, retryPending: false }, effects: [] };
      }
      return {
        state: { state: 'registering', wanted: true, retryPending: false },
        effects: [{ type: 'send_register' }],
      };
  }
}

export type DialerButtonColour = 'default' | 'success' | 'warning' | 'error';
export type DialerButtonIcon = 'loading' | 'phone' | 'phone_locked' | 'phone_disabled';

/** The dialer button (spec part 1 §2.5): what the console renders for a registration state. */
export function dialerButton(state: RegistrationState): {
  colour: DialerButtonColour;
  icon: DialerButtonIcon;
} {
  switch (state) {
    case 'registering':
    case 'unregistering':
      return { colour: 'default', icon: 'loading' };
    case 'registered':
      return { colour: 'success', icon: 'phone' };
    case 'unregistered':
      return { colour: 'warning', icon: 'phone_locked' };
    case 'error':
      return { colour: 'error', icon: 'phone_disabled' };
    case 'invalid_registration':
      return { colour: 'error', icon: 'phone_locked' };
  }
}
