/**
 * The dialer's number rules (spec part 1 §2.5 keypad, part 2 §5 "Calls" and "Keypad"): what the keypad
 * accepts, how an entered number is normalised, and whether a call may be placed.
 */
import { Dialer } from '../constants';
import type { ErrorKey } from '../errors';

export type KeypadKey = (typeof Dialer.keypad)[number];

const KEYPAD = new Set<string>(Dialer.keypad);

/** Whether a key belongs to the keypad (1–9, *, 0, #). */
export function isKeypadKey(key: string): key is KeypadKey {
  return KEYPAD.has(key);
}

/**
 * A number as dialled: surrounding blanks and the separators people paste (spaces, dashes, dots,
 * parentheses) removed; digits, `*`, `#` and one leading `+` kept; anything else dropped. SIP numbers are
 * digits (the `sip_number_digits` rule); `*` and `#` stay for service codes.
 */
export function normaliseNumber(input: string): string {
  const trimmed = input.trim();
  const plus = trimmed.startsWith('+') ? '+' : '';
  return plus + trimmed.replace(/[^0-9*#]/g, '');
}

/** The number of a server call's `answered_by` ("the number before a dash"). */
export function answeredByNumber(answeredBy: string | null | undefined): string | null {
  if (answeredBy == null) return null;
  const number = normaliseNumber(answeredBy.split('-')[0] ?? '');
  return number === '' ? null : number;
}

/** Whether two numbers are the same once normalised (an empty number is nobody's). */
export function sameNumber(a: string | null | undefined, b: string | null | undefined): boolean {
  if (a == null || b == null) return false;
  const na = normaliseNumber(a);
  return na !== '' && na === normaliseNumber(b);
}

/** The keypad entry after a key press: a keypad key appends, `backspace` removes the last character. */
export function pressKey(entry: string, key: KeypadKey | 'backspace'): string {
  if (key === 'backspace') return entry.slice(0, -1);
  return isKeypadKey(key) ? entry + key : entry;
}

export type CallPlan = { ok: true; number: string; video: boolean } | { ok: false; code: ErrorKey };

/**
 * Whether the keypad may place a call: a voice call needs a number (`call_number_required`); a video call
 * with no number calls the last number (and needs one); one's own number is refused
 * (`own_number_call`, "Unable to call your number").
 */
export function planCall(input: {
  entry: string;
  video: boolean;
  ownNumber: string | null;
  lastNumber: string | null;
}): CallPlan {
  let number = normaliseNumber(input.entry);
  if (number === '' && input.video && input.lastNumber) number = normaliseNumber(input.lastNumber);
  if (number === '') return { ok: false, code: 'call_number_required' };
  if (sameNumber(number, input.ownNumber)) return { ok: false, code: 'own_number_call' };
  return { ok: true, number, video: input.video };
}
