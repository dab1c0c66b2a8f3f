import { createHmac, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { GuestPass, GuestPassState, Identifier, PublicGuestPass } from '@lintel/commands';
import {
  checkGuestLimits,
  decide,
  guestKeyToIdentifier,
  shapeRestrictions,
  type GuestIdentifierLimits,
  type GuestKey,
  type ShapedRestrictions,
} from '@lintel/core';
import type { DB } from '../../db/schema';
import { audit } from '../../audit/audit';
import { newToken, safeEqual, sha256 } from '../../auth/crypto';
import { AppError } from '../../errors';
import { familyCtx, loadOne, type FamilyCtx } from '../../engine/family';
import { loadProjectAccess, type IdentifierRow } from '../../access/data';
import { lastPassages } from '../../access/passback';
import { recordOpening } from '../../access-sync/acs';
import type { SomeHandlers } from '../../pipeline/handler';
import { callerHabits, identifierStore } from '../identifier/identifier.store';
import { lockOpenUri } from '../device/device.remote';
import { enqueueExpiry } from './guest-access.job';
import { composeMail, groupOfUser } from '../../mail/templates';
import { serverT } from '../../i18n';
import { enforceMailTarget } from '../../security/rate-limit';
import type { ServerContext } from '../../context';
import { qrSvgDataUrl } from '../../access/qr-image';
import { walletEnabled } from '../../access/wallet-pass';
import { walletPassReply, walletSettingsOf } from '../identifier/identifier.files';

/**
 * Guest access (issue 21 item 7; docs/decisions.md "Guest access"): passes made from the guest key of the
 * form — a QR identifier owned by a guest, with shareable rules the maker may give, a validity and a pass
 * limit within his groups' limits — and the public page's two calls, by the pass's secret key.
 */

// ----- what the maker may give ----------------------------------------------------------------------------------

interface RuleRow {
  id: number;
  name: string;
  device_id: number | null;
  device_name: string | null;
}

/**
 * The rules the caller may put on a guest pass: shareable and permitting; with `identifiers.create_guest`
 * any of the project, with only `domains.own_guest_access` those naming one of his groups or a group below.
 */
async function grantableRules(c: FamilyCtx, q: Kysely<DB> = c.app.db) {
  const own = c.caller.has('identifiers.create_guest');
  const groups = own ? [] : await c.caller.subtree();
  const reach = own
    ? sql`true`
    : groups.length
      ? sql`exists (select 1 from access_rule_domains d where d.access_rule_id = a.id and d.domain_id = any(${groups}::int[]))`
      : sql`false`;
  const r = await sql<RuleRow>`
    select a.id, a.name, dv.id as device_id, dv.name as device_name
    from access_rules a
    left join access_rule_devices ad on ad.access_rule_id = a.id
    left join devices dv on dv.id = ad.device_id
    where a.project_id = ${c.caller.projectId} and a.is_shareable and not a.prohibition and ${reach}
    order by a.name, a.id, dv.name, dv.id`.execute(q);
  const rules = new Map<number, { id: number; name: string; devices: { id: number; name: string }[] }>();
  for (const row of r.rows) {
    let rule = rules.get(row.id);
    if (!rule) rules.set(row.id, (rule = { id: row.id, name: row.name, devices: [] }));
    if (row.device_id !== null) rule.devices.push({ id: row.device_id, name: row.device_name ?? '' });
  }
  return [...rules.values()];
}

async function assertGrantable(c: FamilyCtx, q: Kysely<DB>, ids: readonly number[]): Promise<void> {
  const allowed = new Set((await grantableRules(c, q)).map((r) => r.id));
  const bad = ids.filter((id) => !allowed.has(id));
  if (bad.length)
    throw new AppError('check_fields_data', {
      fields: [{ field: 'selectedAccessRules', rule: 'not_shareable', params: { ids: bad.join(', ') } }],
    });
}

/**
 * The guest limits in force for the caller (part 2 §5 "Guest identifier limits: per group"): those of his
 * groups and of the groups above them, the strictest of each kind; none when no group sets one.
 */
async function limitsOf(c: FamilyCtx, q: Kysely<DB>): Promise<GuestIdentifierLimits | null> {
  const own = await c.caller.domains();
  if (!own.length) return null;
  const r = await sql<{ max_passes_count: number | null; max_period_days: number | null }>`
    with recursive up(id) as (
      select id from domains where id = any(${own}::int[]) and project_id = ${c.caller.projectId}
      union select d.parent_id from domains d join up on up.id = d.id where d.parent_id is not null)
    select min(nullif(d.guest_identifier_limits->>'max_passes_count', '')::int) as max_passes_count,
           min(nullif(d.guest_identifier_limits->>'max_period_days', '')::int) as max_period_days
    from domains d join up on up.id = d.id`.execute(q);
  const row = r.rows[0];
  if (!row || (row.max_passes_count === null && row.max_period_days === null)) return null;
  return { max_passes_count: row.max_passes_count, max_period_days: row.max_period_days };
}

/** A pass has an end (it is deleted after it), both ends given, and fits the limits. */
function checkPass(r: ShapedRestrictions, limits: GuestIdentifierLimits | null): void {
  if (!r.period_restrict_active || !r.period_restrict_from_u || !r.period_restrict_to_u)
    throw new AppError('check_fields_data', { fields: [{ field: 'validatePeriod', rule: 'required' }] });
  const refused = checkGuestLimits(r, limits);
  // a kind without a limit reads as a dash in the message, not "null"
  if (refused)
    throw new AppError(refused.code, {
      max_count: refused.data.max_count ?? '—',
      max_days: refused.data.max_days ?? '—',
    });
}

// ----- reading passes -----------------------------------------------------------------------------------------

interface PassRow {
  identifier_id: number;
  project_id: number;
  email: string | null;
  created_by: number | null;
  created_by_name: string | null;
  created_at: Date;
}

export function passState(
  i: Pick<
    Identifier,
    | 'is_active'
    | 'period_restrict_from_u'
    | 'period_restrict_to_u'
    | 'passes_restrict_active'
    | 'passes_restrict_max_count'
    | 'passes_count'
  >,
  now: Date,
): GuestPassState {
  const t = now.getTime();
  if (!i.is_active) return 'revoked';
  if (i.period_restrict_to_u && t > Date.parse(i.period_restrict_to_u)) return 'expired';
  if (i.passes_restrict_active && i.passes_count >= i.passes_restrict_max_count) return 'exhausted';
  if (i.period_restrict_from_u && t < Date.parse(i.period_restrict_from_u)) return 'not_yet_valid';
  return 'valid';
}

async function passRows(q: Kysely<DB>, where: ReturnType<typeof sql<boolean>>): Promise<PassRow[]> {
  const r = await sql<PassRow>`
    select g.identifier_id, g.project_id, g.email, g.created_by, u.name as created_by_name, g.created_at
    from guest_passes g left join users u on u.id = g.created_by
    where ${where} order by g.identifier_id desc`.execute(q);
  return r.rows;
}

async function toPasses(q: Kysely<DB>, rows: PassRow[], now: Date): Promise<GuestPass[]> {
  const idents = new Map(
    (
      await identifierStore.load(
        q,
        rows.map((r) => r.identifier_id),
      )
    ).map((i) => [i.id, i as Identifier]),
  );
  return rows.flatMap((row) => {
    const i = idents.get(row.identifier_id);
    if (!i) return [];
    return [
      {
        id: i.id,
        name: i.name,
        description: i.description,
        value: i.value,
        guest_type: i.guest_type ?? 'guest',
        access_rules: i.access_rules,
        valid_from: i.period_restrict_from,
        valid_to: i.period_restrict_to,
        valid_from_u: i.period_restrict_from_u,
        valid_to_u: i.period_restrict_to_u,
        passes_restrict_active: i.passes_restrict_active,
        pass_limit: i.passes_restrict_max_count,
        passes_count: i.passes_count,
        state: passState(i, now),
        email: row.email,
        created_at: new Date(row.created_at).toISOString(),
        created_by_user:
          row.created_by === null ? null : { id: row.created_by, name: row.created_by_name ?? '' },
      },
    ];
  });
}

/** A pass the caller may change: his own, or any of the project with `identifiers.edit`. */
async function ownPass(c: FamilyCtx, q: Kysely<DB>, id: number): Promise<PassRow> {
  const mine = c.caller.has('identifiers.edit') ? sql`true` : sql`g.created_by = ${c.caller.userId}`;
  const [row] = await passRows(
    q,
    sql<boolean>`g.identifier_id = ${id} and g.project_id = ${c.caller.projectId} and ${mine}`,
  );
  if (!row) throw new AppError('item_not_found');
  return row;
}

/**
 * The pass e-mailed to the guest (beyond the spec: what ButterflyMX and Akuvox visitors get): the page's
 * address, which shows the QR code and opens the doors, the validity as entered and the pass limit, in the
 * maker's language, written by his group's `guest_pass` template when it has one.
 */
async function mailPass(
  app: ServerContext,
  opts: { projectId: number; to: string; makerId: number; pass: GuestPass; url: string },
): Promise<void> {
  const r = await sql<{ name: string; locale: string | null }>`
    select u.name, a.locale from users u join accounts a on a.id = u.account_id where u.id = ${opts.makerId}`.execute(
    app.db,
  );
  const maker = r.rows[0];
  const shown = (v: string | null) => (v ? v.replace('T', ' ').slice(0, 16) : '—');
  const mail = await composeMail(app, {
    projectId: opts.projectId,
    type: 'guest_pass',
    locale: maker?.locale ?? null,
    groupId: await groupOfUser(app, opts.makerId),
    params: {
      name: opts.pass.name,
      link: opts.url,
      from: shown(opts.pass.valid_from),
      to: shown(opts.pass.valid_to),
      passes: opts.pass.passes_restrict_active ? opts.pass.pass_limit : '—',
      qr: opts.pass.value,
      sender: maker?.name ?? '',
    },
  });
  await app.mailer.send({
    projectId: opts.projectId,
    to: opts.to,
    subject: mail.subject,
    text: mail.text,
    // the QR code inline, so the guest can show the mail itself at the reader
    inline: [
      { cid: GUEST_QR_CID, qr: opts.pass.value, alt: serverT(maker?.locale ?? null)('guest_pass.qr_alt') },
    ],
  });
}

/** The content id of the guest pass mail's QR image. */
export const GUEST_QR_CID = 'guest-pass-qr@lintel';

// ----- the public page ------------------------------------------------------------------------------------------

/** A device's token for one pass: names the door to the pass's holder only (no device id is shown). */
export const deviceToken = (key: string, deviceId: number) =>
  createHmac('sha256', key).update(`guest-device:${deviceId}`).digest('base64url').slice(0, 22);

interface KeyedPass {
  row: PassRow;
  ident: Identifier;
}

/**
 * The pass a key opens, usable now: an unknown key and a revoked pass are `invalid_identifier` alike (a
 * revocation tells the holder nothing more), an ended one `identifier_expired`, a used-up one
 * `pass_limit_reached`. Nothing else of the pass is said.
 */
async function usablePass(ctx: { app: FamilyCtx['app'] }, key: string, now: Date): Promise<KeyedPass> {
  const [row] = await passRows(ctx.app.db, sql<boolean>`g.key_hash = ${sha256(key)}`);
  const ident = row ? (await identifierStore.load(ctx.app.db, [row.identifier_id]))[0] : undefined;
  if (!row || !ident) throw new AppError('invalid_identifier');
  const state = passState(ident as Identifier, now);
  if (state === 'revoked') throw new AppError('invalid_identifier');
  if (state === 'expired') throw new AppError('identifier_expired');
  if (state === 'exhausted') throw new AppError('pass_limit_reached');
  return { row, ident: ident as Identifier };
}

interface DoorRow {
  id: number;
  name: string;
  serial_number: string;
  protocol: string;
  status: string;
  ip_address: string | null;
  port: number;
}

/** The doors of the pass: the devices of its permitting rules. */
async function doorsOf(q: Kysely<DB>, identifierId: number): Promise<DoorRow[]> {
  const r = await sql<DoorRow>`
    select distinct dv.id, dv.name, dv.serial_number, dv.protocol, dv.status, dv.ip_address, dv.port
    from access_rule_identifiers ai
    join access_rules a on a.id = ai.access_rule_id and not a.prohibition
    join access_rule_devices ad on ad.access_rule_id = a.id
    join devices dv on dv.id = ad.device_id
    where ai.identifier_id = ${identifierId}
    order by dv.name, dv.id`.execute(q);
  return r.rows;
}

export const guestAccessHandlers = {
  'guest_access.access_rules': async (ctx) => {
    const c = await familyCtx(ctx);
    return { data: await grantableRules(c) };
  },

  'guest_access.list': async (ctx) => {
    const c = await familyCtx(ctx);
    const all = c.caller.has('identifiers.view_all') ? sql`true` : sql`g.created_by = ${c.caller.userId}`;
    const rows = await passRows(ctx.app.db, sql<boolean>`g.project_id = ${c.caller.projectId} and ${all}`);
    return { data: await toPasses(ctx.app.db, rows, ctx.app.clock.now()) };
  },

  'guest_access.create': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const now = ctx.app.clock.now();
    const { email, ...key } = args;
    const { offset } = await callerHabits(ctx.app.db, c, now.getTime());
    const ident = guestKeyToIdentifier(key as GuestKey, offset);
    const secret = newToken();
    // a guest's mailbox gets its share of mail like any other (counted before anything is made)
    if (email) await enforceMailTarget(ctx.app, email, c.ip);
    const id = await ctx.app.db.transaction().execute(async (trx) => {
      await assertGrantable(c, trx, key.selectedAccessRules);
      checkPass(ident, await limitsOf(c, trx));
      const made = await identifierStore.create(trx, ident as never, c);
      const identifierId = Number(made);
      await sql`insert into guest_passes (identifier_id, project_id, key_hash, email, created_by, created_at)
        values (${identifierId}, ${c.caller.projectId}, ${sha256(secret)}, ${email ?? null}, ${c.caller.userId}, ${now})`.execute(
        trx,
      );
      await enqueueExpiry(ctx.app, trx, identifierId, new Date(ident.period_restrict_to_u!));
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'create',
        entity: 'identifier',
        entityId: identifierId,
        ip: c.ip,
        data: { after: await loadOne(trx, identifierStore, identifierId), guest_pass: true },
      });
      return identifierId;
    });
    const [row] = await passRows(ctx.app.db, sql<boolean>`g.identifier_id = ${id}`);
    const [pass] = await toPasses(ctx.app.db, [row!], now);
    const url = `${ctx.app.config.publicUrl}/guest-access/${secret}`;
    if (email)
      await mailPass(ctx.app, {
        projectId: c.caller.projectId,
        to: email,
        makerId: c.caller.userId,
        pass: pass!,
        url,
      });
    return { data: pass!, key_id: secret, url };
  },

  'guest_access.update': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const now = ctx.app.clock.now();
    const { offset } = await callerHabits(ctx.app.db, c, now.getTime());
    await ctx.app.db.transaction().execute(async (trx) => {
      await ownPass(c, trx, args.id);
      const before = await loadOne(trx, identifierStore, args.id);
      const b = before as Identifier;
      const period = args.validatePeriod;
      const shaped = shapeRestrictions(
        {
          period_restrict_active: args.restrictPeriod ?? b.period_restrict_active,
          period_restrict_from: period ? period.from : b.period_restrict_from,
          period_restrict_to: period ? period.to : b.period_restrict_to,
          ...(period
            ? {
                ...(period.from_u != null ? { period_restrict_from_u: period.from_u } : {}),
                ...(period.to_u != null ? { period_restrict_to_u: period.to_u } : {}),
              }
            : {
                period_restrict_from_u: b.period_restrict_from_u,
                period_restrict_to_u: b.period_restrict_to_u,
              }),
          passes_restrict_active: args.restrictPassCount ?? b.passes_restrict_active,
          passes_restrict_max_count: args.passLimit ?? b.passes_restrict_max_count,
        },
        offset,
      );
      if (args.selectedAccessRules) await assertGrantable(c, trx, args.selectedAccessRules);
      checkPass(shaped, await limitsOf(c, trx));
      await identifierStore.update(
        trx,
        args.id,
        {
          ...shaped,
          ...(args.selectedAccessRules ? { access_rules: args.selectedAccessRules } : {}),
          ...(args.name !== undefined ? { name: args.name } : {}),
          ...(args.description !== undefined ? { description: args.description } : {}),
        } as never,
        c,
        before,
      );
      if (shaped.period_restrict_to_u !== b.period_restrict_to_u)
        await enqueueExpiry(ctx.app, trx, args.id, new Date(shaped.period_restrict_to_u!));
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'update',
        entity: 'identifier',
        entityId: args.id,
        ip: c.ip,
        data: { before, after: await loadOne(trx, identifierStore, args.id), guest_pass: true },
      });
    });
    const rows = await passRows(ctx.app.db, sql<boolean>`g.identifier_id = ${args.id}`);
    return { data: (await toPasses(ctx.app.db, rows, now))[0]! };
  },

  'guest_access.delete': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await ctx.app.db.transaction().execute(async (trx) => {
      await ownPass(c, trx, args.id);
      const before = await loadOne(trx, identifierStore, args.id);
      await sql`delete from identifiers where id = ${args.id}`.execute(trx);
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'delete',
        entity: 'identifier',
        entityId: args.id,
        ip: c.ip,
        data: { before, guest_pass: true },
      });
    });
    return { deleted: true as const };
  },

  'guest_access.info': async (ctx, args): Promise<PublicGuestPass> => {
    const now = ctx.app.clock.now();
    const { row, ident } = await usablePass(ctx, args.key_id, now);
    const doors = await doorsOf(ctx.app.db, ident.id);
    return {
      name: ident.name,
      qr: ident.value,
      qr_image: await qrSvgDataUrl(ident.value),
      wallet_enabled: walletEnabled(await walletSettingsOf(ctx.app.db, row.project_id)),
      valid_from_u: ident.period_restrict_from_u,
      valid_to_u: ident.period_restrict_to_u,
      pass_limit: ident.passes_restrict_active ? ident.passes_restrict_max_count : null,
      passes_count: ident.passes_count,
      state: passState(ident, now) === 'not_yet_valid' ? 'not_yet_valid' : 'valid',
      devices: doors.map((d) => ({ token: deviceToken(args.key_id, d.id), name: d.name })),
    };
  },

  'guest_access.wallet_pass': async (ctx, args) => {
    const { row, ident } = await usablePass(ctx, args.key_id, ctx.app.clock.now());
    return walletPassReply(ctx.app.db, row.project_id, ident, ctx.caller.locale);
  },

  'guest_access.open': async (ctx, args) => {
    const app = ctx.app;
    const now = app.clock.now();
    const { row, ident } = await usablePass(ctx, args.key_id, now);
    const door = (await doorsOf(app.db, ident.id)).find((d) =>
      safeEqual(deviceToken(args.key_id, d.id), args.device),
    );
    if (!door) throw new AppError('device_not_found');
    // the one decision, as at the door: the rules' schedules, holidays and prohibitions all count, and the
    // pass's last passages in the anti-passback areas of the door (its ACS events)
    const access = await loadProjectAccess(app.db, row.project_id);
    const passages = await lastPassages(app.db, row.project_id, [ident.id], access.areas, now);
    const decision = decide(
      { ...(ident as unknown as IdentifierRow), access_rules: ident.access_rules.map((r) => r.id) },
      door.id,
      now,
      access.index,
      { ...access.contextFor(null, door.id), lastPassages: passages.get(ident.id) },
    );
    if (!decision.allowed) throw new AppError(decision.reason ?? 'no_access_rule');
    // the pass is counted first, in one statement (two phones cannot both take the last pass), and given
    // back if the door could not open
    const counted = await sql<{ passes_count: number }>`
      update identifiers set passes_count = passes_count + 1
      where id = ${ident.id} and (not passes_restrict_active or passes_count < passes_restrict_max_count)
      returning passes_count`.execute(app.db);
    if (!counted.rows[0]) throw new AppError('pass_limit_reached');
    try {
      const reply = await app.devices.request(door, { method: 'GET', uri: lockOpenUri(1) });
      if (reply.status < 200 || reply.status >= 300) throw new Error(`status ${reply.status}`);
    } catch {
      await sql`update identifiers set passes_count = passes_count - 1 where id = ${ident.id} and passes_count > 0`.execute(
        app.db,
      );
      throw new AppError('device_problem');
    }
    // the passage, in the ACS log as a panel's would be (anti-passback counts it)
    await app.db.transaction().execute((trx) =>
      recordOpening(app, trx, {
        projectId: row.project_id,
        deviceId: door.id,
        identifier: {
          id: ident.id,
          name: ident.name,
          type: ident.type,
          value: ident.value,
          owner: null,
          guest: true,
        },
        rule: decision.rule,
        lock: 1,
        at: now,
        eventId: `guest-open-${randomUUID()}`,
      }),
    );
    await audit(app.db, {
      projectId: row.project_id,
      userId: null,
      action: 'guest_door_opened',
      entity: 'identifier',
      entityId: ident.id,
      ip: ctx.caller.ip,
      data: { device_id: door.id, device: door.name },
    });
    return {
      opened: true as const,
      device: door.name,
      passes_count: counted.rows[0].passes_count,
      pass_limit: ident.passes_restrict_active ? ident.passes_restrict_max_count : null,
    };
  },
} satisfies SomeHandlers;
