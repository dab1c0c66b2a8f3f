/**
 * Issue 14, item 3: an import is all or nothing even when its server dies. A server child process is
 * killed with SIGKILL while its commit statement runs in PostgreSQL: no account, user or group membership
 * of the import is left, the import stays open with its staged rows, and committing it again (on another
 * instance) inserts every row once. The same for an identifier import killed in its continue (issue 21),
 * and for the one-request import (user.import_stream with commit) killed mid-stream, its first batches
 * inserted in its open transaction; and that import, when a login it checked is taken before its insert,
 * fails whole with login_already_used, and when a role it checked is deleted before its insert, with
 * invalid_related_entity. Runs in the PostgreSQL pass (DATABASE_URL set).
 */
import net from 'node:net';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { getCommand, ImportReport } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, tokenOf, uid } from '../support/fixtures';
import { NAMESPACE } from '../../apps/server/src/auth/identities';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const ROWS = 20_000;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let ts: TestServer;
let api: ApiClient;
let child: ChildProcess | null = null;
let watcher: pg.Client;

beforeAll(async () => {
  database = await freshDatabase();
  ts = await startTestServer({ database: database.url });
  api = await admin(ts);
  watcher = new pg.Client({ connectionString: database.url });
  await watcher.connect();
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await watcher?.end();
  await ts?.close();
  await database?.drop();
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

const count = async (q: string, params: unknown[] = []) =>
  Number((await watcher.query<{ n: string }>(q, params)).rows[0]!.n);

/** A second instance on the same database, as its own process (killed by the test); once it runs. */
async function secondInstance(): Promise<{ port: number; exited: Promise<unknown> }> {
  const port = await freePort();
  child = spawn(process.execPath, [path.join(repoRoot, 'apps/server/dist/main.js')], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      // its embedded broker on a port of its own, not the default another server may hold
      MQTT_PORT: String(await freePort()),
      // no SIP server: the test kills this process, and a Kamailio of its own would outlive it
      LINTEL_SIP: 'off',
      LOG_LEVEL: 'warn',
      LINTEL_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-kill-')),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((r) => child!.once('exit', r));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child!.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Lintel is running')) resolve();
    });
    child!.once('exit', (code) => reject(new Error(`the child server exited (${code}) before it ran`)));
  });
  return { port, exited };
}

/**
 * POSTs `body` to `path` on a second instance and kills it (SIGKILL) while PostgreSQL runs a statement
 * containing `statement`; returns once PostgreSQL has ended the orphaned session (and rolled it back).
 */
async function killedWhile(path_: string, body: unknown, statement: string): Promise<void> {
  const { port, exited } = await secondInstance();
  const request = fetch(`http://127.0.0.1:${port}/api/v0${path_}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).catch((err: unknown) => err);
  const running = `select count(*) as n from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query ilike $1`;
  while ((await count(running, [`%${statement}%`])) === 0) {
    expect(child!.exitCode).toBeNull();
    await new Promise((r) => setImmediate(r));
  }
  child!.kill('SIGKILL');
  await exited;
  child = null;
  expect(await request).toBeInstanceOf(Error);
  // PostgreSQL ends the orphaned session (when it next writes to the dead socket) and rolls it back
  while ((await count(running, [`%${statement}%`])) > 0) await new Promise((r) => setImmediate(r));
}

it('a server killed with kill -9 mid-commit leaves nothing of the import, which commits whole afterwards', async () => {
  const tag = uid();
  const role = (
    await getCommand('role.create').run({ api }, { name: `Kill ${tag}`, permissions: ['users.view'] })
  ).data.id;
  const root = await rootGroup(api);
  const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'kill.ndjson' });
  let body = '';
  for (let i = 0; i < ROWS; i++)
    body +=
      JSON.stringify({ line: i + 2, login: `k${i}.${tag}`, name: `Killed ${i}`, role, domains: root }) + '\n';
  const staged = await fetch(`${ts.url}/api/v0/users/import/${id}/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  expect(staged.status).toBe(200);
  expect(await staged.json()).toMatchObject({ rows: ROWS, valid: ROWS, invalid: 0 });
  const accountsBefore = await count('select count(*) as n from accounts');
  const usersBefore = await count('select count(*) as n from users');
  const membershipsBefore = await count('select count(*) as n from user_domains');

  // the commit goes to a second instance (its own process); it is killed while PostgreSQL inserts the accounts
  await killedWhile(`/users/import/${id}/commit`, {}, 'insert into accounts');

  expect(await count('select count(*) as n from accounts')).toBe(accountsBefore);
  expect(await count('select count(*) as n from users')).toBe(usersBefore);
  expect(await count('select count(*) as n from user_domains')).toBe(membershipsBefore);
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%.${tag}`])).toBe(0);
  expect(await count(`select count(*) as n from user_imports where id = $1 and status = 'open'`, [id])).toBe(
    1,
  );
  expect(await count(`select count(*) as n from user_import_rows where import_id = $1`, [id])).toBe(ROWS);

  // the import is still whole: committing it on the surviving instance inserts every row once
  const report = ImportReport.parse(await getCommand('user.import_commit').run({ api }, { id }));
  expect(report).toMatchObject({ committed: true, rows: ROWS, inserted: ROWS });
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%.${tag}`])).toBe(ROWS);
}, 180_000);

it('an identifier import killed with kill -9 mid-continue leaves no identifier of it, and continues whole afterwards', async () => {
  // card numbers of ten digits: five of this run, five of the row
  const tag = String(10_000 + Math.floor(Math.random() * 89_999));
  let body = '';
  for (let i = 0; i < ROWS; i++)
    body +=
      JSON.stringify({ type: 'card', value: `${tag}${String(i).padStart(5, '0')}`, name: `Killed ${i}` }) +
      '\n';
  const attempted = await fetch(`${ts.url}/api/v0/identifiers/import/attempt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  expect(attempted.status).toBe(200);
  const attempt = (await attempted.json()) as { filepath: string; rows: number; invalid: number };
  expect(attempt).toMatchObject({ rows: ROWS, invalid: 0 });
  const before = await count('select count(*) as n from identifiers');

  // the continue goes to a second instance; it is killed while PostgreSQL inserts the identifiers
  await killedWhile(
    '/identifiers/import/continue',
    { filepath: attempt.filepath, action: 'skip' },
    'insert into identifiers',
  );

  expect(await count('select count(*) as n from identifiers')).toBe(before);
  expect(
    await count(`select count(*) as n from identifier_imports where id = $1 and status = 'open'`, [
      attempt.filepath,
    ]),
  ).toBe(1);
  // still whole: continued on the surviving instance, every row goes in once
  expect(
    await getCommand('identifier.import_continue').run(
      { api },
      { filepath: attempt.filepath, action: 'skip' },
    ),
  ).toMatchObject({ committed: true, created: ROWS });
  expect(await count(`select count(*) as n from identifiers where value like $1`, [`${tag}%`])).toBe(ROWS);
}, 180_000);

const commitQuery = (commit: object) => `commit=${encodeURIComponent(JSON.stringify(commit))}`;

it('a one-request import killed with kill -9 mid-stream leaves nothing of the file in the tables', async () => {
  const tag = uid();
  const role = (
    await getCommand('role.create').run({ api }, { name: `Kill one ${tag}`, permissions: ['users.view'] })
  ).data.id;
  const root = await rootGroup(api);
  const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'kill-one.ndjson' });
  const accountsBefore = await count('select count(*) as n from accounts');
  const usersBefore = await count('select count(*) as n from users');
  const membershipsBefore = await count('select count(*) as n from user_domains');
  const { port, exited } = await secondInstance();
  // the first 3,000 rows are sent, then the body waits: the rest never comes before the kill
  let text = '';
  for (let i = 0; i < 3000; i++)
    text +=
      JSON.stringify({ line: i + 2, login: `o${i}.${tag}`, name: `One ${i}`, role, domains: root }) + '\n';
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
    },
  });
  const request = fetch(
    `http://127.0.0.1:${port}/api/v0/users/import/${id}/stream?batch=1000&${commitQuery({ continue_on_error: true })}`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit,
  ).catch((err: unknown) => err);
  // the three batches staged and inserted, the request's transaction open and waiting for the rest
  const writing = `select count(*) as n from pg_stat_activity where datname = current_database()
    and state like 'idle in transaction%' and backend_xid is not null`;
  const staged = () => count('select count(*) as n from user_import_rows where import_id = $1', [id]);
  while ((await staged()) < 3000 || (await count(writing)) !== 1) {
    expect(child!.exitCode).toBeNull();
    await new Promise((r) => setImmediate(r));
  }
  child!.kill('SIGKILL');
  await exited;
  child = null;
  expect(await request).toBeInstanceOf(Error);
  // PostgreSQL ends the orphaned session and rolls it back
  while ((await count(writing)) > 0) await new Promise((r) => setImmediate(r));

  expect(await count('select count(*) as n from accounts')).toBe(accountsBefore);
  expect(await count('select count(*) as n from users')).toBe(usersBefore);
  expect(await count('select count(*) as n from user_domains')).toBe(membershipsBefore);
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%.${tag}`])).toBe(0);
  expect(await count(`select count(*) as n from user_imports where id = $1 and status = 'open'`, [id])).toBe(
    1,
  );
  // what was staged is not an import to commit: it is not the file
  const commit = await fetch(`${ts.url}/api/v0/users/import/${id}/commit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(commit.status).toBe(409);
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%.${tag}`])).toBe(0);
}, 180_000);

/**
 * Until a statement of this database reading like `query` waits on a lock, or `request` has settled without
 * one waiting (then the test's assertions say what it did instead).
 */
async function lockWaited(query: string, request: Promise<unknown>): Promise<void> {
  let settled = false;
  void request.then(
    () => (settled = true),
    () => (settled = true),
  );
  const waiting = `select count(*) as n from pg_stat_activity where datname = current_database()
    and wait_event_type = 'Lock' and query ilike $1`;
  while (!settled && (await count(waiting, [query])) === 0) await new Promise((r) => setImmediate(r));
}

/**
 * `run` sent while another connection holds an open transaction made by `hold`, committed once a statement
 * reading like `waits` waits on a lock (or `run` has settled): what `run` gives.
 */
async function whileHeld<T>(
  hold: (other: pg.Client) => Promise<void>,
  run: () => Promise<T>,
  waits: string,
): Promise<T> {
  const other = new pg.Client({ connectionString: database.url });
  await other.connect();
  try {
    await other.query('begin');
    await hold(other);
    const outcome = run();
    await lockWaited(waits, outcome);
    await other.query('commit');
    return await outcome;
  } finally {
    await other.end();
  }
}

/** What `run` threw, or null. */
const refusal = (run: () => Promise<unknown>) => () =>
  run().then(
    () => null,
    (err: unknown) => err,
  );

/**
 * A one-request import of `rows` rows (logins `<prefix><i>.<tag>` unless `login` says, a new role, the root
 * group), sent while another connection holds an open transaction begun by `hold`: the import's check does
 * not see what that transaction did, and a statement of the import (reading like `waits`) waits for it; once
 * it waits, the transaction commits. The reply.
 */
async function importWhileHeld(
  prefix: string,
  rows: number,
  hold: (other: pg.Client, role: number, tag: string) => Promise<void>,
  // what the import's statement that waits reads like; each line's login
  waits = '%insert into accounts%',
  login = (i: number, tag: string) => `${prefix}${i}.${tag}`,
): Promise<{ id: string; tag: string; role: number; res: Response }> {
  const tag = uid();
  const role = (
    await getCommand('role.create').run(
      { api },
      { name: `Held ${prefix} ${tag}`, permissions: ['users.view'] },
    )
  ).data.id;
  const root = await rootGroup(api);
  const { id } = await getCommand('user.import_start').run({ api }, { file_name: `${prefix}.ndjson` });
  let body = '';
  for (let i = 0; i < rows; i++)
    body +=
      JSON.stringify({ line: i + 2, login: login(i, tag), name: `Held ${i}`, role, domains: root }) + '\n';
  const res = await whileHeld(
    (other) => hold(other, role, tag),
    () =>
      fetch(
        `${ts.url}/api/v0/users/import/${id}/stream?batch=10&${commitQuery({ continue_on_error: true })}`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
          body,
        },
      ),
    // the import's statement waits on a lock (the batch's insert: one statement into accounts, users and
    // their groups; or the last check's lock of the sign-in namespace)
    waits,
  );
  return { id, tag, role, res };
}

it('a one-request import whose checked login is taken before its insert fails whole with login_already_used', async () => {
  // someone takes line 20's login (another case) in a transaction not committed yet: the import's check
  // does not see it, its insert waits for it on the unique index
  const { id, tag, res } = await importWhileHeld('r', 50, (other, _role, tag) =>
    other.query('insert into accounts (login) values ($1)', [`R18.${tag}`]).then(() => undefined),
  );
  expect(res.status).toBe(409);
  expect(await res.json()).toMatchObject({ error_code: 'login_already_used' });
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%.${tag}`])).toBe(1);
  expect(
    await count(
      `select count(*) as n from users u join accounts a on a.id = u.account_id
    where a.login like $1`,
      [`%.${tag}`],
    ),
  ).toBe(0);
  expect(await count(`select count(*) as n from user_imports where id = $1 and status = 'open'`, [id])).toBe(
    1,
  );
}, 60_000);

it('a one-request import whose role is deleted between its check and its insert fails whole with invalid_related_entity', async () => {
  // the role is deleted in a transaction not committed yet: the import's check still sees it, its insert's
  // foreign key check waits for the delete, which then commits
  const { id, tag, role, res } = await importWhileHeld('g', 10, (other, role) =>
    other.query('delete from roles where id = $1', [role]).then(() => undefined),
  );
  expect(res.status).toBe(422);
  expect(await res.json()).toMatchObject({
    error_code: 'invalid_related_entity',
    data: { entity: 'roles', ids: [role] },
  });
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%.${tag}`])).toBe(0);
  expect(await count(`select count(*) as n from user_imports where id = $1 and status = 'open'`, [id])).toBe(
    1,
  );
}, 60_000);

/** Of the accounts `…@<tag>.test`, the other writer's alone; the import still open. */
async function expectNothingImported(id: string, tag: string): Promise<void> {
  expect(await count(`select count(*) as n from accounts where login like $1`, [`%@${tag}.test`])).toBe(1);
  expect(await count(`select count(*) as n from user_imports where id = $1 and status = 'open'`, [id])).toBe(
    1,
  );
}

/**
 * Logins and e-mails are one sign-in namespace, and no index spans the two columns (auth/identities.ts):
 * another writer's account, its e-mail an imported login, not committed yet when the import checked it. That
 * writer holds the namespace shared, as user.create or a registration does last before it commits.
 */
const takenAcross = (email: string) => async (other: pg.Client) => {
  await other.query('insert into accounts (login, email) values ($1, $2)', [`held-${email}`, email]);
  await other.query('select pg_advisory_xact_lock_shared(hashtext($1))', [NAMESPACE]);
};

it("a one-request import whose checked login is another account's e-mail by its end fails whole with login_already_used", async () => {
  const { id, tag, res } = await importWhileHeld(
    'x',
    30,
    (other, _role, tag) => takenAcross(`x18@${tag}.test`)(other),
    '%pg_advisory_xact_lock%',
    (i, tag) => `x${i}@${tag}.test`,
  );
  expect(res.status).toBe(409);
  expect(await res.json()).toMatchObject({ error_code: 'login_already_used', data: { field: 'login' } });
  await expectNothingImported(id, tag);
}, 60_000);

it("a staged import whose login is another account's e-mail by its commit's end is not committed: login_already_used", async () => {
  const tag = uid();
  const root = await rootGroup(api);
  const role = (
    await getCommand('role.create').run({ api }, { name: `Across ${tag}`, permissions: ['users.view'] })
  ).data.id;
  const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'across.ndjson' });
  let body = '';
  for (let i = 0; i < 20; i++)
    body +=
      JSON.stringify({ line: i + 2, login: `s${i}@${tag}.test`, name: `Staged ${i}`, role, domains: root }) +
      '\n';
  const staged = await fetch(`${ts.url}/api/v0/users/import/${id}/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  expect(staged.status).toBe(200);
  // after the stream's checks, before the commit's recheck: which does not see it either
  const outcome = await whileHeld(
    takenAcross(`s7@${tag}.test`),
    refusal(() => getCommand('user.import_commit').run({ api }, { id })),
    '%pg_advisory_xact_lock%',
  );
  expect(outcome).toMatchObject({ code: 'login_already_used' });
  await expectNothingImported(id, tag);
}, 60_000);

it('a user whose e-mail is a login an import has written, not committed yet, is refused once it commits: email_already_used', async () => {
  const tag = uid();
  const root = await rootGroup(api);
  const roles = await getCommand('role.list').run({ api }, { limit: 1 });
  // an import at its end: its account written, the namespace held exclusive for its last check; user.create's
  // last check waits for the namespace
  const outcome = await whileHeld(
    async (other) => {
      await other.query('insert into accounts (login) values ($1)', [`imported@${tag}.test`]);
      await other.query('select pg_advisory_xact_lock(hashtext($1))', [NAMESPACE]);
    },
    refusal(() =>
      getCommand('user.create').run({ api }, {
        login: `person-${tag}`,
        email: `imported@${tag}.test`,
        name: `Person ${tag}`,
        role: roles.data[0]!.id,
        domains: [root],
        send_registration_link: false,
      } as never),
    ),
    '%pg_advisory_xact_lock_shared%',
  );
  expect(outcome).toMatchObject({ code: 'email_already_used' });
  expect(await count(`select count(*) as n from accounts where login = $1`, [`person-${tag}`])).toBe(0);
}, 60_000);
