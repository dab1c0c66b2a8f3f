import { sql, type Kysely, type Transaction } from 'kysely';
import { identifierResource, type Identifier } from '@lintel/commands';
import {
  GeneratedValueTypes,
  identifierValueError,
  newIdentifierValue,
  parseIdentifierValue,
  shapeRestrictions,
  type IdentifierFormatCode,
  type IdentifierType,
  type LicenceFlag,
  type ShapedRestrictions,
} from '@lintel/core';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import type { FamilyCtx, FamilyStore } from '../../engine/family';
import { tableStore } from '../../engine/table-store';
import { assertLicensed } from '../../licensing/licence';
import { offsetMinutesOf, projectTimeZone } from '../../access/time-zone';

/** An instant column as the core writes it (`2026-11-27T08:00:00Z`, no milliseconds). */
const instant = (column: string) =>
  sql`to_char(${sql.ref(`t.${column}`)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** The declaration's generic store; the identifier's own rules wrap its create and update below. */
const base = tableStore(identifierResource, {
  table: 'identifiers',
  computed: {
    period_restrict_from_u: instant('period_restrict_from_u'),
    period_restrict_to_u: instant('period_restrict_to_u'),
  },
});

type Values = Record<string, unknown>;

/** The caller's `identifier_format` and the offset of his time zone (else the project's) at `at`. */
export async function callerHabits(
  q: Kysely<DB>,
  ctx: FamilyCtx,
  at: number,
): Promise<{ format: IdentifierFormatCode; offset: number }> {
  const r = await sql<{
    format: string | null;
    tz: string | null;
  }>`select profile->>'identifier_format' as format, profile->>'time_zone' as tz from users where id = ${ctx.caller.userId}`.execute(
    q,
  );
  const row = r.rows[0];
  const offset =
    offsetMinutesOf(row?.tz, at) ?? offsetMinutesOf(await projectTimeZone(q, ctx.caller.projectId), at) ?? 0;
  return { format: row?.format === 'hex' ? 'hex' : 'dec', offset };
}

/**
 * The licence flags an identifier of this type and owner needs (part 2 §6): a licence plate `license_plate`,
 * a guest's identifier `identifier.is_guest_enabled`, a guest's face `face_id.is_enabled_for_guests`.
 */
export function identifierLicences(type: string, ownerType: string): LicenceFlag[] {
  const flags: LicenceFlag[] = [];
  if (type === 'license_plate') flags.push('license_plate');
  if (ownerType === 'guest') {
    flags.push('identifier.is_guest_enabled');
    if (type === 'face') flags.push('face_id.is_enabled_for_guests');
  }
  return flags;
}

/** "identifier duplicate (number and type)": another identifier of the project has this type and value. */
async function assertNoDuplicate(
  q: Kysely<DB>,
  projectId: number,
  type: string,
  value: string,
  self: number | null,
): Promise<void> {
  const r = await sql<{
    id: number;
  }>`select id from identifiers where project_id = ${projectId} and type = ${type} and value = ${value} and id <> ${self ?? 0} limit 1`.execute(
    q,
  );
  if (r.rows.length) throw new AppError('identifier_duplicate', { type, value, id: r.rows[0]!.id });
}

const duplicateOnRace = (type: string, value: string) => (err: unknown) => {
  if (err instanceof AppError && err.key === 'value_not_unique')
    throw new AppError('identifier_duplicate', { type, value });
  throw err;
};

/** A value as typed, made canonical for its type (or made, for a QR or a face), else the field error. */
function canonicalValue(type: IdentifierType, typed: string | undefined, format: IdentifierFormatCode) {
  if ((typed === undefined || typed.trim() === '') && GeneratedValueTypes.includes(type))
    return newIdentifierValue();
  const parsed = parseIdentifierValue(type, typed ?? '', format);
  if (!parsed.ok)
    throw new AppError('check_fields_data', { fields: [identifierValueError(type, parsed.rule)] });
  return parsed.value;
}

const RESTRICTIONS = [
  'period_restrict_active',
  'period_restrict_from',
  'period_restrict_to',
  'period_restrict_from_u',
  'period_restrict_to_u',
  'passes_restrict_active',
  'passes_restrict_max_count',
] as const;

/** A guest's identifier has no owner; a user's may have none yet (a card in stock, given by rules alone). */
function ownerFields(ownerType: string, owner: unknown, guestType: unknown): Values {
  if (ownerType === 'guest') {
    if (owner !== null && owner !== undefined)
      throw new AppError('check_fields_data', { fields: [{ field: 'owner', rule: 'guest_has_no_owner' }] });
    return { owner_type: 'guest', owner: null, guest_type: guestType ?? 'guest' };
  }
  return { owner_type: 'user', guest_type: null, ...(owner !== undefined ? { owner } : {}) };
}

/**
 * Identifiers: the declaration's store (`tableStore`) with what the declaration cannot say — each type's value
 * read in the caller's identifier format and stored canonical (a QR's and a face's made by the server), the
 * duplicate of type and value as the catalogue's `identifier_duplicate`, the licence each type and owner
 * needs, the period shifted to instants (`_u`) by the caller's time zone when the client did not send them,
 * and the pass limit 0 without its restriction (part 2 §5).
 */
export const identifierStore: FamilyStore<typeof identifierResource> = {
  ...base,

  async create(trx: Transaction<DB>, args, ctx) {
    const now = ctx.app.clock.now();
    const { format, offset } = await callerHabits(trx, ctx, now.getTime());
    const type = args.type;
    const ownerType = args.owner_type ?? 'user';
    await assertLicensed(
      trx,
      ctx.caller.projectId,
      await ctx.caller.domains(),
      identifierLicences(type, ownerType),
      now,
    );
    const value = canonicalValue(type, args.value, format);
    await assertNoDuplicate(trx, ctx.caller.projectId, type, value, null);
    const values: Values = {
      name: args.name ?? (ownerType === 'guest' ? 'Guest identifier' : ''),
      type,
      value,
      ...(args.is_active !== undefined ? { is_active: args.is_active } : {}),
      ...ownerFields(ownerType, args.owner, args.guest_type),
      ...(args.description !== undefined ? { description: args.description } : {}),
      ...shapeRestrictions(args, offset),
      ...(args.access_rules !== undefined ? { access_rules: args.access_rules } : {}),
    };
    return base.create(trx, values as never, ctx).catch(duplicateOnRace(type, value));
  },

  async update(trx, id, args, ctx, before) {
    const now = ctx.app.clock.now();
    const { format, offset } = await callerHabits(trx, ctx, now.getTime());
    const b = before as Identifier;
    const type = args.type ?? b.type;
    const ownerType = args.owner_type ?? b.owner_type;
    if (type !== b.type || ownerType !== b.owner_type)
      await assertLicensed(
        trx,
        ctx.caller.projectId,
        await ctx.caller.domains(),
        identifierLicences(type, ownerType),
        now,
      );
    const values: Values = {};
    for (const k of ['name', 'is_active', 'description', 'access_rules'] as const)
      if (args[k] !== undefined) values[k] = args[k];
    if (args.value !== undefined || type !== b.type) {
      // a value given is read afresh; a change of type keeps the stored value only if it fits the new type
      values.value = canonicalValue(type, args.value ?? b.value, args.value !== undefined ? format : 'dec');
      values.type = type;
      await assertNoDuplicate(trx, ctx.caller.projectId, type, String(values.value), id);
    }
    if (args.owner_type !== undefined || args.owner !== undefined || args.guest_type !== undefined)
      Object.assign(
        values,
        ownerFields(
          ownerType,
          args.owner !== undefined ? args.owner : ownerType === 'guest' ? null : undefined,
          args.guest_type ?? b.guest_type,
        ),
      );
    if (RESTRICTIONS.some((k) => args[k] !== undefined)) {
      const merged: Partial<ShapedRestrictions> = {};
      for (const k of RESTRICTIONS) (merged as Values)[k] = b[k];
      // a typed time changed without its instant: the instant is made again from it
      if (args.period_restrict_from !== undefined) merged.period_restrict_from_u = undefined;
      if (args.period_restrict_to !== undefined) merged.period_restrict_to_u = undefined;
      for (const k of RESTRICTIONS) if (args[k] !== undefined) (merged as Values)[k] = args[k];
      Object.assign(values, shapeRestrictions(merged, offset));
    }
    values.updated_at = now.toISOString();
    await base
      .update(trx, id, values as never, ctx, before)
      .catch(duplicateOnRace(type, String(values.value ?? b.value)));
  },
};

/** Revokes an identifier (active → revoked); revoking a revoked one changes nothing. */
export async function revokeIdentifier(trx: Transaction<DB>, id: number, now: Date): Promise<void> {
  await sql`update identifiers set is_active = false, updated_at = ${now.toISOString()} where id = ${id} and is_active`.execute(
    trx,
  );
}
