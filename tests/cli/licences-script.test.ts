/**
 * `lintel licences issue` then `lintel licences add`, list, usage and delete from a shell script, as an
 * installer automates them (issue 15 "done when"): each step's exit code as the README's table says, and the
 * `--json` a script reads, against a server on its evaluation licence that trusts the script's vendor key.
 * And the same list for a person at a terminal: the licences, what is in force, the instance id.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LicenceList } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, userWith } from '../support/fixtures';
import { bin, buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';
import { terminal } from './pty';

let ts: TestServer;
let dir: string;
let configDir: string;
let key: { public_key: string; private_key_file: string };

beforeAll(async () => {
  expect(buildCli().status).toBe(0);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-lic-script-'));
  const made = await lintel(['licences', 'keygen', '--out', path.join(dir, 'vendor'), '--json'], {
    configDir: freshConfigDir(),
  });
  expect(made.code, made.stderr).toBe(0);
  key = JSON.parse(made.stdout) as typeof key;
  ts = await startTestServer({
    config: { licences: { publicKeys: [key.public_key], cloudTimeoutMs: 1000, evaluationDays: 30 } },
  });
  configDir = freshConfigDir();
  const login = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir,
    input: `${ts.adminPassword}\n`,
  });
  expect(login.code, login.stderr).toBe(0);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs a POSIX shell script in `dir` with `$LINTEL` the built CLI; its stdout is `step code` lines. */
function sh(script: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const file = path.join(dir, 'install.sh');
  fs.writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [file], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? dir,
        CI: 'true',
        LINTEL: `${process.execPath} ${bin}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

const read = <T = Record<string, unknown>>(name: string) =>
  JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as T;

const SCRIPT = `
set -u
step() { echo "$1 $2"; }
$LINTEL licences list --json > list.json; step list $?
instance=$(node -p "require('./list.json').instance_id")
$LINTEL licences issue --key "$KEY" --instance "$instance" --to 2099-01-01 \\
  --features sip,sip.is_web_dialer_enabled,ukey2 --count sip=5 --units 2 --id site-2099 \\
  -o site.licence --json > issued.json; step issue $?
$LINTEL licences issue --key "$KEY" --instance "$instance" --to 2099-01-01 --features warp_drive \\
  -o bad.licence --json 2> bad-flag.err; step issue-bad-flag $?
$LINTEL licences add site.licence --json > added.json; step add $?
$LINTEL licences add site.licence --json 2> again.err; step add-again $?
$LINTEL licences list --json > after.json; step list-after $?
$LINTEL licences list > after.tsv; step list-text $?
$LINTEL licences usage --json > usage.json; step usage $?
id=$(node -p "require('./added.json').id")
$LINTEL licences delete "$id" --json 2> no-yes.err; step delete-no-yes $?
$LINTEL licences delete "$id" --yes --json > deleted.json; step delete $?
$LINTEL licences delete "$id" --yes --json 2> gone.err; step delete-again $?
`;

describe('lintel licences from a script', () => {
  it('issue, add, list, usage and delete: exit codes and --json as the README says', async () => {
    const run = await sh(SCRIPT, { LINTEL_CONFIG_DIR: configDir, KEY: key.private_key_file });
    expect(run.code, run.out).toBe(0);
    const codes = Object.fromEntries(
      run.out
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .map(([step, code]) => [step, Number(code)]),
    );
    expect(codes).toEqual({
      list: 0,
      issue: 0,
      'issue-bad-flag': 2,
      add: 0,
      'add-again': 1,
      'list-after': 0,
      'list-text': 0,
      usage: 0,
      'delete-no-yes': 2,
      delete: 0,
      'delete-again': 5,
    });

    // a fresh server: its evaluation licence, marked
    const before = read<LicenceList>('list.json');
    expect(before).toMatchObject({ evaluation: true, items: [{ kind: 'evaluation', state: 'active' }] });
    expect(read('issued.json')).toMatchObject({
      id: 'site-2099',
      instance_id: before.instance_id,
      units_per_licence: 2,
      features: { sip: { is_enabled: true, license_count: 5 }, elevator: { is_enabled: false } },
    });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'bad-flag.err'), 'utf8'))).toMatchObject({
      error_code: 'licence_unknown_flag',
    });
    const added = read<{ id: number }>('added.json');
    expect(added).toEqual({ id: expect.any(Number), licence_id: 'site-2099' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'again.err'), 'utf8'))).toMatchObject({
      error_code: 'license_cannot_be_applied',
      data: { reason: 'already_added', id: added.id },
    });

    // the bought licence is the one in force; the evaluation gives way
    const after = read<LicenceList>('after.json');
    expect(after).toMatchObject({ evaluation: false, active_ids: [added.id], in_force: { id: added.id } });
    expect(after.items.find((l) => l.kind === 'evaluation')!.state).toBe('superseded');
    // for a pipe: a header and tab-separated rows, codes a script can cut
    const tsv = fs.readFileSync(path.join(dir, 'after.tsv'), 'utf8').trim().split('\n');
    expect(tsv[0]).toBe('id\tstate\tkind\tissuer\tlicence_id\tvalid_from\tvalid_to\tdays_left\tfeatures');
    expect(tsv.find((l) => l.includes('\tevaluation\t'))).toMatch(/\tsuperseded\tevaluation\t/);
    expect(
      tsv
        .find((l) => l.includes('site-2099'))!
        .split('\t')
        .slice(1, 3),
    ).toEqual(['active', 'file']);
    expect(tsv.find((l) => l.includes('site-2099'))!.endsWith('\tsip=5,ukey2')).toBe(true);

    expect(read('usage.json')).toMatchObject({
      units_per_licence: 2,
      features: { sip: { used: 0, max: 5 }, ukey2: { used: 0, max: null } },
    });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'no-yes.err'), 'utf8'))).toMatchObject({
      error_code: 'needs_yes',
    });
    expect(read('deleted.json')).toEqual({ ok: true });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'gone.err'), 'utf8'))).toMatchObject({
      error_code: 'item_not_found',
    });
    // deleted: the evaluation is in force again
    const list = await lintel(['licences', 'list', '--json'], { configDir });
    expect(JSON.parse(list.stdout)).toMatchObject({ evaluation: true, active_ids: [before.items[0]!.id] });
  });

  it('signed out is exit 3, a role without the licence permissions exit 4, both with their code', async () => {
    const out = await lintel(['licences', 'list', '--json'], { configDir: freshConfigDir() });
    expect(out.code).toBe(3);
    const api = await admin(ts);
    const plain = await userWith(ts, api, { permissions: ['users.view'], domains: [await rootGroup(api)] });
    const theirs = freshConfigDir();
    const login = await lintel(['login', '--server', ts.url, '--login', plain.login, '--password-stdin'], {
      configDir: theirs,
      input: `${plain.password}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    for (const args of [
      ['licences', 'list', '--json'],
      ['licences', 'usage', '--json'],
      ['licences', 'add', path.join(dir, 'site.licence'), '--json'],
    ]) {
      const r = await lintel(args, { configDir: theirs });
      expect(r.code, args.join(' ')).toBe(4);
      expect(JSON.parse(r.stderr), args.join(' ')).toMatchObject({ error_code: 'method_prohibited' });
    }
  });

  it('shows a person the licences, what is in force and the instance id', async () => {
    const term = terminal(['licences', 'list'], { configDir });
    try {
      const screen = await term.waitFor(/Instance ID \(a licence file is issued for it\): \S+/);
      expect(screen).toMatch(/ID\s+STATE\s+KIND\s+VALID UNTIL\s+DAYS LEFT\s+FEATURES/);
      expect(screen).toMatch(/\n1\s+active\s+evaluation\s+\d{4}-\d\d-\d\d\s+(29|30)\s+every feature\r?\n/);
      expect(screen).toContain('In force: the evaluation licence, every feature on. Days left:');
      expect(await term.exited).toBe(0);
    } finally {
      term.kill();
    }
    const usage = terminal(['licences', 'usage'], { configDir });
    try {
      const screen = await usage.waitFor(/One licence covers 1 \(numbers, devices or keys\)\./);
      expect(screen).toMatch(/FEATURE\s+USED\s+LICENCES\s+CAPACITY/);
      expect(screen).toMatch(/virtual numbers\s+0\s+no limit\s+no limit/);
      expect(await usage.exited).toBe(0);
    } finally {
      usage.kill();
    }
  });
});
