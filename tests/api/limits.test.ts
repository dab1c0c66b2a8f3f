import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, rootGroup, tokenOf, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let role: number;
beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  role = (await getCommand('role.create').run({ api }, { name: `Plain ${uid()}`, permissions: [] })).data.id;
});
afterAll(async () => {
  await ts?.close();
});

const cap = (max: number | null) => ({ license_limits: { users: max } });
const newUser = (domains: number[]) =>
  getCommand('user.create').run(
    { api },
    {
      login: `l${uid()}`,
      name: 'Limited',
      role,
      domains,
      password: 'pw-long-enough',
      send_registration_link: false,
    },
  );

describe('a group that caps its users', () => {
  it('takes users up to its maximum, counting its whole subtree, then says used and max', async () => {
    const building = await group(api, `Capped ${uid()}`, await rootGroup(api), cap(3));
    const flat = await group(api, `Flat ${uid()}`, building);
    await newUser([building]);
    await newUser([flat]);
    const third = await newUser([flat]);
    const e = await failure(newUser([flat]));
    expect(e.status).toBe(422);
    expect(e.message).toBe('limit_exceeded');
    expect(e.data).toMatchObject({ used: 3, max: 3 });
    // moving a user in is counted too; one already inside may be edited
    const outside = await newUser([await rootGroup(api)]);
    expect(
      (await failure(getCommand('user.update').run({ api }, { id: outside.data.id, domains: [flat] })))
        .message,
    ).toBe('limit_exceeded');
    await expect(
      getCommand('user.update').run({ api }, { id: third.data.id, domains: [building, flat] }),
    ).resolves.toBeTruthy();
  });
});

describe('a cap holds under concurrency and for imports (issue 12 point 5)', () => {
  const users = async (groupId: number) =>
    (
      await getCommand('user.list').run(
        { api },
        { filters: [{ field: 'domains', rule: 'has', value: groupId }] },
      )
    ).meta.total;

  it('10 simultaneous creates into a group capped at 2: exactly 2 succeed, the rest say used 2, max 2', async () => {
    const capped = await group(api, `Race ${uid()}`, await rootGroup(api), cap(2));
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => newUser([capped])));
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(2);
    for (const r of results) {
      if (r.status === 'rejected')
        expect([r.reason.message, r.reason.data]).toEqual([
          'limit_exceeded',
          expect.objectContaining({ used: 2, max: 2 }),
        ]);
    }
    expect(await users(capped)).toBe(2);
  });

  const importInto = async (groupName: string, n: number) => {
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'capped.csv' });
    const tag = uid();
    await getCommand('user.import_rows').run(
      { api },
      {
        id,
        rows: Array.from({ length: n }, (_, i) => ({
          line: i + 2,
          login: `imp${i}.${tag}`,
          name: `Imported ${i}`,
          role: String(role),
          domains: groupName,
          password: 'pw-long-enough',
        })),
      },
    );
    return id;
  };

  it('an import beyond the cap is refused with the same error and inserts nothing', async () => {
    const name = `Import cap ${uid()}`;
    const capped = await group(api, name, await rootGroup(api), cap(2));
    await newUser([capped]);
    const id = await importInto(name, 5);
    const e = await failure(getCommand('user.import_commit').run({ api }, { id }));
    expect(e.status).toBe(422);
    expect(e.message).toBe('limit_exceeded');
    expect(e.data).toMatchObject({ used: 1, max: 2, adding: 5 });
    expect(await users(capped)).toBe(1);
  });

  it('with continue_on_error the rows beyond the cap are reported, the rest go in', async () => {
    const name = `Import cap ${uid()}`;
    const capped = await group(api, name, await rootGroup(api), cap(2));
    const id = await importInto(name, 5);
    const report = await getCommand('user.import_commit').run({ api }, { id, continue_on_error: true });
    expect(report).toMatchObject({ committed: true, inserted: 2, invalid: 3, rejected_lines: [[4, 6]] });
    expect(report.errors[0]).toMatchObject({
      line: 4,
      field: 'domains',
      key: 'limit_exceeded',
      params: { used: 0, max: 2 },
    });
    expect(await users(capped)).toBe(2);
  });
});

describe('a cap holds for the one-request import (user.import_stream with commit)', () => {
  const users = async (groupId: number) =>
    (
      await getCommand('user.list').run(
        { api },
        { filters: [{ field: 'domains', rule: 'has', value: groupId }] },
      )
    ).meta.total;
  /** `n` rows into the group, streamed with `commit`: the reply's status and body */
  const streamInto = async (groupName: string, n: number, commit: object) => {
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'capped.ndjson' });
    const tag = uid();
    const body = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        line: i + 2,
        login: `one${i}.${tag}`,
        name: `Imported ${i}`,
        role: String(role),
        domains: groupName,
      }),
    ).join('\n');
    const res = await fetch(
      `${ts.url}/api/v0/users/import/${id}/stream?batch=2&commit=${encodeURIComponent(JSON.stringify(commit))}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
        body,
      },
    );
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (await res.json()) as any };
  };

  it('an import beyond the cap is refused with the same error and inserts nothing', async () => {
    const name = `One-request cap ${uid()}`;
    const capped = await group(api, name, await rootGroup(api), cap(2));
    await newUser([capped]);
    const r = await streamInto(name, 5, {});
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ message: 'limit_exceeded', data: { used: 1, max: 2, adding: 5 } });
    expect(await users(capped)).toBe(1);
  });

  it('with continue_on_error the rows beyond the cap are reported and left out, the rest go in', async () => {
    const name = `One-request cap ${uid()}`;
    const capped = await group(api, name, await rootGroup(api), cap(2));
    const r = await streamInto(name, 5, { continue_on_error: true });
    expect(r.status).toBe(200);
    expect(r.body.report).toMatchObject({
      committed: true,
      inserted: 2,
      invalid: 3,
      rejected_lines: [[4, 6]],
    });
    expect(r.body.report.errors[0]).toMatchObject({
      line: 4,
      field: 'domains',
      key: 'limit_exceeded',
      params: { used: 0, max: 2 },
    });
    expect(await users(capped)).toBe(2);
  });
});

describe('the licence warning of server-settings', () => {
  it('follows the licence: none, valid, ending within notify_before (14 days), expired', async () => {
    const warning = async () => (await getCommand('server.settings').run({ api }, {})).license_warning;
    const db = ts.server.context.db;
    const project = await db
      .selectFrom('projects')
      .select('id')
      .where('uid', '=', 'default')
      .executeTakeFirstOrThrow();
    expect(await warning()).toEqual({ status: 'no_license', days: null });
    const day = 86_400_000;
    const row = await db
      .insertInto('licenses')
      .values({ project_id: project.id, features: '{}', valid_to: new Date(Date.now() + 200 * day) })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await warning()).status).toBe('normal');
    await db
      .updateTable('licenses')
      .set({ valid_to: new Date(Date.now() + 10.5 * day) })
      .where('id', '=', row.id)
      .execute();
    expect(await warning()).toEqual({ status: 'will_expire', days: 10, evaluation: false });
    await db
      .updateTable('licenses')
      .set({ valid_to: new Date(Date.now() - day) })
      .where('id', '=', row.id)
      .execute();
    expect(await warning()).toEqual({ status: 'already_expired', days: 0 });
  });
});

describe('self-registration counts against the caps too', () => {
  it('a full root group refuses a new self-registered user', async () => {
    const root = await rootGroup(api);
    const used = (await getCommand('user.list').run({ api }, { limit: 1 })).meta.total;
    await getCommand('group.update').run({ api }, { id: root, ...cap(used) });
    ts.server.context.config.registrationOpen = true;
    try {
      const e = await failure(
        getCommand('registration.register').run(
          { api: ts.client() },
          { name: 'One Too Many', login: `reg${uid()}`, password: 'open-reg-pass-1' },
        ),
      );
      expect(e.message).toBe('limit_exceeded');
      expect(e.data).toMatchObject({ used, max: used });
      expect((await getCommand('user.list').run({ api }, { limit: 1 })).meta.total).toBe(used);
    } finally {
      ts.server.context.config.registrationOpen = false;
      await getCommand('group.update').run({ api }, { id: root, ...cap(null) });
    }
  });
});
