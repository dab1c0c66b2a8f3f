/**
 * `lintel guest-access …`, generated from the guest-access commands: a pass granted from the command line
 * (its key and the public page's address printed once), listed, refused with the catalogue's message over
 * the group's limits, and deleted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, licence, rootGroup, uid } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let api: ApiClient;
let rule: number;

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  await licence(ts, everyFeatureOn());
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  api = await admin(ts);
  const root = await rootGroup(api);
  const serial = `CLIG-${uid()}`;
  const device = await getCommand('device.create').run(
    { api },
    { name: serial, type: 'panel', serial_number: serial, domain_id: root, protocol: 'http' },
  );
  rule = (
    await getCommand('access_rule.create').run({ api }, {
      name: `Guests ${uid()}`,
      devices: [device.data.id],
      is_shareable: true,
    } as never)
  ).data.id;
  await getCommand('group.update').run({ api }, {
    id: root,
    guest_identifier_limits: { max_passes_count: 5, max_period_days: 2 },
  } as never);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

const period = (days: number) => {
  const at = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  const from = Date.now();
  return JSON.stringify({ from: at(from), to: at(from + days * 86_400_000) });
};

it('grants, lists and deletes a guest pass; refuses one over the limits with the catalogue message', async () => {
  const offered = await lintel(['guest-access', 'access-rules', '--json'], { configDir: dir });
  expect(offered.code, offered.stderr).toBe(0);
  expect(JSON.parse(offered.stdout).data.map((r: { id: number }) => r.id)).toContain(rule);

  const args = (days: number, passes: number) => [
    'guest-access',
    'create',
    '--selectedAccessRules',
    String(rule),
    '--restrictPeriod',
    '--validatePeriod',
    period(days),
    '--restrictPassCount',
    '--passLimit',
    String(passes),
    '--json',
  ];
  const made = await lintel(args(1, 3), { configDir: dir });
  expect(made.code, made.stderr).toBe(0);
  const out = JSON.parse(made.stdout);
  expect(out.url).toBe(`${ts.server.context.config.publicUrl}/guest-access/${out.key_id}`);
  expect(out.data).toMatchObject({ name: 'Guest identifier', pass_limit: 3 });

  const over = await lintel(
    args(3, 3).filter((a) => a !== '--json'),
    { configDir: dir },
  );
  expect(over.code).not.toBe(0);
  expect(over.stderr).toContain('Guest limits: at most 5 passes and 2 days');

  const list = await lintel(['guest-access', 'list', '--json'], { configDir: dir });
  expect(JSON.parse(list.stdout).data.map((p: { id: number }) => p.id)).toContain(out.data.id);
  const gone = await lintel(['guest-access', 'delete', String(out.data.id), '--yes'], { configDir: dir });
  expect(gone.code, gone.stderr).toBe(0);
  const after = await lintel(['guest-access', 'list', '--json'], { configDir: dir });
  expect(JSON.parse(after.stdout).data.map((p: { id: number }) => p.id)).not.toContain(out.data.id);
});
