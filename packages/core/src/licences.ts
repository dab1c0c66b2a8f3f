import { z } from 'zod';
import { LicenseInfo } from './schemas';

/**
 * Licences (issue 15, spec part 1 §3 "License info", part 2 §7 "Licences"). A licence file is JSON:
 * `{format, payload, signature}` where `payload` is the base64 of the UTF-8 JSON of `LicencePayload` and
 * `signature` the base64 Ed25519 signature of those very bytes (no canonical form to agree on: the bytes
 * signed are the bytes carried). The server verifies it against its trusted vendor public keys.
 */
export const LICENCE_FORMAT = 'lintel-licence/1';

/** How often the licence warning is notified (spec part 2 §9: once, everyday, every week, every 30 days). */
export const LicenceNotifyModes = ['once', 'everyday', 'every_week', 'every_30_days'] as const;
export type LicenceNotifyMode = (typeof LicenceNotifyModes)[number];
/** Days between two notifications of each mode (`once`: never again for the same warning). */
export const LicenceNotifyEveryDays: Record<LicenceNotifyMode, number | null> = {
  once: null,
  everyday: 1,
  every_week: 7,
  every_30_days: 30,
};
/** spec part 2 §9: notify-before 14 days (mode everyday) */
export const LICENCE_NOTIFY_BEFORE_DAYS = 14;
/** the evaluation licence a fresh installation makes for itself */
export const EVALUATION_LICENCE_DAYS = 30;

export const LicencePayload = z
  .object({
    /** the licence's own id: one licence is added once per project */
    id: z.string().min(1).max(100),
    issuer: z.string().min(1).max(200),
    /** the project (instance id) the licence is for */
    instance_id: z.string().min(1).max(100),
    valid_from: z.iso.datetime({ offset: true }),
    valid_to: z.iso.datetime({ offset: true }),
    /** the feature set and counts (spec part 1 §3 License info) */
    features: LicenseInfo,
    /** one user licence equals this many virtual numbers, mobile devices or QR codes */
    units_per_licence: z.number().int().min(1).max(1000),
    issued_at: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type LicencePayload = z.infer<typeof LicencePayload>;

export const LicenceDocument = z.object({
  format: z.literal(LICENCE_FORMAT),
  payload: z.string().min(1).max(60_000),
  signature: z.string().min(1).max(200),
});
export type LicenceDocument = z.infer<typeof LicenceDocument>;

export const LicenceKinds = ['file', 'cloud', 'evaluation', 'manual'] as const;
/**
 * active: in force; ending: in force within the notify-before days; not_started; expired; disabled (switched
 * off); superseded: the evaluation licence within its period while a bought licence is in force. The list
 * view of spec part 1 §4 reads them as its three: active, ending, and disabled (the last four).
 */
export const LicenceStates = [
  'active',
  'ending',
  'not_started',
  'expired',
  'disabled',
  'superseded',
] as const;
export type LicenceState = (typeof LicenceStates)[number];

export const Licence = z.object({
  id: z.number().int(),
  licence_id: z.string().nullable(),
  kind: z.enum(LicenceKinds),
  issuer: z.string(),
  instance_id: z.string().nullable(),
  valid_from: z.string().nullable(),
  valid_to: z.string().nullable(),
  is_active: z.boolean(),
  state: z.enum(LicenceStates),
  /** whole days until valid_to (null: no end) */
  days_left: z.number().int().nullable(),
  features: LicenseInfo,
  units_per_licence: z.number().int(),
  created_at: z.string(),
});
export type Licence = z.infer<typeof Licence>;

export const LicenceList = z.object({
  /** the ids of the licences in force now (they stack: features add up, counts sum) */
  active_ids: z.array(z.number().int()),
  items: z.array(Licence),
  /** the licence in force that ends last, with its days left; null when none is in force */
  in_force: z
    .object({ id: z.number().int(), valid_to: z.string().nullable(), days_left: z.number().int().nullable() })
    .nullable(),
  /** this project's instance id, which a licence file must name */
  instance_id: z.string(),
  evaluation: z.boolean(),
});
export type LicenceList = z.infer<typeof LicenceList>;

const Usage = z.object({ used: z.number().int(), max: z.number().int().nullable() });
/** Feature usage state: each counted feature's use against the licences' count. */
export const LicenceUsage = z.object({
  sip_numbers_used: z.number().int(),
  mobile_app_used: z.number().int(),
  ukey2_used: z.number().int(),
  units_per_licence: z.number().int(),
  features: z.object({ sip: Usage, mobile_app: Usage, ukey2: Usage }),
});
export type LicenceUsage = z.infer<typeof LicenceUsage>;

export const LicenceNotifySettings = z.object({
  notify_before: z.coerce.number().int().min(1).max(365),
  mode: z.enum(LicenceNotifyModes),
});
export type LicenceNotifySettings = z.infer<typeof LicenceNotifySettings>;
