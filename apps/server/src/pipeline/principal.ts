import { timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { AuthInfo, ServerContext } from '../context';
import { authenticate as authenticateSession } from '../auth/sessions';

/**
 * Who a command runs for. Every caller of `dispatch` names one, and each kind has its own way in:
 * - `anonymous`: nobody signed in; only public commands.
 * - `session`: a user's access token (HTTP today, the websocket next).
 * - `job`: a background job acting for the user who caused it (the identity is stored with the job).
 * - `system`: the server itself (maintenance, bootstrap); passes every gate, acts in a project as `auth`.
 * - `device`: a device pushing to the platform (heartbeats, status; logs and events next), over MQTT (the
 *   gateway names it by the serial of the topic the broker let it publish on) or over HTTP (its login, the
 *   serial number, and the password Lintel issued it). It may call only `device` commands.
 * - `sip`: the SIP server (Kamailio) asking where a call goes and telling what happened to it, by the secret
 *   Lintel gave it over JSON-RPC (sip/service.ts); it may call only `sip` commands.
 */
export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'session'; auth: AuthInfo }
  | { kind: 'job'; jobId: number; auth: AuthInfo | null }
  | { kind: 'system'; auth: AuthInfo | null }
  | {
      kind: 'device';
      deviceId: number;
      projectId: number;
      serial: string;
      /** the device's group when it was authenticated (what it pushes is filed under it) */
      domainId?: number | null;
      /**
       * the device as the MQTT gateway last read it, not read again for this message (a push of its logs:
       * what stores it checks the row as it is then, and a device changed since is `DeviceChangedError`)
       */
      remembered?: true;
      auth: null;
    }
  | { kind: 'sip'; auth: null };

export type PrincipalKind = Principal['kind'];

/** The user identity a principal acts as, if any. */
export function authOf(p: Principal): AuthInfo | null {
  return p.kind === 'anonymous' ? null : p.auth;
}

/** Whether the principal's permissions are checked against the command's gates (the system's are not). */
export function isGated(p: Principal): boolean {
  return p.kind !== 'system';
}

/**
 * Prometheus' scrape by the operator's metrics token (LINTEL_METRICS_TOKEN, compared in constant time): the
 * `system` principal, for the command `system.metrics` only, acting as no user of no project. Null otherwise
 * (then the token is an ordinary bearer token, and a session with `system_info.view` reads the metrics).
 */
export function metricsScraper(
  configured: string | undefined,
  cmd: { id: string },
  token: string | null,
): Principal | null {
  if (!configured || cmd.id !== 'system.metrics' || token === null || !samePassword(configured, token))
    return null;
  const nobody: AuthInfo = {
    sessionId: 0,
    userId: 0,
    accountId: 0,
    projectId: 0,
    roleId: 0,
    permissions: new Set(),
  };
  return { kind: 'system', auth: nobody };
}

/** A user session from its bearer token; null when there is none or it is not valid now. */
export async function authenticateBearer(app: ServerContext, token: string | null): Promise<Principal> {
  const auth = token ? await authenticateSession(app, token) : null;
  return auth ? { kind: 'session', auth } : { kind: 'anonymous' };
}

/**
 * The identity of a user read afresh from the database (for a job acting for the user who caused it: the
 * job stores the user's id, and the role's permissions are those at the time it runs). No session.
 */
export async function userAuth(app: ServerContext, userId: number): Promise<AuthInfo | null> {
  const row = await app.db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select([
      'users.id as user_id',
      'users.account_id',
      'users.project_id',
      'users.role_id',
      'roles.permissions',
    ])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    sessionId: 0,
    userId: row.user_id,
    accountId: row.account_id,
    projectId: row.project_id,
    roleId: row.role_id,
    permissions: new Set(row.permissions),
  };
}

/** A job acts for the user whose identity it carries (see `userAuth`), or for nobody. */
export function jobPrincipal(jobId: number, auth: AuthInfo | null): Principal {
  return { kind: 'job', jobId, auth };
}

/** A device as the gateway and the device API's authentication read it. */
export interface DeviceBySerial {
  id: number;
  project_id: number;
  serial_number: string;
  password: string;
  protocol: string;
  domain_id: number | null;
}

/** Devices of the installation by their serial numbers (unique across projects: the broker's topics are). */
export async function devicesBySerial(
  app: ServerContext,
  serials: readonly string[],
): Promise<DeviceBySerial[]> {
  if (!serials.length) return [];
  const r = await sql<DeviceBySerial>`
    select id, project_id, serial_number, password, protocol, domain_id from devices
    where serial_number in (${sql.join(serials)})`.execute(app.db);
  return r.rows;
}

/** A device of the installation by its serial number. */
export async function deviceBySerial(app: ServerContext, serial: string): Promise<DeviceBySerial | null> {
  return (await devicesBySerial(app, [serial]))[0] ?? null;
}

/** Whether a presented password is the stored one, in constant time. */
export function samePassword(stored: string, presented: string | Buffer | undefined): boolean {
  if (presented === undefined || stored === '') return false;
  const a = Buffer.from(stored);
  const b = Buffer.isBuffer(presented) ? presented : Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function devicePrincipal(
  device: {
    id: number;
    project_id: number;
    serial_number: string;
    domain_id?: number | null;
  },
  remembered = false,
): Principal {
  return {
    kind: 'device',
    deviceId: device.id,
    projectId: device.project_id,
    serial: device.serial_number,
    ...(device.domain_id !== undefined ? { domainId: device.domain_id } : {}),
    ...(remembered ? { remembered: true as const } : {}),
    auth: null,
  };
}

/**
 * A push taken for a device as the gateway remembered it found the device's row changed since — removed, its
 * serial number, project or group no longer those — and stored nothing: the gateway reads the device again and
 * takes the message anew (issue 26: a statement a push to read the device was half of the database's
 * statements at 1,600 events a second).
 */
export class DeviceChangedError extends Error {
  constructor(readonly deviceId: number) {
    super(`device ${deviceId} changed since it was read`);
  }
}

/**
 * A device over HTTP: `Authorization: Basic base64(serial:password)`, the credentials its management
 * settings hold. Anything else is anonymous (and refused by the route).
 */
export async function authenticateDevice(app: ServerContext, header: string | undefined): Promise<Principal> {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!m) return { kind: 'anonymous' };
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 1) return { kind: 'anonymous' };
  const device = await deviceBySerial(app, text.slice(0, colon));
  if (!device || !samePassword(device.password, text.slice(colon + 1))) return { kind: 'anonymous' };
  return devicePrincipal(device);
}

/**
 * The SIP server (Kamailio) by `Authorization: Bearer <secret>`: the installation's SIP secret, which Lintel
 * gives Kamailio over JSON-RPC (never in a file). Anything else is anonymous (and refused by the route).
 */
export async function authenticateSip(app: ServerContext, header: string | undefined): Promise<Principal> {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!m) return { kind: 'anonymous' };
  const secret = await app.sip.secret();
  return samePassword(secret, m[1]) ? { kind: 'sip', auth: null } : { kind: 'anonymous' };
}
