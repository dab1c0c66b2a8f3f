/**
 * Identifiers (spec part 1 §3 Identifier, Guest key; part 2 §5 data shaping): the types, each type's value
 * format, the user's `identifier_format` (dec / hex) both ways, and the records and inputs of the families.
 * Pure: the server, the console, the CLI and the simulator read the same rules.
 */
import { z } from 'zod';
import { IdentifierTypes } from '../constants';

export type IdentifierType = (typeof IdentifierTypes)[number];
export type IdentifierFormatCode = 'dec' | 'hex';

/** Card and ukey numbers: up to 10 decimal digits, so at most 9,999,999,999 (five bytes in hex). */
export const CARD_MAX = 9_999_999_999;
/** Access codes typed on a keypad: digits only, 4 to 16 of them (docs/decisions.md). */
export const AccessCodeLength = { min: 4, max: 16 } as const;
/** A licence plate: 1 to 100 characters (../shared/DEVICES.md). */
export const PlateLength = { min: 1, max: 100 } as const;
export const UrlMaxLength = 2048;

/** The types whose value the server makes (a UUID), never typed. */
export const GeneratedValueTypes: readonly IdentifierType[] = ['qr', 'face'];
/** The types that show in the user's identifier format. */
export const NumberedTypes: readonly IdentifierType[] = ['card', 'ukey'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a value failed: the field rule (part 2 §5) reported on `value`. */
export type ValueProblem =
  'required' | 'number_or_hex' | 'card_range' | 'digits' | 'uuid' | 'max_length' | 'url';

export type ParsedValue = { ok: true; value: string } | { ok: false; rule: ValueProblem };

/**
 * A card or ukey number as typed, read in the user's format: `dec` — digits; `hex` — byte pairs (`0A1B2C3D`,
 * `0a:1b:2c:3d`, `0A 1B 2C 3D`, `0A-1B-…`); `0x…` is hex in either format. The stored value is the
 * number in decimal without leading zeros (one number, one value, whatever was typed).
 */
export function parseCardNumber(input: string, format: IdentifierFormatCode = 'dec'): ParsedValue {
  const s = input.trim();
  if (!s) return { ok: false, rule: 'required' };
  let n: number;
  const prefixed = /^0x/i.test(s);
  if (format === 'hex' || prefixed) {
    const body = (prefixed ? s.slice(2) : s).replace(/[\s:-]/g, '');
    if (!/^(?:[0-9a-f]{2})+$/i.test(body) || /[\s:-]{2}/.test(s)) return { ok: false, rule: 'number_or_hex' };
    if (body.replace(/^0+/, '').length > 10) return { ok: false, rule: 'card_range' };
    n = parseInt(body, 16);
  } else {
    if (!/^\d+$/.test(s)) return { ok: false, rule: 'number_or_hex' };
    if (s.length > 10) return { ok: false, rule: 'card_range' };
    n = Number(s);
  }
  if (n > CARD_MAX) return { ok: false, rule: 'card_range' };
  return { ok: true, value: String(n) };
}

/** A stored card or ukey number shown in a format: `dec` as is; `hex` upper-case byte pairs, at least four. */
export function formatCardNumber(value: string, format: IdentifierFormatCode = 'dec'): string {
  if (format === 'dec' || !/^\d{1,10}$/.test(value)) return value;
  const hex = Number(value).toString(16).toUpperCase();
  return hex.padStart(Math.max(8, hex.length + (hex.length % 2)), '0');
}

/** A licence plate as compared and sent: upper case, without spaces or dashes (`a 123-bc 77` → `A123BC77`). */
export function normalisePlate(input: string): string {
  return input
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '');
}

/**
 * Any identifier's value as typed, checked and made canonical for its type. `qr` and `face` take a UUID (the
 * server makes one when none is given: see `newIdentifierValue`).
 */
export function parseIdentifierValue(
  type: IdentifierType,
  input: string,
  format: IdentifierFormatCode = 'dec',
): ParsedValue {
  const s = input.trim();
  switch (type) {
    case 'card':
    case 'ukey':
      return parseCardNumber(s, format);
    case 'access_code':
      if (!s) return { ok: false, rule: 'required' };
      if (!/^\d+$/.test(s) || s.length < AccessCodeLength.min) return { ok: false, rule: 'digits' };
      if (s.length > AccessCodeLength.max) return { ok: false, rule: 'max_length' };
      return { ok: true, value: s };
    case 'qr':
    case 'face':
    case 'ukey2':
      if (!s) return { ok: false, rule: 'required' };
      return UUID.test(s) ? { ok: true, value: s.toLowerCase() } : { ok: false, rule: 'uuid' };
    case 'license_plate': {
      const v = normalisePlate(s);
      if (!v) return { ok: false, rule: 'required' };
      return v.length > PlateLength.max ? { ok: false, rule: 'max_length' } : { ok: true, value: v };
    }
    case 'url': {
      if (!s) return { ok: false, rule: 'required' };
      if (s.length > UrlMaxLength) return { ok: false, rule: 'max_length' };
      try {
        const u = new URL(s);
        return u.protocol === 'http:' || u.protocol === 'https:'
          ? { ok: true, value: s }
          : { ok: false, rule: 'url' };
      } catch {
        return { ok: false, rule: 'url' };
      }
    }
  }
}

/** A stored value shown to a user in his `identifier_format` (only card and ukey change). */
export function formatIdentifierValue(
  type: IdentifierType,
  value: string,
  format: IdentifierFormatCode = 'dec',
): string {
  return NumberedTypes.includes(type) ? formatCardNumber(value, format) : value;
}

/** The value the server makes for a type that has no typed value (a QR code, a face): a UUID. */
export function newIdentifierValue(uuid: () => string = () => crypto.randomUUID()): string {
  return uuid().toLowerCase();
}

/** What makes two identifiers the same ("identifier duplicate (number and type)"): type and stored value. */
export const identifierKey = (type: IdentifierType, value: string): string => `${type}:${value}`;

/** The identifier types of ../shared/DEVICES.md, by ours; null: not held by a device (url, ukey2). */
export const DeviceIdentifierTypes = {
  card: 'card',
  ukey: 'ukey',
  access_code: 'inputCode',
  face: 'face_id',
  qr: 'qr',
  license_plate: 'license_plate',
  url: null,
  ukey2: null,
} as const satisfies Record<IdentifierType, string | null>;
export type DeviceIdentifierType = NonNullable<(typeof DeviceIdentifierTypes)[IdentifierType]>;

// ----- periods: as entered and shifted (`_u`) ---------------------------------------------------------------

/** A wall-clock date and time as the user typed it, without an offset: `2026-11-27T10:00:00`. */
const LocalDateTime = z.iso.datetime({ local: true });
/** An instant, UTC: `2026-11-27T08:00:00Z`. */
const Instant = z.iso.datetime();

/**
 * The `_u` variant of a period time: what the user typed, shifted by his time-zone offset (minutes east of
 * UTC, as `-new Date().getTimezoneOffset()` gives) — the instant the server and the devices compare with.
 */
export function shiftToUtc(entered: string, offsetMinutes: number): string {
  const ms = Date.parse(`${entered.length === 16 ? `${entered}:00` : entered}Z`);
  if (Number.isNaN(ms)) throw new RangeError(`not a local date and time: ${entered}`);
  return new Date(ms - offsetMinutes * 60_000).toISOString().replace('.000Z', 'Z');
}

// ----- records and inputs -------------------------------------------------------------------------------------

export const IdentifierTypeSchema = z.enum(IdentifierTypes);
export const GuestTypes = ['guest'] as const;
export const OwnerTypes = ['user', 'guest'] as const;

const idList = (max = 10_000) => z.array(z.number().int().positive()).max(max);
const numeric = (v: unknown) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v);

/** An identifier as the API sends it (spec part 1 §3). */
export const Identifier = z.object({
  id: z.number().int(),
  name: z.string(),
  type: IdentifierTypeSchema,
  value: z.string(),
  is_active: z.boolean(),
  owner_type: z.enum(OwnerTypes),
  /** the owning user's id; null for a guest identifier */
  owner: z.number().int().nullable(),
  description: z.string(),
  period_restrict_active: z.boolean(),
  period_restrict_from: LocalDateTime.nullable(),
  period_restrict_to: LocalDateTime.nullable(),
  period_restrict_from_u: Instant.nullable(),
  period_restrict_to_u: Instant.nullable(),
  passes_restrict_active: z.boolean(),
  passes_restrict_max_count: z.number().int().min(0),
  /** passes the devices reported */
  passes_count: z.number().int().min(0),
  access_rules: z.array(z.number().int()),
  guest_type: z.enum(GuestTypes).nullable(),
  photo: z.string().nullable(),
});
export type Identifier = z.output<typeof Identifier>;

const IdentifierFields = z.object({
  name: z.string().trim().max(255).optional(),
  type: IdentifierTypeSchema.default('card'),
  /** as typed, in the caller's `identifier_format` for card and ukey; made by the server for qr and face */
  value: z.string().max(UrlMaxLength).optional(),
  is_active: z.boolean().optional(),
  owner_type: z.enum(OwnerTypes).optional(),
  owner: z.number().int().positive().nullable().optional(),
  description: z.string().max(1000).optional(),
  period_restrict_active: z.boolean().optional(),
  period_restrict_from: LocalDateTime.nullable().optional(),
  period_restrict_to: LocalDateTime.nullable().optional(),
  period_restrict_from_u: Instant.nullable().optional(),
  period_restrict_to_u: Instant.nullable().optional(),
  passes_restrict_active: z.boolean().optional(),
  passes_restrict_max_count: z.preprocess(numeric, z.number().int().min(0).max(1_000_000)).optional(),
  access_rules: idList(1000).optional(),
  guest_type: z.enum(GuestTypes).nullable().optional(),
});

/** The period's end is not before its start (on the `_u` instants, else as entered). */
function periodOrder(
  v: {
    period_restrict_active?: boolean;
    period_restrict_from?: string | null;
    period_restrict_to?: string | null;
    period_restrict_from_u?: string | null;
    period_restrict_to_u?: string | null;
  },
  ctx: z.RefinementCtx,
): void {
  if (!v.period_restrict_active) return;
  const from = v.period_restrict_from_u ?? v.period_restrict_from;
  const to = v.period_restrict_to_u ?? v.period_restrict_to;
  if (
    from &&
    to &&
    Date.parse(from.endsWith('Z') ? from : `${from}Z`) > Date.parse(to.endsWith('Z') ? to : `${to}Z`)
  )
    ctx.addIssue({ code: 'custom', path: ['period_restrict_to'], message: 'period_order' });
}

/**
 * A new identifier is active unless it says otherwise: the console's form starts with "Active" ticked (an
 * unticked checkbox is sent as `false`, and made every identifier added from the console a revoked one).
 */
export const IdentifierCreate = IdentifierFields.extend({ is_active: z.boolean().default(true) }).superRefine(
  periodOrder,
);
export type IdentifierCreate = z.output<typeof IdentifierCreate>;
export const IdentifierUpdate = IdentifierFields.extend({ type: IdentifierTypeSchema.optional() })
  .partial()
  .superRefine(periodOrder);
export type IdentifierUpdate = z.output<typeof IdentifierUpdate>;

/**
 * The guest key of the guest-access form (spec part 1 §3 "Guest key"): a QR identifier for a guest. Its
 * names are the console's (camelCase, as the spec gives them); `guestKeyToIdentifier` makes the identifier.
 */
export const GuestKey = z.object({
  type: z.literal('qr').default('qr'),
  selectedAccessRules: idList(1000).min(1),
  guestType: z.enum(GuestTypes).default('guest'),
  restrictPassCount: z.boolean().default(false),
  passLimit: z.preprocess(numeric, z.number().int().min(0).max(1_000_000)).default(0),
  restrictPeriod: z.boolean().default(false),
  /** `{from, to}` as entered (local) and, like the identifier's `_u`, as instants */
  validatePeriod: z
    .object({
      from: LocalDateTime.nullable(),
      to: LocalDateTime.nullable(),
      from_u: Instant.nullable().optional(),
      to_u: Instant.nullable().optional(),
    })
    .nullable()
    .default(null),
  name: z.string().trim().max(255).optional(),
  description: z.string().max(1000).optional(),
});
export type GuestKey = z.output<typeof GuestKey>;

/** The shaped fields a write stores: what part 2 §5 "Data shaping before sending" asks, done once for all. */
export interface ShapedRestrictions {
  period_restrict_active: boolean;
  period_restrict_from: string | null;
  period_restrict_to: string | null;
  period_restrict_from_u: string | null;
  period_restrict_to_u: string | null;
  passes_restrict_active: boolean;
  passes_restrict_max_count: number;
}

/**
 * Part 2 §5: the pass limit is 0 when the pass restriction is off; period times are null when the period
 * restriction is off; the `_u` times are the entered ones shifted by the client's offset (kept when the
 * client sent them, made from `offsetMinutes` when not).
 */
export function shapeRestrictions(
  input: Partial<ShapedRestrictions>,
  offsetMinutes: number,
): ShapedRestrictions {
  const period = input.period_restrict_active === true;
  const passes = input.passes_restrict_active === true;
  const from = period ? (input.period_restrict_from ?? null) : null;
  const to = period ? (input.period_restrict_to ?? null) : null;
  return {
    period_restrict_active: period,
    period_restrict_from: from,
    period_restrict_to: to,
    period_restrict_from_u: from ? (input.period_restrict_from_u ?? shiftToUtc(from, offsetMinutes)) : null,
    period_restrict_to_u: to ? (input.period_restrict_to_u ?? shiftToUtc(to, offsetMinutes)) : null,
    passes_restrict_active: passes,
    passes_restrict_max_count: passes ? (input.passes_restrict_max_count ?? 0) : 0,
  };
}

/** A guest key as the identifier it makes (type qr, owner a guest, named "Guest identifier" by default). */
export function guestKeyToIdentifier(
  key: GuestKey,
  offsetMinutes: number,
  guestName = 'Guest identifier',
): IdentifierCreate & ShapedRestrictions {
  return {
    name: key.name ?? guestName,
    type: 'qr',
    is_active: true,
    owner_type: 'guest',
    owner: null,
    guest_type: key.guestType,
    access_rules: key.selectedAccessRules,
    ...(key.description !== undefined ? { description: key.description } : {}),
    ...shapeRestrictions(
      {
        period_restrict_active: key.restrictPeriod,
        period_restrict_from: key.validatePeriod?.from ?? null,
        period_restrict_to: key.validatePeriod?.to ?? null,
        ...(key.validatePeriod?.from_u !== undefined
          ? { period_restrict_from_u: key.validatePeriod.from_u }
          : {}),
        ...(key.validatePeriod?.to_u !== undefined ? { period_restrict_to_u: key.validatePeriod.to_u } : {}),
        passes_restrict_active: key.restrictPassCount,
        passes_restrict_max_count: key.passLimit,
      },
      offsetMinutes,
    ),
  };
}

/** A group's guest limits (spec part 1 §3 Group `guest_identifier_limits`); null: no limit of that kind. */
export interface GuestIdentifierLimits {
  max_passes_count: number | null;
  max_period_days: number | null;
}

/**
 * A guest identifier within its group's limits, or the catalogue's refusal (`guest_limits_exceeded` with
 * `{max_count, max_days}`, part 2 §8 "limits max count {max_count} and max period days {max_days}"). With a
 * pass limit in force the guest must have one (no unrestricted passes), and so for the period.
 */
export function checkGuestLimits(
  r: ShapedRestrictions,
  limits: GuestIdentifierLimits | null | undefined,
): { code: 'guest_limits_exceeded'; data: { max_count: number | null; max_days: number | null } } | null {
  if (!limits) return null;
  const maxCount = limits.max_passes_count;
  const maxDays = limits.max_period_days;
  const fail = { code: 'guest_limits_exceeded' as const, data: { max_count: maxCount, max_days: maxDays } };
  if (maxCount !== null && (!r.passes_restrict_active || r.passes_restrict_max_count > maxCount)) return fail;
  if (maxDays !== null) {
    const from = r.period_restrict_from_u;
    const to = r.period_restrict_to_u;
    if (!r.period_restrict_active || !from || !to) return fail;
    if (Date.parse(to) - Date.parse(from) > maxDays * 86_400_000) return fail;
  }
  return null;
}

/** A value's problem as the field error a reply carries (`{field: 'value', rule, params}`, part 2 §5). */
export function identifierValueError(
  type: IdentifierType,
  rule: ValueProblem,
): { field: 'value'; rule: ValueProblem; params?: Record<string, number> } {
  switch (rule) {
    case 'card_range':
      return { field: 'value', rule, params: { max: CARD_MAX } };
    case 'digits':
      return { field: 'value', rule, params: { min: AccessCodeLength.min, max: AccessCodeLength.max } };
    case 'max_length':
      return {
        field: 'value',
        rule,
        params: {
          length:
            type === 'access_code'
              ? AccessCodeLength.max
              : type === 'license_plate'
                ? PlateLength.max
                : UrlMaxLength,
        },
      };
    default:
      return { field: 'value', rule };
  }
}
