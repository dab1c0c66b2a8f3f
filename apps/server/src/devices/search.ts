import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DeviceSearchLimits } from '@lintel/core';
import type { DeviceSearch, FoundDevice } from '@lintel/commands';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { DeviceSearchEvent } from '../events/define';
import { deviceFetch, deviceUrl, refusedRange } from './outbound';

/** A device's description is small: a reply larger than this is no device. */
const INFO_MAX_BYTES = 64 * 1024;

/** An IPv4 address as a number (the schema checked its form). */
export function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

export function numberToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** The range's size, or the catalogue error that refuses it (start after end, more than the limit). */
export function rangeSize(startIp: string, endIp: string): number {
  const start = ipv4ToNumber(startIp);
  const end = ipv4ToNumber(endIp);
  if (start > end) throw new AppError('ip_range_invalid', { start_ip: startIp, end_ip: endIp });
  const count = end - start + 1;
  if (count > DeviceSearchLimits.maxAddresses)
    throw new AppError('ip_range_too_large', { count, max: DeviceSearchLimits.maxAddresses });
  return count;
}

interface SearchRow {
  id: number;
  project_id: number;
  user_id: number;
  request_id: string;
  start_ip: string;
  end_ip: string;
  port: number;
  total: number;
  probed: number;
  timed_out: number;
  state: DeviceSearch['state'];
  found: FoundDevice[] | string;
  created_at: Date | string;
  deadline_at: Date | string;
  finished_at: Date | string | null;
}

type Probe = { device?: Omit<FoundDevice, 'registered' | 'device_id'>; timedOut?: boolean };

const SERIAL = /^[A-Za-z0-9._:-]{1,64}$/;
const text = (v: unknown, max = 255): string => (typeof v === 'string' ? v.slice(0, max) : '');

/**
 * Network searches (issue 16 item 8), each a task of the instance that was asked, probing
 * `GET http://{ip}:{port}/api/info` over the range with `DeviceSearchLimits.concurrency` probes at once and a
 * time limit per probe. Its state is a row of `device_searches`, written as it goes with a
 * `DeviceSearchEvent` on the user's topic in the same transaction, so any instance answers
 * `device.search_result` and the events reach the user's consoles wherever they are connected.
 */
export class DeviceSearches {
  private readonly running = new Map<number, { abort: AbortController; done: Promise<void> }>();

  constructor(private readonly app: ServerContext) {}

  private get probeTimeoutMs(): number {
    return this.app.config.mqtt.searchProbeTimeoutMs ?? DeviceSearchLimits.probeTimeoutMs;
  }

  /** Starts a search (or answers the one this request id already names). */
  async start(
    who: { userId: number; projectId: number },
    args: { start_ip: string; end_ip: string; port: number; request_id?: string },
  ): Promise<DeviceSearch> {
    const total = rangeSize(args.start_ip, args.end_ip);
    // loopback, link-local and unspecified addresses are not searched unless the operator allows them
    const first = ipv4ToNumber(args.start_ip);
    for (let i = 0; i < total; i++) {
      const range = refusedRange(numberToIpv4(first + i), this.app.config.devices.allowLoopback);
      if (range)
        throw new AppError('ip_range_invalid', {
          start_ip: args.start_ip,
          end_ip: args.end_ip,
          reason: 'address_refused',
          range,
        });
    }
    const requestId = args.request_id ?? randomUUID();
    const existing = await this.row(who.userId, requestId);
    if (existing) return this.view(existing);
    const now = this.app.clock.now();
    // a search cannot outlast this; one still "running" past it lost its instance
    const boundMs = (Math.ceil(total / DeviceSearchLimits.concurrency) + 1) * this.probeTimeoutMs + 60_000;
    const inserted = await this.app.db.transaction().execute(async (trx) => {
      // a user has at most so many searches running (each probes up to 1,024 addresses): counted under a lock
      // of the user's, so parallel starts cannot all pass
      await sql`select pg_advisory_xact_lock(hashtext('lintel.device_search'), ${who.userId}::int)`.execute(
        trx,
      );
      const running = await sql<{ n: number }>`select count(*)::int as n from device_searches
        where user_id = ${who.userId} and state = 'running' and deadline_at > ${now}`.execute(trx);
      const used = running.rows[0]?.n ?? 0;
      if (used >= DeviceSearchLimits.perUser)
        throw new AppError('limit_exceeded', { used, max: DeviceSearchLimits.perUser });
      // a user's searches are kept a day
      await sql`delete from device_searches where user_id = ${who.userId}
        and created_at < ${new Date(now.getTime() - 86_400_000)}`.execute(trx);
      return sql<SearchRow>`insert into device_searches
          (project_id, user_id, request_id, start_ip, end_ip, port, total, created_at, updated_at, deadline_at)
        values (${who.projectId}, ${who.userId}, ${requestId}, ${args.start_ip}, ${args.end_ip}, ${args.port},
          ${total}, ${now}, ${now}, ${new Date(now.getTime() + boundMs)})
        on conflict (user_id, request_id) do nothing
        returning *`.execute(trx);
    });
    const row = inserted.rows[0];
    if (!row) return this.view((await this.row(who.userId, requestId))!);
    const abort = new AbortController();
    const done = this.run(row, abort.signal)
      .catch((err: unknown) => this.app.log.error({ err, requestId }, 'the network search failed'))
      .finally(() => this.running.delete(row.id));
    this.running.set(row.id, { abort, done });
    return this.view(row);
  }

  /** The caller's search by its request id. */
  async result(userId: number, requestId: string): Promise<DeviceSearch> {
    const row = await this.row(userId, requestId);
    if (!row) throw new AppError('item_not_found');
    return this.view(row);
  }

  /** Stops the searches of this instance (the server is closing): they end `interrupted`. */
  async stop(): Promise<void> {
    const all = [...this.running.values()];
    for (const s of all) s.abort.abort();
    await Promise.all(all.map((s) => s.done));
  }

  private async row(userId: number, requestId: string): Promise<SearchRow | undefined> {
    const r = await sql<SearchRow>`select * from device_searches
      where user_id = ${userId} and request_id = ${requestId}`.execute(this.app.db);
    return r.rows[0];
  }

  private view(r: SearchRow): DeviceSearch {
    const iso = (d: Date | string) => new Date(d).toISOString();
    const lost = r.state === 'running' && this.app.clock.now() > new Date(r.deadline_at);
    return {
      request_id: r.request_id,
      start_ip: r.start_ip,
      end_ip: r.end_ip,
      port: r.port,
      state: lost ? 'interrupted' : r.state,
      total: r.total,
      probed: r.probed,
      timed_out: r.timed_out,
      found: typeof r.found === 'string' ? (JSON.parse(r.found) as FoundDevice[]) : r.found,
      created_at: iso(r.created_at),
      finished_at: r.finished_at ? iso(r.finished_at) : null,
    };
  }

  /** One address: a device when it answers `/api/info` with a serial number, else nothing. */
  private async probe(ip: string, port: number, stop: AbortSignal): Promise<Probe> {
    // the same rules as every request to a device: refused ranges not probed, no redirect, a bounded reply
    if (refusedRange(ip, this.app.config.devices.allowLoopback)) return {};
    const timeout = AbortSignal.timeout(this.probeTimeoutMs);
    try {
      const res = await deviceFetch(deviceUrl(ip, port, '/api/info', this.app.config.devices.allowLoopback), {
        method: 'GET',
        headers: { accept: 'application/json' },
        timeoutMs: this.probeTimeoutMs,
        maxBytes: Math.min(INFO_MAX_BYTES, this.app.config.devices.replyMaxBytes),
        signal: AbortSignal.any([stop, timeout]),
      });
      if (res.status !== 200 || res.text === null) return {};
      const body = res.text;
      const info = JSON.parse(body) as unknown;
      if (!info || typeof info !== 'object') return {};
      const serial = text((info as Record<string, unknown>).device_serial_number, 64).trim();
      if (!SERIAL.test(serial)) return {};
      return {
        device: {
          ip_address: ip,
          port,
          serial_number: serial,
          device_type: text((info as Record<string, unknown>).device_type, 64),
          device_name: text((info as Record<string, unknown>).device_name),
          firmware_version: text((info as Record<string, unknown>).firmware_version, 64),
        },
      };
    } catch {
      // refused, reset, not JSON: no device there; no answer in time: counted
      return timeout.aborted && !stop.aborted ? { timedOut: true } : {};
    }
  }

  private async run(row: SearchRow, stop: AbortSignal): Promise<void> {
    const first = ipv4ToNumber(row.start_ip);
    const step = Math.max(1, Math.ceil(row.total / 50));
    let next = 0;
    const tally = { probed: 0, timedOut: 0, found: 0 };
    let writes: Promise<void> = Promise.resolve();
    const write = (phase: 'progress' | 'found' | 'done' | 'interrupted', device?: Probe['device']) => {
      const at = { ...tally };
      writes = writes
        .then(() => this.persist(row, phase, at, device))
        .catch((err: unknown) =>
          this.app.log.error({ err, requestId: row.request_id }, 'a network search could not be saved'),
        );
    };
    const worker = async () => {
      while (!stop.aborted && next < row.total) {
        const ip = numberToIpv4(first + next++);
        const r = await this.probe(ip, row.port, stop);
        if (stop.aborted) break;
        tally.probed++;
        if (r.timedOut) tally.timedOut++;
        if (r.device) {
          tally.found++;
          write('found', r.device);
        } else if (tally.probed % step === 0 && tally.probed < row.total) write('progress');
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(DeviceSearchLimits.concurrency, row.total) }, () => worker()),
    );
    write(stop.aborted ? 'interrupted' : 'done');
    await writes;
  }

  /** The search's row as it stands now, and its event, in one transaction. */
  private async persist(
    row: SearchRow,
    phase: 'progress' | 'found' | 'done' | 'interrupted',
    at: { probed: number; timedOut: number; found: number },
    device?: Probe['device'],
  ): Promise<void> {
    const app = this.app;
    await app.outbox.transaction(app.db, async (trx) => {
      let found: FoundDevice | undefined;
      if (device) {
        const known = await sql<{
          id: number;
          project_id: number;
        }>`select id, project_id from devices where serial_number = ${device.serial_number}`.execute(trx);
        const d = known.rows[0];
        found = {
          ...device,
          registered: Boolean(d),
          device_id: d && d.project_id === row.project_id ? d.id : null,
        };
      }
      const now = app.clock.now();
      const ended = phase === 'done' || phase === 'interrupted';
      await sql`update device_searches set probed = ${at.probed}, timed_out = ${at.timedOut},
            updated_at = ${now},
            found = ${found ? sql`found || ${JSON.stringify([found])}::jsonb` : sql`found`},
            state = ${ended ? phase : sql`state`},
            finished_at = ${ended ? now : null}
          where id = ${row.id}`.execute(trx);
      await app.outbox.emit(trx, DeviceSearchEvent, {
        userId: row.user_id,
        projectId: row.project_id,
        requestId: row.request_id,
        phase,
        probed: at.probed,
        total: row.total,
        timedOut: at.timedOut,
        found: at.found,
        ...(found ? { device: found } : {}),
      });
    });
  }
}
