/**
 * `lintel integrations …` (issue 24 item 5): the family's verbs and its own, from the registry — an
 * integration made from the command line, listed, its cameras read from a server answering as Axxon One does
 * (tests/support/axxon-one.ts), and the password in no output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUMMY_PASSWORD } from '@lintel/core';
import { uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { startFakeAxxon, type FakeAxxon } from '../support/axxon-one';
import { buildCli, freshConfigDir, lintel, removeConfigDirs, type Run } from './support';

let ts: TestServer;
let axxon: FakeAxxon;
let dir: string;
const PASSWORD = `axxon-${uid()}-cli`;

const cli = (args: string[]) => lintel(args, { configDir: dir });
function out(r: Run): unknown {
  expect(r.stderr, r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  axxon = await startFakeAxxon({
    login: 'root',
    password: PASSWORD,
    macros: [{ id: '4fd9420e-0d22-4684-9f0a-3514240cc1ac', name: 'Open barrier' }],
    cameras: [
      { displayId: '1', displayName: 'Entrance' },
      { displayId: '2', displayName: 'Parking' },
    ],
  });
  ts = await startTestServer({ config: { integrations: { allowLoopback: true, timeoutMs: 5_000 } } });
  dir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
});
afterAll(async () => {
  await ts?.close();
  await axxon?.close();
  removeConfigDirs();
});

describe('lintel integrations', () => {
  it('creates, lists and reads the cameras and macros of an integration, never showing its password', async () => {
    const name = `VMS ${uid()}`;
    const made = out(
      await cli([
        'integrations',
        'create',
        '--name',
        name,
        '--axxon-one-settings.server-url',
        `${axxon.url}/cli`,
        '--axxon-one-settings.login',
        'root',
        '--axxon-one-settings.password',
        PASSWORD,
        '--json',
      ]),
    ) as { data: { id: number; axxon_one_settings: { password: string } } };
    expect(made.data.axxon_one_settings.password).toBe(DUMMY_PASSWORD);
    const list = await cli(['integrations', 'list', '--json']);
    expect((out(list) as { data: Array<{ name: string }> }).data.map((i) => i.name)).toContain(name);
    const table = await cli(['integrations', 'list']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(name);
    const cameras = out(await cli(['integrations', 'cameras', String(made.data.id), '--json'])) as {
      data: Array<{ name: string }>;
    };
    expect(cameras.data.map((c) => c.name)).toEqual(['Entrance', 'Parking']);
    const macros = out(await cli(['integrations', 'macros', String(made.data.id), '--json'])) as {
      data: Array<{ name: string }>;
    };
    expect(macros.data.map((m) => m.name)).toEqual(['Open barrier']);
    for (const r of [list, table]) expect(r.stdout).not.toContain(PASSWORD);
  });
});
