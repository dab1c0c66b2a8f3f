import { sql } from 'kysely';
import { DoorTypes, type Door } from '@lintel/commands';
import { scopePredicate, type Scope } from '../../engine/scope';
import { audit } from '../../audit/audit';
import { AppError } from '../../errors';
import { familyCtx, type FamilyCtx } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import { deviceStore } from '../device/device.store';
import { lockOpenUri } from '../device/device.remote';

/**
 * Doors for the concierge (`door.list`, `door.open`; docs/decisions.md "Doors for the concierge"). Which
 * doors a caller reaches follows his call permissions, not the devices' ones (a concierge answers panels he
 * may not administer): `calls.call_all` every door of the project, `calls.call_descendants` those of his
 * groups and their descendants, every other call permission those of his own groups.
 */
const DOOR_SCOPES: Record<string, Scope> = {
  'calls.call_all': 'all',
  'calls.call_descendants': 'descendants',
  'calls.call_own_group': 'domain',
  'calls.call_panel': 'domain',
  'calls.concierge_receive': 'domain',
  'calls.can_intercept_call_like_concierge': 'domain',
};

interface DoorRow {
  id: number;
  name: string;
  type: Door['type'];
  protocol: Door['protocol'];
  status: Door['status'];
  serial_number: string;
  domain_id: number | null;
  domain_name: string | null;
  sip_number: string | null;
  ip_address: string | null;
  port: number;
}

async function doorSql(c: FamilyCtx) {
  const scopes = new Set(Object.entries(DOOR_SCOPES).flatMap(([p, s]) => (c.caller.has(p) ? [s] : [])));
  const inScope = await scopePredicate(c.caller, scopes, deviceStore.scopeSql, null, false);
  return sql<boolean>`t.project_id = ${c.caller.projectId} and t.type in (${sql.join([...DoorTypes])})
    and ${inScope}`;
}

const columns = sql`t.id, t.name, t.type, t.protocol, t.status, t.serial_number, t.domain_id, t.ip_address, t.port,
  (select d.name from domains d where d.id = t.domain_id) as domain_name,
  (select n.number from sip_numbers n where n.device_id = t.id and n.is_active order by n.id limit 1) as sip_number`;

const door = (r: DoorRow): Door => ({
  id: r.id,
  name: r.name,
  type: r.type,
  protocol: r.protocol,
  status: r.status,
  serial_number: r.serial_number,
  domain: r.domain_id === null ? null : { id: r.domain_id, name: r.domain_name ?? '' },
  sip_number: r.sip_number === null ? null : { number: r.sip_number },
});

export const doorHandlers = {
  'door.list': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const where = await doorSql(c);
    const text = args.search?.trim();
    const like = text ? `%${text.replace(/[\\%_]/g, (m) => `\\${m}`)}%` : null;
    const match = like
      ? sql<boolean>`(t.name ilike ${like} or t.serial_number ilike ${like} or exists (select 1 from sip_numbers n
          where n.device_id = t.id and n.is_active and n.number ilike ${like}))`
      : sql<boolean>`true`;
    const rows = await sql<DoorRow>`select ${columns} from ${deviceStore.from} where ${where} and ${match}
      order by lower(t.name), t.id limit ${args.limit}`.execute(c.app.db);
    const total = await sql<{ n: string }>`select count(*) as n from ${deviceStore.from}
      where ${where} and ${match}`.execute(c.app.db);
    return { data: rows.rows.map(door), meta: { total: Number(total.rows[0]?.n ?? 0) } };
  },

  'door.open': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const r = await sql<DoorRow>`select ${columns} from ${deviceStore.from}
      where t.id = ${args.id} and ${await doorSql(c)}`.execute(c.app.db);
    // out of the caller's reach, or a device that is no door: not found, as for any row he may not see
    const row = r.rows[0];
    if (!row) throw new AppError('item_not_found');
    const uri = lockOpenUri(args.lock);
    // the gateway refuses a device without a protocol, an mqtt one offline, and one that does not answer
    const reply = await c.app.devices.request(row, { method: 'GET', uri });
    if (reply.status < 200 || reply.status >= 300)
      throw new AppError('device_not_available', { serial: row.serial_number, status: reply.status, uri });
    await audit(c.app.db, {
      projectId: c.caller.projectId,
      userId: c.caller.userId,
      action: 'remote_lock_opened',
      entity: 'device',
      entityId: row.id,
      ip: c.ip,
      data: { serial_number: row.serial_number, lock: args.lock, via: 'door.open' },
    });
    return { id: row.id, lock: args.lock, opened: true as const };
  },
} satisfies SomeHandlers;
