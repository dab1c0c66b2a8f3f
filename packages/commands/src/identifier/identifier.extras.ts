import { z } from 'zod';
import { IdentifierTypes, Timeouts } from '@lintel/core';
import { defineCommand } from '../command';
import { ImportRowError } from '../user/user.import';
import { IdParam, savedReply } from '../resource';
import { Identifier } from './identifier.resource';
import { fileArg } from '../upload';

/**
 * Revokes an identifier (spec part 1 §4: active → revoked): the devices refuse it from then on, and the
 * decision says `identifier_revoked`. Revoking a revoked identifier changes nothing.
 */
export const identifierRevoke = defineCommand({
  id: 'identifier.revoke',
  http: { method: 'POST', path: '/identifiers/:id/revoke' },
  args: IdParam,
  result: savedReply(Identifier),
  gates: { anyPermission: ['identifiers.edit'] },
});

export const MAX_IDENTIFIER_IMPORT_NAME = 255;
export const MAX_IDENTIFIER_IMPORT_DESCRIPTION = 1000;
/** The type of a row that names none. */
export const DEFAULT_IDENTIFIER_IMPORT_TYPE = 'card' satisfies (typeof IdentifierTypes)[number];

// The limits above are declared once: the schema below and its fast path (`parseIdentifierImportRow`) both
// read them, the fast path takes its columns from the schema's shape, and a test holds the two alike.

/**
 * One row of an identifier import (the columns of a file: CSV header, XLSX first row, JSON keys), as the
 * stream carries it. `value` is read in the importing user's identifier format, like a typed one; `owner`
 * is a user id; a QR or face row without a value gets one made.
 */
export const IdentifierImportRow = z.object({
  type: z.enum(IdentifierTypes).default(DEFAULT_IDENTIFIER_IMPORT_TYPE),
  value: z.union([z.string(), z.number()]).optional(),
  name: z.string().max(MAX_IDENTIFIER_IMPORT_NAME).optional(),
  owner: z.union([z.number().int(), z.string()]).nullable().optional(),
  description: z.string().max(MAX_IDENTIFIER_IMPORT_DESCRIPTION).optional(),
});
export type IdentifierImportRow = z.infer<typeof IdentifierImportRow>;

const IDENTIFIER_ROW_KEYS = new Set<string>(Object.keys(IdentifierImportRow.shape));
const IDENTIFIER_TYPES = new Set<string>(IdentifierImportRow.shape.type.removeDefault().options);

/**
 * `IdentifierImportRow.safeParse`, with a fast path for a row of known columns holding plain values (what
 * every file gives): the same result without the schema's walk, at an import's hundred thousand rows.
 * Anything else goes through the schema, whose answer (and issues) count. A test holds the two alike.
 */
export function parseIdentifierImportRow(value: unknown): ReturnType<typeof IdentifierImportRow.safeParse> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const r = value as Record<string, unknown>;
    let plain = Object.getPrototypeOf(r) === Object.prototype;
    if (plain)
      for (const key in r)
        if (!IDENTIFIER_ROW_KEYS.has(key)) {
          plain = false;
          break;
        }
    const { type, value: v, name, owner, description } = r;
    if (
      plain &&
      (type === undefined || (typeof type === 'string' && IDENTIFIER_TYPES.has(type))) &&
      (v === undefined || typeof v === 'string' || typeof v === 'number') &&
      (name === undefined || (typeof name === 'string' && name.length <= MAX_IDENTIFIER_IMPORT_NAME)) &&
      (owner === undefined || owner === null || typeof owner === 'string' || Number.isSafeInteger(owner)) &&
      (description === undefined ||
        (typeof description === 'string' && description.length <= MAX_IDENTIFIER_IMPORT_DESCRIPTION))
    ) {
      const data: Record<string, unknown> = { type: type ?? DEFAULT_IDENTIFIER_IMPORT_TYPE };
      if (v !== undefined) data.value = v;
      if (name !== undefined) data.name = name;
      if (owner !== undefined) data.owner = owner;
      if (description !== undefined) data.description = description;
      return { success: true, data } as ReturnType<typeof IdentifierImportRow.safeParse>;
    }
  }
  return IdentifierImportRow.safeParse(value);
}

/** The columns an identifier file holds (and the export writes first). */
export const IdentifierImportColumns = ['type', 'value', 'name', 'owner', 'description'] as const;

/** What the attempt found: every bad row by line and reason, the duplicates, and the "file path" to continue. */
export const IdentifierImportAttempt = z.object({
  filepath: z.string(),
  rows: z.number().int(),
  valid: z.number().int(),
  invalid: z.number().int(),
  duplicates: z.number().int(),
  /** the bad rows' problems (the first 1,000): line, field and rule */
  errors: z.array(ImportRowError),
  /** every problem found, reported in `errors` or not */
  errors_total: z.number().int(),
  /** every rejected line, as ranges [from, to] of consecutive lines */
  rejected_lines: z.array(z.tuple([z.number().int(), z.number().int()])),
  /** the lines that duplicate an identifier of the project (at most 1,000) */
  duplicate_lines: z.array(z.number().int()),
});

/**
 * Step one of the import (spec part 1 §4): the rows as an NDJSON stream (the console and the CLI read the CSV
 * or XLSX file), each checked like a create; nothing is written but the staging. No timeout.
 */
export const identifierImportAttempt = defineCommand({
  id: 'identifier.import_attempt',
  http: { method: 'POST', path: '/identifiers/import/attempt' },
  args: z.object({}),
  result: IdentifierImportAttempt,
  gates: { anyPermission: ['identifiers.import'] },
  timeoutMs: Timeouts.import,
  hidden: true,
});

export const DuplicateActions = ['skip', 'overwrite', 'stop'] as const;

/**
 * Step two: commits the staged rows in one transaction. Bad rows never go in. Duplicates: `skip` leaves the
 * existing identifiers as they are, `overwrite` gives them the row's name, owner and description, `stop`
 * commits nothing when there is one.
 */
export const identifierImportContinue = defineCommand({
  id: 'identifier.import_continue',
  http: { method: 'POST', path: '/identifiers/import/continue' },
  args: z.object({ filepath: z.uuid(), action: z.enum(DuplicateActions) }),
  result: z.object({
    committed: z.boolean(),
    created: z.number().int(),
    updated: z.number().int(),
    skipped: z.number().int(),
    invalid: z.number().int(),
  }),
  gates: { anyPermission: ['identifiers.import'] },
  timeoutMs: Timeouts.import,
});

/** The image formats of a QR code: PNG for printing and sharing, SVG to draw at any size. */
export const QrImageFormats = ['png', 'svg'] as const;

/**
 * A QR identifier's value as a QR code image (spec part 1 §2.4 "QR preview", §3 "QR image"; part 2 §7 "QR
 * download (binary)"): `GET /identifiers/{id}/qr`, gated and scoped like reading the identifier. An identifier
 * of another type is `invalid_identifier`. A file, not JSON: read it with `downloadFile`.
 */
export const identifierQr = defineCommand({
  id: 'identifier.qr',
  http: { method: 'GET', path: '/identifiers/:id/qr' },
  args: IdParam.extend({
    format: z.enum(QrImageFormats).default('png'),
    /** the PNG's side in pixels */
    size: z.coerce.number().int().min(64).max(2048).default(512),
  }).strict(),
  /** the image */
  result: z.unknown(),
  gates: { anyPermission: ['identifiers.view_all'] },
  hidden: true,
});

/**
 * The identifier as an Apple Wallet pass (spec part 1 §3 "wallet pass file", §2.4 QR preview's
 * `pkPassEnabled`; part 2 §7 "wallet pass ... download (binary)"): `GET /identifiers/{id}/wallet-pass`, a
 * `.pkpass` signed with the project's wallet settings; `wallet_certificate_missing` while they hold no
 * certificate and key. QR identifiers only (a guest pass too), gated like reading the identifier.
 */
export const identifierWalletPass = defineCommand({
  id: 'identifier.wallet_pass',
  http: { method: 'GET', path: '/identifiers/:id/wallet-pass' },
  args: IdParam,
  /** the .pkpass */
  result: z.unknown(),
  gates: { anyPermission: ['identifiers.view_all'] },
  hidden: true,
});

/**
 * A face identifier's photo (spec part 1 §3 Identifier "photo"; part 2 §7 "photo POST multipart"):
 * `POST /identifiers/{id}/photo`, the image checked and made like an avatar — the square `{x, y, size}`
 * (pixels of the upload; none: the largest square at its centre), at most 640 px, JPEG — and sent to the
 * devices that hold the identifier. Gated like editing the identifier; another type is `invalid_identifier`.
 */
export const identifierPhotoUpload = defineCommand({
  id: 'identifier.photo_upload',
  http: { method: 'POST', path: '/identifiers/:id/photo' },
  args: IdParam.extend({
    image: fileArg('identifier_photo'),
    x: z.coerce.number().int().min(0).max(20_000).optional(),
    y: z.coerce.number().int().min(0).max(20_000).optional(),
    size: z.coerce.number().int().min(16).max(20_000).optional(),
  }),
  /** the stored photo's SHA-256 (hex): what the devices are sent with it */
  result: z.object({ photo_sha256: z.string() }),
  gates: { anyPermission: ['identifiers.edit'] },
});

/**
 * The face identifier's photo as stored (a JPEG): `GET /identifiers/{id}/photo`, gated and scoped like reading
 * the identifier; `item_not_found` while it has none. A file, not JSON: read it with `downloadFile`.
 */
export const identifierPhoto = defineCommand({
  id: 'identifier.photo',
  http: { method: 'GET', path: '/identifiers/:id/photo' },
  args: IdParam,
  /** the image */
  result: z.unknown(),
  gates: { anyPermission: ['identifiers.view_all'] },
  hidden: true,
});
