import { describe, expect, it } from 'vitest';
import { Dialer } from '../constants';
import { DTMF_RELAY_CONTENT_TYPE, doorOpenTones, dtmfRelayBody, dtmfTones } from './dtmf';
import { answeredByNumber, isKeypadKey, normaliseNumber, planCall, pressKey, sameNumber } from './numbers';

describe('the keypad and numbers', () => {
  it('has the keys 1–9, *, 0, #', () => {
    expect(Dialer.keypad.join('')).toBe('123456789*0#');
    expect(isKeypadKey('5')).toBe(true);
    expect(isKeypadKey('a')).toBe(false);
    expect(pressKey(pressKey('12', '#'), 'backspace')).toBe('12');
    expect(pressKey('', 'backspace')).toBe('');
    expect(pressKey('1', 'x' as never)).toBe('1');
  });

  it('normalises a number: separators and blanks out, digits * # and a leading + kept', () => {
    expect(normaliseNumber(' +7 (812) 555-01.02 ')).toBe('+78125550102');
    expect(normaliseNumber('*21#')).toBe('*21#');
    expect(normaliseNumber('sip:1001')).toBe('1001');
    expect(normaliseNumber('')).toBe('');
  });

  it('reads the number of answered_by before the dash', () => {
    expect(answeredByNumber('1002-7f3a')).toBe('1002');
    expect(answeredByNumber('1002')).toBe('1002');
    expect(answeredByNumber(null)).toBeNull();
    expect(answeredByNumber('-x')).toBeNull();
    expect(sameNumber('10 01', '1001')).toBe(true);
    expect(sameNumber('', '')).toBe(false);
  });

  it('a voice call needs a number', () => {
    expect(planCall({ entry: '', video: false, ownNumber: '1001', lastNumber: '2002' })).toEqual({
      ok: false,
      code: 'call_number_required',
    });
    expect(planCall({ entry: '2003', video: false, ownNumber: '1001', lastNumber: '2002' })).toEqual({
      ok: true,
      number: '2003',
      video: false,
    });
  });

  it('video with no number calls the last number, and needs one', () => {
    expect(planCall({ entry: '', video: true, ownNumber: '1001', lastNumber: '2002' })).toEqual({
      ok: true,
      number: '2002',
      video: true,
    });
    expect(planCall({ entry: '', video: true, ownNumber: '1001', lastNumber: null })).toEqual({
      ok: false,
      code: 'call_number_required',
    });
  });

  it('refuses one own number ("Unable to call your number")', () => {
    expect(planCall({ entry: '10-01', video: false, ownNumber: '1001', lastNumber: null })).toEqual({
      ok: false,
      code: 'own_number_call',
    });
  });
});

describe('DTMF (spec part 2 §9)', () => {
  it('the door tone is # for 160 ms with a 1200 ms gap', () => {
    expect(doorOpenTones()).toEqual([{ tone: '#', durationMs: 160, gapMs: 1200 }]);
    expect(dtmfTones('#')).toEqual(doorOpenTones());
  });

  it('other tones last 1000 ms; what is not on the keypad sends nothing', () => {
    for (const key of ['0', '1', '9', '*']) {
      expect(dtmfTones(key)).toEqual([{ tone: key, durationMs: 1000, gapMs: Dialer.otherToneGapMs }]);
    }
    expect(dtmfTones('A')).toEqual([]);
    expect(dtmfTones('12')).toEqual([]);
  });

  it('the SIP INFO body door panels read', () => {
    expect(dtmfRelayBody(doorOpenTones()[0]!)).toBe('Signal=#\r\nDuration=160');
    expect(DTMF_RELAY_CONTENT_TYPE).toBe('application/dtmf-relay');
  });
});
