import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { ApiError } from '@lintel/core';
import { createProject } from '../../apps/server/src/bootstrap';
import { startTestServer, type TestServer } from '../support/server';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
  // the administrator also belongs to a second project
  const db = ts.server.context.db;
  const second = await createProject(db, { uid: 'north', name: 'North campus', description: 'Second site' });
  const admin = await db
    .selectFrom('accounts')
    .select('id')
    .where('login', '=', ts.adminLogin)
    .executeTakeFirstOrThrow();
  const user = await db
    .insertInto('users')
    .values({
      project_id: second.projectId,
      account_id: admin.id,
      role_id: second.adminRoleId,
      name: 'North admin',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('user_domains').values({ user_id: user.id, domain_id: second.rootDomainId }).execute();
});
afterAll(async () => {
  await ts?.close();
});

describe('a login in several projects', () => {
  it('gets one session per project, each seeing its own project', async () => {
    const reply = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    );
    expect(reply.sessions.map((s) => s.project.uid)).toEqual(['default', 'north']);
    expect(reply.sessions[1]!.project).toMatchObject({ name: 'North campus', description: 'Second site' });
    const north = await getCommand('profile.get').run({ api: ts.client({ ...reply.sessions[1]! }) }, {});
    expect(north).toMatchObject({ name: 'North admin', project: { uid: 'north' } });
    const home = await getCommand('profile.get').run({ api: ts.client({ ...reply.sessions[0]! }) }, {});
    expect(home.project.uid).toBe('default');
  });

  it('opens only the named project with `project`, and names an unknown one', async () => {
    const only = await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword, project: 'north' },
    );
    expect(only.sessions.map((s) => s.project.uid)).toEqual(['north']);
    const e = await getCommand('session.login')
      .run({ api: ts.client() }, { login: ts.adminLogin, password: ts.adminPassword, project: 'south' })
      .catch((x: ApiError) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(404);
    expect((e as ApiError).message).toBe('unknown_project');
  });
});
