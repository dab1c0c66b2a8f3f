/**
 * `lintel identifiers import FILE` (issue 21 item 6), the built CLI as a child process: the per-row report,
 * the exit codes, and the action for duplicates (stop commits nothing, skip the good rows).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { admin, uid } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let api: ApiClient;
let dir: string;
let configDir: string;

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  api = await admin(ts);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-identifiers-'));
  configDir = freshConfigDir();
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  fs.rmSync(dir, { recursive: true, force: true });
});

const cards = async (name: string) =>
  (
    await getCommand('identifier.list').run(
      { api },
      { filters: [{ field: 'name', rule: 'equals', value: name }], limit: 1 },
    )
  ).meta.total;

it('imports a CSV with a per-row report, and stops on duplicates when told to', async () => {
  const tag = uid();
  const existing = (
    await getCommand('identifier.create').run({ api }, { type: 'card', value: '4242' } as never)
  ).data;
  const file = path.join(dir, 'cards.csv');
  fs.writeFileSync(
    file,
    `type,value,name\ncard,1001${tag.length},Imported ${tag}\ncard,12ab,Bad ${tag}\ncard,${existing.value},Dup ${tag}\nqr,,Imported ${tag}\n`,
  );
  const stop = await lintel(['identifiers', 'import', file, '--on-duplicate', 'stop'], { configDir });
  expect(stop.code).toBe(1);
  expect(stop.stdout).toContain('line 2: value (number_or_hex)');
  expect(stop.stdout).toContain('Nothing was imported');
  expect(await cards(`Imported ${tag}`)).toBe(0);

  const skip = await lintel(['identifiers', 'import', file, '--json'], { configDir });
  expect(skip.code).toBe(1);
  expect(JSON.parse(skip.stdout)).toMatchObject({
    rows: 4,
    invalid: 1,
    duplicates: 1,
    created: 2,
    committed: true,
  });
  expect(await cards(`Imported ${tag}`)).toBe(2);
});
