import fs from 'node:fs';
import path from 'node:path';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ServerContext } from '../context';
import type { DB } from '../db/schema';
import { issuePassword } from '../handlers/device/device.store';

/**
 * The demo's simulated building (`lintel seed demo`): a few devices registered on mqtt with serial numbers
 * `LINTEL-DEMO-{project}-…`, whose HTTP API the simulator serves on loopback from `DEMO_HTTP_PORT` on. With
 * `LINTEL_DEMO_DEVICES_FILE` set (`npm start` sets it unless `LINTEL_DEMO_DEVICES=0`), the server writes their
 * credentials there — at start and whenever the demo adds them — and `device-sim --demo FILE` runs them
 * against the broker (docs/decisions.md "Network search and the demo's devices").
 */
export const DEMO_SERIAL_PREFIX = 'LINTEL-DEMO-';
export const DEMO_HTTP_PORT = 18201;

const DEMO_DEVICES = [
  { key: 'PANEL-1', type: 'panel', name: 'Entrance 1 door panel' },
  { key: 'PANEL-2', type: 'panel', name: 'Entrance 2 door panel' },
  { key: 'ACCESS-1', type: 'accesscontroller', name: 'Car park access controller' },
  { key: 'LIFT-1', type: 'liftcontroller', name: 'Lift controller' },
] as const;

/** Registers the demo's devices in `domainId` (building 1); returns how many. */
export async function addDemoDevices(
  trx: Transaction<DB>,
  projectId: number,
  domainId: number,
  userId: number,
): Promise<number> {
  let n = 0;
  for (const [i, d] of DEMO_DEVICES.entries()) {
    const serial = `${DEMO_SERIAL_PREFIX}${projectId}-${d.key}`;
    const r = await sql`insert into devices
        (project_id, domain_id, name, description, type, model, ip_address, port, serial_number, password,
         protocol, created_by)
      values (${projectId}, ${domainId}, ${d.name}, 'Simulated (apps/device-sim)', ${d.type}, 'Simulator',
        '127.0.0.1', ${DEMO_HTTP_PORT + i}, ${serial}, ${issuePassword()}, 'mqtt', ${userId})
      on conflict (serial_number) do nothing`.execute(trx);
    n += Number(r.numAffectedRows ?? 0);
  }
  return n;
}

export interface DemoDevicesFile {
  broker: string;
  devices: Array<{
    serial: string;
    type: string;
    name: string;
    password: string;
    http_host: string;
    http_port: number;
  }>;
}

/**
 * Writes the demo devices' credentials for the simulator (only when `LINTEL_DEMO_DEVICES_FILE` names a
 * file): readable by the server's user only, like the embedded database beside it.
 */
export async function writeDemoDevicesFile(app: ServerContext, db: Kysely<DB> = app.db): Promise<void> {
  const file = app.config.demoDevicesFile;
  if (!file) return;
  const rows = await sql<{
    serial_number: string;
    type: string;
    name: string;
    password: string;
    ip_address: string | null;
    port: number;
  }>`select serial_number, type, name, password, ip_address, port from devices
    where serial_number like ${`${DEMO_SERIAL_PREFIX}%`} and protocol = 'mqtt' order by id`.execute(db);
  const out: DemoDevicesFile = {
    broker: app.devices.brokerUrl(),
    devices: rows.rows.map((r) => ({
      serial: r.serial_number,
      type: r.type,
      name: r.name,
      password: r.password,
      http_host: r.ip_address ?? '127.0.0.1',
      http_port: r.port,
    })),
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(out, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
