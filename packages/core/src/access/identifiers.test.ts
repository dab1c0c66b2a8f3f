import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CARD_MAX,
  checkGuestLimits,
  formatCardNumber,
  formatIdentifierValue,
  GuestKey,
  guestKeyToIdentifier,
  IdentifierCreate,
  identifierKey,
  identifierValueError,
  parseCardNumber,
  parseIdentifierValue,
  shapeRestrictions,
  shiftToUtc,
} from './identifiers';
import { fieldErrors } from '../validation';

describe('card and ukey numbers', () => {
  it('reads decimal digits and hex byte pairs, stored as one decimal number', () => {
    expect(parseCardNumber('12345678')).toEqual({ ok: true, value: '12345678' });
    expect(parseCardNumber('0012345678')).toEqual({ ok: true, value: '12345678' });
    expect(parseCardNumber('00BC614E', 'hex')).toEqual({ ok: true, value: '12345678' });
    expect(parseCardNumber('00:bc:61:4e', 'hex')).toEqual({ ok: true, value: '12345678' });
    expect(parseCardNumber('00 BC 61 4E', 'hex')).toEqual({ ok: true, value: '12345678' });
    expect(parseCardNumber('0xBC614E')).toEqual({ ok: true, value: '12345678' });
    expect(parseCardNumber('9999999999')).toEqual({ ok: true, value: String(CARD_MAX) });
  });

  it('refuses what is neither, and numbers past ten digits', () => {
    expect(parseCardNumber('')).toEqual({ ok: false, rule: 'required' });
    expect(parseCardNumber('12a4')).toEqual({ ok: false, rule: 'number_or_hex' });
    expect(parseCardNumber('BC614', 'hex')).toEqual({ ok: false, rule: 'number_or_hex' });
    expect(parseCardNumber('0A::1B', 'hex')).toEqual({ ok: false, rule: 'number_or_hex' });
    expect(parseCardNumber('10000000000')).toEqual({ ok: false, rule: 'card_range' });
    expect(parseCardNumber('02540BE400', 'hex')).toEqual({ ok: false, rule: 'card_range' });
    expect(parseCardNumber('-1')).toEqual({ ok: false, rule: 'number_or_hex' });
  });

  it('shows in the user format: hex byte pairs, at least four', () => {
    expect(formatCardNumber('12345678', 'hex')).toBe('00BC614E');
    expect(formatCardNumber('12345678', 'dec')).toBe('12345678');
    expect(formatCardNumber(String(CARD_MAX), 'hex')).toBe('02540BE3FF');
    expect(formatIdentifierValue('license_plate', 'A123BC77', 'hex')).toBe('A123BC77');
  });

  it('goes both ways for every number and format (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: CARD_MAX }), fc.constantFrom('dec', 'hex'), (n, format) => {
        const shown = formatCardNumber(String(n), format as 'dec' | 'hex');
        expect(parseCardNumber(shown, format as 'dec' | 'hex')).toEqual({ ok: true, value: String(n) });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('the other types', () => {
  it('checks each type value', () => {
    expect(parseIdentifierValue('access_code', '1234')).toEqual({ ok: true, value: '1234' });
    expect(parseIdentifierValue('access_code', '12')).toEqual({ ok: false, rule: 'digits' });
    expect(parseIdentifierValue('access_code', '12ab')).toEqual({ ok: false, rule: 'digits' });
    expect(parseIdentifierValue('access_code', '1'.repeat(17))).toEqual({ ok: false, rule: 'max_length' });
    const uuid = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';
    expect(parseIdentifierValue('qr', uuid)).toEqual({ ok: true, value: uuid.toLowerCase() });
    expect(parseIdentifierValue('qr', 'not-a-uuid')).toEqual({ ok: false, rule: 'uuid' });
    expect(parseIdentifierValue('license_plate', ' a 123-bc 77 ')).toEqual({ ok: true, value: 'A123BC77' });
    expect(parseIdentifierValue('license_plate', 'а123вс77')).toEqual({ ok: true, value: 'А123ВС77' });
    expect(parseIdentifierValue('license_plate', 'X'.repeat(101))).toEqual({ ok: false, rule: 'max_length' });
    expect(parseIdentifierValue('license_plate', ' - ')).toEqual({ ok: false, rule: 'required' });
    expect(parseIdentifierValue('url', 'https://example.org/k/1')).toEqual({
      ok: true,
      value: 'https://example.org/k/1',
    });
    expect(parseIdentifierValue('url', 'javascript:alert(1)')).toEqual({ ok: false, rule: 'url' });
    expect(parseIdentifierValue('card', 'ff', 'hex')).toEqual({ ok: true, value: '255' });
    expect(identifierKey('card', '255')).not.toBe(identifierKey('ukey', '255'));
    expect(identifierValueError('access_code', 'max_length')).toEqual({
      field: 'value',
      rule: 'max_length',
      params: { length: 16 },
    });
  });
});

describe('periods and pass limits (part 2 §5 data shaping)', () => {
  it('shifts the entered time by the client offset (_u)', () => {
    expect(shiftToUtc('2026-11-27T10:00:00', 180)).toBe('2026-11-27T07:00:00Z');
    expect(shiftToUtc('2026-11-27T10:00', -300)).toBe('2026-11-27T15:00:00Z');
  });

  it('sends 0 passes and null times when the restrictions are off', () => {
    expect(
      shapeRestrictions(
        {
          period_restrict_active: false,
          period_restrict_from: '2026-01-01T00:00:00',
          passes_restrict_active: false,
          passes_restrict_max_count: 5,
        },
        180,
      ),
    ).toEqual({
      period_restrict_active: false,
      period_restrict_from: null,
      period_restrict_to: null,
      period_restrict_from_u: null,
      period_restrict_to_u: null,
      passes_restrict_active: false,
      passes_restrict_max_count: 0,
    });
    const on = shapeRestrictions(
      {
        period_restrict_active: true,
        period_restrict_from: '2026-01-01T09:00:00',
        period_restrict_to: '2026-01-02T09:00:00',
        passes_restrict_active: true,
        passes_restrict_max_count: 2,
      },
      120,
    );
    expect(on.period_restrict_from_u).toBe('2026-01-01T07:00:00Z');
    expect(on.period_restrict_to_u).toBe('2026-01-02T07:00:00Z');
    expect(on.passes_restrict_max_count).toBe(2);
  });

  it('refuses a period that ends before it starts, and takes pass limits as numeric strings', () => {
    const input = {
      value: '1',
      period_restrict_active: true,
      period_restrict_from: '2026-02-01T00:00:00',
      period_restrict_to: '2026-01-01T00:00:00',
    };
    const bad = IdentifierCreate.safeParse(input);
    expect(bad.success).toBe(false);
    if (!bad.success)
      expect(fieldErrors(bad.error, input)).toContainEqual({
        field: 'period_restrict_to',
        rule: 'period_order',
      });
    const ok = IdentifierCreate.parse({ value: '1', passes_restrict_max_count: '3' });
    expect(ok.type).toBe('card');
    expect(ok.passes_restrict_max_count).toBe(3);
  });

  it('makes a guest key a QR identifier within the group limits', () => {
    const key = GuestKey.parse({
      selectedAccessRules: [4],
      restrictPassCount: true,
      passLimit: '2',
      restrictPeriod: true,
      validatePeriod: { from: '2026-11-27T10:00:00', to: '2026-11-28T10:00:00' },
    });
    const ident = guestKeyToIdentifier(key, 180);
    expect(ident).toMatchObject({
      name: 'Guest identifier',
      type: 'qr',
      owner_type: 'guest',
      owner: null,
      access_rules: [4],
      passes_restrict_max_count: 2,
      period_restrict_from_u: '2026-11-27T07:00:00Z',
    });
    expect(checkGuestLimits(ident, { max_passes_count: 5, max_period_days: 1 })).toBeNull();
    expect(checkGuestLimits(ident, { max_passes_count: 1, max_period_days: null })).toEqual({
      code: 'guest_limits_exceeded',
      data: { max_count: 1, max_days: null },
    });
    expect(
      checkGuestLimits(
        { ...ident, period_restrict_to_u: '2026-11-30T07:00:00Z' },
        { max_passes_count: null, max_period_days: 2 },
      ),
    ).toEqual({ code: 'guest_limits_exceeded', data: { max_count: null, max_days: 2 } });
    // a limit in force needs the restriction on
    expect(
      checkGuestLimits(shapeRestrictions({}, 0), { max_passes_count: 3, max_period_days: null }),
    ).not.toBeNull();
    expect(GuestKey.safeParse({ selectedAccessRules: [] }).success).toBe(false);
  });
});
