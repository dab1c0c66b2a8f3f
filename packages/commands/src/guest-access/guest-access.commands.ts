import { z } from 'zod';
import { GuestKey, GuestTypes } from '@lintel/core';
import { defineCommand } from '../command';
import { IdParam, savedReply } from '../resource';
import { Ref, Timestamp } from '../refs';

/** Who makes and manages guest passes (spec part 2 §6): either permission, with the guest licence flag. */
const GuestGates = {
  anyPermission: ['identifiers.create_guest', 'domains.own_guest_access'],
  licence: ['identifier.is_guest_enabled'],
} as const;

/**
 * Guest access (spec part 1 §2.4 guest dialog, §3 Guest key; part 2 §5 group guest limits, §7 guest access,
 * §8 guest errors): a guest pass is a QR identifier owned by a guest (`owner_type` guest, "Guest identifier"),
 * carrying access rules, a validity and a pass limit within the limits of its maker's groups, and a secret
 * key: the public page `/guest-access/{keyId}` shows the pass to whoever holds the key, and opens the doors
 * of its rules. The key is returned once, when the pass is made (only its hash is stored). A job deletes the
 * pass after its validity. docs/decisions.md "Guest access".
 */

/** What a guest pass's state is now (the server's clock): the first that holds of the list. */
export const GuestPassStates = ['revoked', 'expired', 'exhausted', 'not_yet_valid', 'valid'] as const;
export type GuestPassState = (typeof GuestPassStates)[number];

/** A guest pass as its maker sees it (never its key). */
export const GuestPass = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  /** the QR code's payload */
  value: z.string(),
  guest_type: z.enum(GuestTypes),
  access_rules: z.array(Ref),
  valid_from: z.string().nullable(),
  valid_to: z.string().nullable(),
  valid_from_u: Timestamp.nullable(),
  valid_to_u: Timestamp.nullable(),
  passes_restrict_active: z.boolean(),
  pass_limit: z.number().int(),
  passes_count: z.number().int(),
  state: z.enum(GuestPassStates),
  /** the address the pass was e-mailed to */
  email: z.string().nullable(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type GuestPass = z.infer<typeof GuestPass>;

/** An access rule a guest pass may carry (its devices by name). */
export const GuestAccessRule = z.object({ id: z.number().int(), name: z.string(), devices: z.array(Ref) });

/** The rules the caller may give a guest: shareable, permitting, within his reach. */
export const guestAccessRules = defineCommand({
  id: 'guest_access.access_rules',
  http: { method: 'GET', path: '/guest-access/access-rules' },
  args: z.object({}),
  result: z.object({ data: z.array(GuestAccessRule) }),
  gates: GuestGates,
});

/** The guest passes the caller may see: every one with `identifiers.view_all`, else those he made. */
export const guestAccessList = defineCommand({
  id: 'guest_access.list',
  http: { method: 'GET', path: '/guest-access' },
  args: z.object({}),
  result: z.object({ data: z.array(GuestPass) }),
  gates: {
    anyPermission: ['identifiers.view_all', 'identifiers.create_guest', 'domains.own_guest_access'],
    licence: ['identifier.is_guest_enabled'],
  },
});

/** The guest key of the form, and the guest's e-mail address the pass is sent to (when given). */
export const GuestAccessCreate = GuestKey.extend({ email: z.email().max(255).optional() }).strict();

/** A pass made: the pass, its key (shown this once) and the public page's address. */
export const GuestAccessCreated = z.object({ data: GuestPass, key_id: z.string(), url: z.string() });

/** Makes a guest pass (spec "Guest key PUT"; part 2 §5 group guest limits). */
export const guestAccessCreate = defineCommand({
  id: 'guest_access.create',
  http: { method: 'POST', path: '/guest-access' },
  args: GuestAccessCreate,
  result: GuestAccessCreated,
  gates: GuestGates,
});

/** A change of a pass: its rules, validity, pass limit, name (the key stays). */
export const GuestAccessUpdate = z
  .object({
    selectedAccessRules: z.array(z.number().int().positive()).min(1).max(1000),
    restrictPassCount: z.boolean(),
    passLimit: z.preprocess(
      (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
      z.number().int().min(0).max(1_000_000),
    ),
    restrictPeriod: z.boolean(),
    validatePeriod: GuestKey.shape.validatePeriod.unwrap().unwrap(),
    name: z.string().trim().max(255),
    description: z.string().max(1000),
  })
  .partial()
  .strict();

/** Changes a guest pass within the same limits (spec "Guest key PATCH"). */
export const guestAccessUpdate = defineCommand({
  id: 'guest_access.update',
  http: { method: 'PATCH', path: '/guest-access/:id' },
  args: IdParam.extend(GuestAccessUpdate.shape).strict(),
  result: savedReply(GuestPass),
  gates: GuestGates,
});

/** Deletes a guest pass now (its identifier goes with it, and leaves the devices). */
export const guestAccessDelete = defineCommand({
  id: 'guest_access.delete',
  http: { method: 'DELETE', path: '/guest-access/:id' },
  args: IdParam,
  result: z.object({ deleted: z.literal(true) }),
  gates: GuestGates,
});

/** The key of a pass as its public address carries it. */
export const GuestKeyParam = z.object({ key_id: z.string().trim().min(16).max(128) });

/** What the public page shows of a pass: nothing of its maker, its rules or other passes. */
export const PublicGuestPass = z.object({
  name: z.string(),
  /** the QR code's payload, shown as a QR code to the panel's reader */
  qr: z.string(),
  /** the QR code as an image the page shows: an SVG data URL */
  qr_image: z.string(),
  /** the pass can be added to Apple Wallet (`guest_access.wallet_pass`): the project's wallet settings sign */
  wallet_enabled: z.boolean(),
  valid_from_u: Timestamp.nullable(),
  valid_to_u: Timestamp.nullable(),
  pass_limit: z.number().int().nullable(),
  passes_count: z.number().int(),
  state: z.enum(['valid', 'not_yet_valid']),
  /** the doors the pass opens, each by a token that names it for this pass only */
  devices: z.array(z.object({ token: z.string(), name: z.string() })),
});
export type PublicGuestPass = z.infer<typeof PublicGuestPass>;

/** The public page's pass (spec "Guest access: info by key"): no sign-in, the key is the credential. */
export const guestAccessInfo = defineCommand({
  id: 'guest_access.info',
  http: { method: 'GET', path: '/guest-access/key/:key_id' },
  args: GuestKeyParam,
  result: PublicGuestPass,
  access: 'public',
});

/** Opens a door of the pass by its device token (spec "open by device token"), rate-limited, counted. */
export const guestAccessOpen = defineCommand({
  id: 'guest_access.open',
  http: { method: 'POST', path: '/guest-access/key/:key_id/open' },
  args: GuestKeyParam.extend({ device: z.string().trim().min(1).max(64) }),
  result: z.object({
    opened: z.literal(true),
    device: z.string(),
    passes_count: z.number().int(),
    pass_limit: z.number().int().nullable(),
  }),
  access: 'public',
});

/**
 * The pass as an Apple Wallet pass, for the guest (issue 21 item 1, beyond the spec's signed-in download):
 * `GET /guest-access/key/{keyId}/wallet-pass`, a `.pkpass` signed with the project's wallet settings;
 * `wallet_certificate_missing` while they hold none. The key is the credential, as for the page.
 */
export const guestAccessWalletPass = defineCommand({
  id: 'guest_access.wallet_pass',
  http: { method: 'GET', path: '/guest-access/key/:key_id/wallet-pass' },
  args: GuestKeyParam,
  /** the .pkpass */
  result: z.unknown(),
  access: 'public',
  hidden: true,
});
