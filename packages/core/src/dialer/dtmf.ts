/**
 * DTMF (spec part 2 §9 "Door tone"): the door opens on `#` lasting 160 ms with a 1200 ms gap; other tones
 * last 1000 ms. The gap after other tones is not in the spec: 70 ms, the WebRTC `RTCDTMFSender` default.
 */
import { Dialer } from '../constants';
import { isKeypadKey, type KeypadKey } from './numbers';

export interface DtmfTone {
  tone: KeypadKey;
  durationMs: number;
  /** the pause after this tone before the next one may be sent */
  gapMs: number;
}

/** The tones a key press sends, or none when the key is not a keypad key. */
export function dtmfTones(key: string): DtmfTone[] {
  if (!isKeypadKey(key)) return [];
  if (key === Dialer.doorTone.tone) {
    return [{ tone: key, durationMs: Dialer.doorTone.durationMs, gapMs: Dialer.doorTone.gapMs }];
  }
  return [{ tone: key, durationMs: Dialer.otherToneMs, gapMs: Dialer.otherToneGapMs }];
}

/** The door-open button: the door tone. */
export function doorOpenTones(): DtmfTone[] {
  return dtmfTones(Dialer.doorTone.tone);
}

/** The body of a SIP INFO carrying a tone (`application/dtmf-relay`), as door panels expect it. */
export function dtmfRelayBody(tone: DtmfTone): string {
  return `Signal=${tone.tone}\r\nDuration=${tone.durationMs}`;
}

export const DTMF_RELAY_CONTENT_TYPE = 'application/dtmf-relay';
