/**
 * `lintel reports licences-used|licences-period --json` (issue 15 item 7): generated from the registry, run
 * as the built CLI against a real server; a user without the report permission exits 4 (refused), a bad
 * period 2 (usage).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup, uid, userWith } from '../support/fixtures';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let configDir: string;
let north: number;

const signIn = async (login: string, password: string) => {
  const dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', login, '--password-stdin'], {
    configDir: dir,
    input: `${password}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  return dir;
};

beforeAll(async () => {
  expect(buildCli().status).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  const root = await rootGroup(api);
  north = await group(api, `North ${uid()}`, root, {
    license_settings: {
      is_enabled: true,
      notifications: { period: 'never', notify_before: 0 },
      licenses: [
        {
          is_active: true,
          features: { sip: { is_enabled: true } },
          restrict_period: { is_active: true, from: '2020-01-01', to: '2020-12-31' },
        },
      ],
    },
    license_limits: { users: 7 },
  });
  await userWith(ts, api, { permissions: [], domains: [north] });
  configDir = await signIn(ts.adminLogin, ts.adminPassword);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
});

describe('lintel reports', () => {
  it('licences-used --json prints the report the server gives, with the filters as flags', async () => {
    const r = await lintel(['reports', 'licences-used', '--domains', String(north), '--json'], { configDir });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      data: { group_id: number; used: { users: number }; limits: { users: number } }[];
    };
    expect(out.data.map((d) => d.group_id)).toEqual([north]);
    expect(out.data[0]).toMatchObject({ used: { users: 1 }, limits: { users: 7 } });
    // the same as the command of the registry answers
    const direct = await getCommand('reports.licences_used').run({ api }, { domains: String(north) });
    expect(out.data).toEqual(direct.data);
  });

  it('licences-period --json reports the status, with --status and --period', async () => {
    const r = await lintel(
      [
        'reports',
        'licences-period',
        '--domains',
        String(north),
        '--status',
        'expired',
        '--period',
        'all_time',
        '--json',
      ],
      { configDir },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { data: { group_id: number; status: string; to: string }[] };
    expect(out.data).toEqual([
      expect.objectContaining({ group_id: north, status: 'expired', to: '2020-12-31' }),
    ]);
  });

  it('exits 4 for a user without the report permission and 2 for a period it does not know', async () => {
    const plain = await userWith(ts, api, { permissions: ['licenses.view'], domains: [north] });
    const dir = await signIn(plain.login, plain.password);
    const refused = await lintel(['reports', 'licences-used', '--json'], { configDir: dir });
    expect(refused.code).toBe(4);
    const bad = await lintel(['reports', 'licences-used', '--period', 'next_week', '--json'], { configDir });
    expect(bad.code).toBe(2);
  });
});
