/**
 * `lintel licences keygen` → `issue` → `add` as a script runs them (issue 15 item 6): the exit codes and
 * the `--json` output of the README's table, against a real server that trusts the generated key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let configDir: string;
let dir: string;
let key: { public_key: string; private_key_file: string };
let instance: string;

const json = (s: string) => JSON.parse(s) as Record<string, unknown>;
const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();

beforeAll(async () => {
  expect(buildCli().status).toBe(0);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-lic-'));
  const made = await lintel(['licences', 'keygen', '--out', path.join(dir, 'vendor'), '--json'], {
    configDir: freshConfigDir(),
  });
  expect(made.code, made.stderr).toBe(0);
  key = json(made.stdout) as typeof key;
  ts = await startTestServer({
    config: { licences: { publicKeys: [key.public_key], cloudTimeoutMs: 1000, evaluationDays: 0 } },
  });
  configDir = freshConfigDir();
  const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(login.code).toBe(0);
  const list = await lintel(['licences', 'list', '--json'], { configDir });
  expect(list.code, list.stderr).toBe(0);
  instance = json(list.stdout).instance_id as string;
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const issue = (args: string[], privateKey = key.private_key_file) =>
  lintel(['licences', 'issue', '--key', privateKey, ...args], { configDir });

describe('lintel licences keygen, issue, add', () => {
  it('keygen writes the private key for its owner only and never overwrites it', async () => {
    expect(key.public_key).toMatch(/^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/);
    expect(fs.statSync(key.private_key_file).mode & 0o077).toBe(0);
    const again = await lintel(
      ['licences', 'keygen', '--out', path.dirname(key.private_key_file), '--json'],
      {
        configDir,
      },
    );
    expect(again.code).toBe(2);
    expect(json(again.stderr)).toMatchObject({ error_code: 'licence_key_exists' });
  });

  it('issues a file that the server takes, and prints JSON a script reads', async () => {
    const file = path.join(dir, 'site.licence');
    const issued = await issue([
      '--instance',
      instance,
      '--to',
      inDays(60),
      '--features',
      'sip,sip.is_web_dialer_enabled,ukey2',
      '--count',
      'sip=7',
      '--units',
      '4',
      '-o',
      file,
      '--json',
    ]);
    expect(issued.code, issued.stderr).toBe(0);
    const out = json(issued.stdout);
    expect(out).toMatchObject({ file, instance_id: instance, units_per_licence: 4 });
    expect((out.features as { sip: unknown }).sip).toMatchObject({
      is_enabled: true,
      is_web_dialer_enabled: true,
      license_count: 7,
    });
    const added = await lintel(['licences', 'add', file, '--json'], { configDir });
    expect(added.code, added.stderr).toBe(0);
    expect(json(added.stdout)).toMatchObject({ licence_id: out.id });
    const usage = await lintel(['licences', 'usage', '--json'], { configDir });
    expect(json(usage.stdout)).toMatchObject({
      units_per_licence: 4,
      features: { sip: { used: 0, max: 7 } },
    });

    // the same file twice: refused with its catalogue code, exit 1
    const twice = await lintel(['licences', 'add', file, '--json'], { configDir });
    expect(twice.code).toBe(1);
    expect(json(twice.stderr)).toMatchObject({ error_code: 'license_cannot_be_applied' });
  });

  it('a file for another instance, or signed by another key, is refused with exit 1 and its code', async () => {
    const other = path.join(dir, 'other.licence');
    expect((await issue(['--instance', 'someone-else', '--to', inDays(10), '-o', other])).code).toBe(0);
    const r = await lintel(['licences', 'add', other, '--json'], { configDir });
    expect(r.code).toBe(1);
    expect(json(r.stderr)).toMatchObject({ error_code: 'license_not_found_for_project' });

    const rogue = await lintel(['licences', 'keygen', '--out', path.join(dir, 'rogue'), '--json'], {
      configDir,
    });
    const forged = path.join(dir, 'forged.licence');
    const f = await issue(
      ['--instance', instance, '--to', inDays(10), '-o', forged],
      json(rogue.stdout).private_key_file as string,
    );
    expect(f.code).toBe(0);
    const s = await lintel(['licences', 'add', forged, '--json'], { configDir });
    expect(s.code).toBe(1);
    expect(json(s.stderr)).toMatchObject({ error_code: 'license_sign_wrong' });
  });

  it('bad usage is exit 2: an unknown flag, a count of nothing counted, no file and no --cloud', async () => {
    const flag = await issue([
      '--instance',
      instance,
      '--to',
      inDays(5),
      '--features',
      'warp_drive',
      '--json',
    ]);
    expect(flag.code).toBe(2);
    expect(json(flag.stderr)).toMatchObject({ error_code: 'licence_unknown_flag' });
    const count = await issue(['--instance', instance, '--to', inDays(5), '--count', 'elevator=3']);
    expect(count.code).toBe(2);
    expect((await lintel(['licences', 'add', '--json'], { configDir })).code).toBe(2);
    // without a licence server configured: the catalogue's "not configured", exit 1, at once
    const cloud = await lintel(['licences', 'add', '--cloud', '--json'], { configDir });
    expect(cloud.code).toBe(1);
    expect(json(cloud.stderr)).toMatchObject({ error_code: 'license_cloud_not_configured' });
  });
});
