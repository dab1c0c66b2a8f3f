import { sql } from 'kysely';
import { deviceInfoOf, type RemoteDevice, type RemoteSession, type RemoteState } from '@lintel/commands';
import type { AuditAction } from '@lintel/core';
import { audit } from '../../audit/audit';
import { newToken, safeEqual, sha256 } from '../../auth/crypto';
import { after } from '../../clock';
import { beginDeviceAttempt } from '../../auth/device-throttle';
import { AppError } from '../../errors';
import { assertMay, familyCtx, visibleSql, type FamilyCtx } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import { deviceStore } from './device.store';

/** How long a remote-control session lives without being kept alive (spec part 2 §9: 60 s). */
export const REMOTE_SESSION_S = 60;

/** The device's lock state call (DEVICES.md names opening only; designed in docs/decisions.md "Remote control"). */
export const LOCK_STATUS_URI = '/api/v1/access/general/lock/status';
export const lockOpenUri = (lock: number) => `/api/v1/access/general/lock/open/remote/accepted/${lock}`;
export const REBOOT_URI = '/api/v1/system/reboot/run';

interface RemoteRow {
  id: number;
  name: string;
  serial_number: string;
  type: RemoteDevice['type'];
  protocol: RemoteDevice['protocol'];
  status: RemoteDevice['status'];
  last_heartbeat_at: Date | null;
  device_login: string;
  device_password: string;
  ip_address: string | null;
  port: number;
}

const columns = sql`t.id, t.name, t.serial_number, t.type, t.protocol, t.status, t.last_heartbeat_at,
  t.device_login, t.device_password, t.ip_address, t.port`;

const remoteDevice = (d: RemoteRow): RemoteDevice => ({
  id: d.id,
  name: d.name,
  serial_number: d.serial_number,
  type: d.type,
  protocol: d.protocol,
  status: d.status,
  last_heartbeat_at: d.last_heartbeat_at ? new Date(d.last_heartbeat_at).toISOString() : null,
});

/**
 * The device, if the caller may edit it (`devices.edit` within his device scope: out of scope is
 * `item_not_found`, seen but not editable `method_prohibited`), and remote control reaches it: on mqtt
 * (`device_protocol_not_mqtt`) and online (`device_offline`).
 */
async function reachable(c: FamilyCtx, where: { id: number } | { serial: string }): Promise<RemoteRow> {
  const visible = await visibleSql(deviceStore, c.caller, 'view');
  const match = 'id' in where ? sql`t.id = ${where.id}` : sql`t.serial_number = ${where.serial}`;
  const r = await sql<RemoteRow>`select ${columns} from ${deviceStore.from}
    where t.project_id = ${c.caller.projectId} and ${match} and ${visible}`.execute(c.app.db);
  const device = r.rows[0];
  if (!device) throw new AppError('item_not_found');
  await assertMay(c.app.db, deviceStore, c.caller, device.id, 'edit');
  if (device.protocol !== 'mqtt')
    throw new AppError('device_protocol_not_mqtt', { serial_number: device.serial_number });
  if (device.status !== 'online')
    throw new AppError('device_offline', { serial_number: device.serial_number });
  return device;
}

/** A device's reply that is not 2xx: the device could not do it. */
function expectOk(device: RemoteRow, reply: { status: number }, uri: string): void {
  if (reply.status < 200 || reply.status >= 300)
    throw new AppError('device_not_available', { serial: device.serial_number, status: reply.status, uri });
}

async function auditRemote(
  c: FamilyCtx,
  action: AuditAction,
  device: RemoteRow,
  data: Record<string, unknown>,
) {
  await audit(c.app.db, {
    projectId: c.caller.projectId,
    userId: c.caller.userId,
    action,
    entity: 'device',
    entityId: device.id,
    ip: c.ip,
    data: { serial_number: device.serial_number, ...data },
  });
}

/** The session a caller holds by its id: his own, not ended by the server's clock. */
async function liveSession(c: FamilyCtx, session: string): Promise<{ id: number; device_id: number }> {
  const r = await sql<{ id: number; device_id: number }>`select id, device_id from remote_control_sessions
    where token_hash = ${sha256(session)} and user_id = ${c.caller.userId}
      and project_id = ${c.caller.projectId} and expires_at > ${c.app.clock.now()}`.execute(c.app.db);
  if (!r.rows[0]) throw new AppError('remote_session_expired');
  return r.rows[0];
}

function lockStates(body: unknown): RemoteState['locks'] {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return [];
  return items
    .filter(
      (i): i is { lock: number; open: boolean } =>
        typeof i === 'object' && i !== null && Number.isInteger((i as { lock?: unknown }).lock),
    )
    .map((i) => ({ lock: i.lock, open: i.open === true }));
}

export const deviceRemoteHandlers = {
  'device.remote_session': async (ctx, args): Promise<RemoteSession> => {
    const c = await familyCtx(ctx);
    const device = await reachable(c, { serial: args.serial_number });
    // the spec's body carries the device's own login and password: when given, they must be the stored ones;
    // guesses are throttled like people's logins (issue 20 item 8)
    if (args.login !== undefined || args.password !== undefined) {
      const attempt = beginDeviceAttempt(c.app, c.ip ?? '', device.serial_number);
      if (
        (args.login !== undefined && !safeEqual(args.login, device.device_login)) ||
        (args.password !== undefined && !safeEqual(args.password, device.device_password))
      )
        throw new AppError('invalid_credentials');
      await attempt.succeeded();
    }
    const session = newToken();
    const expires = after(c.app.clock, REMOTE_SESSION_S);
    await c.app.db.transaction().execute(async (trx) => {
      // sessions that ended are of no use to anyone: each opening clears them
      await sql`delete from remote_control_sessions where expires_at <= ${c.app.clock.now()}`.execute(trx);
      await sql`insert into remote_control_sessions (project_id, device_id, user_id, token_hash, created_at, expires_at)
        values (${c.caller.projectId}, ${device.id}, ${c.caller.userId}, ${sha256(session)},
          ${c.app.clock.now()}, ${expires})`.execute(trx);
    });
    await auditRemote(c, 'remote_session_opened', device, {});
    return { session, expires_at: expires.toISOString(), device: remoteDevice(device) };
  },

  'device.remote_session_keepalive': async (ctx, args): Promise<RemoteSession> => {
    const c = await familyCtx(ctx);
    const s = await liveSession(c, args.session);
    // the device is asked again: an editor no longer, or a device gone offline, ends the control
    const device = await reachable(c, { id: s.device_id });
    const expires = after(c.app.clock, REMOTE_SESSION_S);
    await sql`update remote_control_sessions set expires_at = ${expires} where id = ${s.id}`.execute(
      c.app.db,
    );
    return { session: args.session, expires_at: expires.toISOString(), device: remoteDevice(device) };
  },

  'device.remote_state': async (ctx, args): Promise<RemoteState> => {
    const c = await familyCtx(ctx);
    const device = await reachable(c, { id: args.id });
    const info = await ctx.app.devices.request(device, { method: 'GET', uri: '/api/info' });
    expectOk(device, info, '/api/info');
    const locks = await ctx.app.devices.request(device, { method: 'GET', uri: LOCK_STATUS_URI });
    return {
      device: remoteDevice(device),
      info: deviceInfoOf(info.body),
      // a device without the lock state call answers 404: its locks are not known
      locks: locks.status === 200 ? lockStates(locks.body) : [],
      read_at: ctx.app.clock.now().toISOString(),
    };
  },

  'device.remote_open_lock': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const device = await reachable(c, { id: args.id });
    const uri = lockOpenUri(args.lock);
    expectOk(device, await ctx.app.devices.request(device, { method: 'GET', uri }), uri);
    await auditRemote(c, 'remote_lock_opened', device, { lock: args.lock });
    return { lock: args.lock, opened: true as const };
  },

  'device.remote_reboot': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const device = await reachable(c, { id: args.id });
    expectOk(device, await ctx.app.devices.request(device, { method: 'POST', uri: REBOOT_URI }), REBOOT_URI);
    await auditRemote(c, 'remote_reboot', device, {});
    return { rebooting: true as const };
  },
} satisfies SomeHandlers;
