import { randomBytes } from 'node:crypto';
import { getCommand } from '@lintel/commands';
import { ApiClient, ApiError, LicenceFlags, MemorySessionStore } from '@lintel/core';
import { createProject } from '../../apps/server/src/bootstrap';
import type { TestServer } from './server';

export const uid = () => randomBytes(4).toString('hex');

/** Signs in and returns a client holding that session. */
export async function signIn(
  ts: TestServer,
  login: string,
  password: string,
  project?: string,
): Promise<ApiClient> {
  const reply = await getCommand('session.login').run({ api: ts.client() }, { login, password, project });
  return new ApiClient({ baseUrl: ts.url, store: new MemorySessionStore({ ...reply.sessions[0]! }) });
}

export const admin = (ts: TestServer) => signIn(ts, ts.adminLogin, ts.adminPassword);

/** The failure of a call, or an error when it succeeded. */
export async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

/** A role with exactly these permissions (and available roles), and a user holding it in these groups. */
export async function userWith(
  ts: TestServer,
  api: ApiClient,
  opts: { permissions: string[]; domains: number[]; available?: number[]; name?: string },
): Promise<{
  id: number;
  roleId: number;
  login: string;
  password: string;
  client: () => Promise<ApiClient>;
}> {
  const tag = uid();
  const role = await getCommand('role.create').run(
    { api },
    {
      name: `role ${opts.name ?? tag}`,
      permissions: opts.permissions,
      available_roles: opts.available ?? [],
    },
  );
  const login = `u${tag}`;
  const password = `pw-${tag}-secret`;
  const user = await getCommand('user.create').run(
    { api },
    {
      login,
      name: opts.name ?? `User ${tag}`,
      role: role.data.id,
      domains: opts.domains,
      password,
      send_registration_link: false,
    },
  );
  return {
    id: user.data.id,
    roleId: role.data.id,
    login,
    password,
    client: () => signIn(ts, login, password),
  };
}

export async function group(
  api: ApiClient,
  name: string,
  parent_id: number | null,
  extra: Record<string, unknown> = {},
): Promise<number> {
  return (await getCommand('group.create').run({ api }, { name, parent_id, ...extra })).data.id;
}

/** A second project with its own administrator account, for out-of-project checks. */
export async function secondProject(ts: TestServer): Promise<{ api: ApiClient; rootGroup: number }> {
  const db = ts.server.context.db;
  const p = await createProject(db, { uid: `p${uid()}`, name: 'Other project' });
  const admin = await db
    .selectFrom('accounts')
    .select('id')
    .where('login', '=', ts.adminLogin)
    .executeTakeFirstOrThrow();
  const user = await db
    .insertInto('users')
    .values({ project_id: p.projectId, account_id: admin.id, role_id: p.adminRoleId, name: 'Other admin' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('user_domains').values({ user_id: user.id, domain_id: p.rootDomainId }).execute();
  const uidRow = await db
    .selectFrom('projects')
    .select('uid')
    .where('id', '=', p.projectId)
    .executeTakeFirstOrThrow();
  return { api: await signIn(ts, ts.adminLogin, ts.adminPassword, uidRow.uid), rootGroup: p.rootDomainId };
}

/** A server licence for the default project with these features. */
/** A licence's features with every licence flag of spec part 2 §6 on (counts unlimited). */
export function everyFeatureOn(): Record<string, Record<string, unknown>> {
  const features: Record<string, Record<string, unknown>> = {};
  for (const flag of LicenceFlags) {
    const [area, key] = flag.split('.') as [string, string | undefined];
    features[area] = { ...features[area], [key ?? 'is_enabled']: true };
  }
  // a flag inside a feature with a switch needs the switch too
  for (const area of ['sip', 'mobile_app']) features[area]!.is_enabled = true;
  return features;
}

export async function licence(
  ts: TestServer,
  features: Record<string, Record<string, unknown>>,
  projectUid = 'default',
) {
  const db = ts.server.context.db;
  const p = await db
    .selectFrom('projects')
    .select('id')
    .where('uid', '=', projectUid)
    .executeTakeFirstOrThrow();
  await db
    .insertInto('licenses')
    .values({ project_id: p.id, issuer: 'test', features: JSON.stringify(features) })
    .execute();
}

// ----- raw calls, for input the commands would refuse to send --------------------------------------------

/** The access token a signed-in client holds. */
export function tokenOf(api: ApiClient): string {
  const s = api.store.get();
  if (!s) throw new Error('the client holds no session');
  return s.token;
}

export interface RawReply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * Calls /api/v0 with fetch, bypassing the commands' own argument checks (malformed, hostile or oversized
 * input). `query` values are sent as they are; objects in it are JSON-encoded like the commands do.
 */
export async function raw(
  ts: TestServer,
  api: ApiClient | null,
  method: string,
  path: string,
  opts: { query?: Record<string, unknown>; body?: unknown } = {},
): Promise<RawReply> {
  const url = new URL(`${ts.url}/api/v0${path}`);
  for (const [k, v] of Object.entries(opts.query ?? {}))
    if (v !== undefined)
      url.searchParams.set(k, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  const res = await fetch(url, {
    method,
    headers: {
      ...(api ? { authorization: `Bearer ${tokenOf(api)}` } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body:
      opts.body === undefined
        ? undefined
        : typeof opts.body === 'string'
          ? opts.body
          : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/** The project's root group (the one without a parent) as the caller sees it. */
export async function rootGroup(api: ApiClient): Promise<number> {
  const full = await getCommand('group.full').run({ api }, {});
  return full.data.find((g) => g.parent_id === null)!.id;
}
