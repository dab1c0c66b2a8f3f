/**
 * `lintel devices search --from --to --port` follows a network search to its end, printing each simulated
 * device found (NDJSON with --json) and the progress on stderr; `lintel devices add-found --group` adds what
 * it printed, read from stdin, all or none.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let root: number;
let port = 0;
const sims: SimulatedDevice[] = [];
const tag = uid().toUpperCase();

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer({
    config: {
      mqtt: {
        port: 0,
        host: '127.0.0.1',
        shared: false,
        requestTimeoutMs: 1000,
        sweepMs: 0,
        searchProbeTimeoutMs: 2000,
      },
    },
  });
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  root = await rootGroup(await admin(ts));
  for (const [host, type] of [
    ['127.0.0.31', 'panel'],
    ['127.0.0.33', 'accesscontroller'],
  ] as const) {
    const sim = new SimulatedDevice({
      serial: `CLIS-${tag}-${host.split('.')[3]}`,
      type,
      httpHost: host,
      httpPort: port,
    });
    await sim.start();
    port = sim.httpPort;
    sims.push(sim);
  }
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
  removeConfigDirs();
});

it('searches a range, prints the devices found, and adds them from what it printed', async () => {
  const found = await lintel(
    ['devices', 'search', '--from', '127.0.0.30', '--to', '127.0.0.34', '--port', String(port), '--json'],
    { configDir: dir },
  );
  expect(found.code, found.stderr).toBe(0);
  const lines = found.stdout
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          ip_address: string;
          serial_number: string;
          device_type: string;
          registered: boolean;
        },
    );
  expect(lines.map((l) => l.ip_address).sort()).toEqual(['127.0.0.31', '127.0.0.33']);
  expect(lines.every((l) => !l.registered)).toBe(true);
  expect(found.stderr).toMatch(/probed 5 of 5, found 2/);

  // a person reads a line per device
  const text = await lintel(
    ['devices', 'search', '--from', '127.0.0.33', '--to', '127.0.0.33', '--port', String(port)],
    {
      configDir: dir,
    },
  );
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout).toMatch(new RegExp(`127\\.0\\.0\\.33 +${port} +CLIS-${tag}-33 +accesscontroller`));

  const added = await lintel(['devices', 'add-found', '--group', String(root), '-', '--json'], {
    configDir: dir,
    input: found.stdout,
  });
  expect(added.code, added.stderr).toBe(0);
  const { data } = JSON.parse(added.stdout) as { data: { id: number; serial_number: string }[] };
  expect(data.map((d) => d.serial_number).sort()).toEqual(lines.map((l) => l.serial_number).sort());
  const device = await getCommand('device.get').run({ api: await admin(ts) }, { id: data[0]!.id });
  expect(device).toMatchObject({ protocol: 'http', port, domain_id: root });

  // again: they are in use, nothing is added, and the exit code says it failed
  const again = await lintel(['devices', 'add-found', '--group', String(root), '-'], {
    configDir: dir,
    input: found.stdout,
  });
  expect(again.code).not.toBe(0);
  expect(again.stderr).toMatch(/in use/);

  // a bad range is the server's catalogue error
  const reversed = await lintel(['devices', 'search', '--from', '127.0.0.34', '--to', '127.0.0.30'], {
    configDir: dir,
  });
  expect(reversed.code).not.toBe(0);
  expect(reversed.stderr).toMatch(/comes after the end address/);
});
