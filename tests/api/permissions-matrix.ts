/**
 * The permission matrix, generated from the registry, with every licence flag on: every command (but those
 * OPT_OUT leaves out, each with its reason) is called
 * (a) with its permission in scope, (b) without the permission, (c) with it but out of scope (another
 * subtree, another project), (d) without the licence where it has one.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Jimp } from 'jimp';
import { SimulatedDevice } from '@lintel/device-sim';
import {
  getCommand,
  registry,
  relationCommands,
  resources,
  type AnyResource,
  type CommandId,
} from '@lintel/commands';
import { AllPermissions, LicenceFlags, licenceFlagOn, type ApiClient } from '@lintel/core';
import { selfSigned } from '../support/certificates';
import { startTestServer, type TestServer } from '../support/server';
import { familyMatrixSuite } from '../support/registry-suites';
import { waitReady } from '../support/backups';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  secondProject,
  uid,
  userWith,
} from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
const w = {} as {
  root: number;
  A: number;
  A1: number;
  B: number;
  P2: { api: ApiClient; rootGroup: number };
  emptyRole: number;
  userA1: number;
  userB: number;
  userP2: number;
  markerA: number;
  markerB: number;
  typeP2: number;
  groupP2: number;
  deviceA1: number;
  deviceB: number;
  sim: SimulatedDevice;
  numberA: number;
  numberB: number;
};

type Args = Record<string, unknown>;
interface Case {
  /** the tester's permissions for (a) and (c) */
  perms: string[];
  /** roles the tester's role may assign */
  available?: () => number[];
  /** in-scope arguments (fresh targets are made here) */
  ok: () => Promise<Args> | Args;
  /** out-of-scope arguments; lists must not show the target, others answer 404 or 403 */
  out?: () => Promise<Args> | Args;
  /** for lists: the id that must not be listed with `out` arguments */
  hidden?: () => number;
}

/** A call in progress and a line of history in the world's project, as the SIP server's events write them. */
async function callRows(): Promise<void> {
  const db = ts.server.context.db;
  const project = (
    await sql<{ project_id: number }>`select project_id from domains where id = ${w.A}`.execute(db)
  ).rows[0]!.project_id;
  const callId = `matrix-${uid()}`;
  await sql`insert into sip_calls (project_id, call_id, speech_id, status, caller, callee)
    values (${project}, ${callId}, ${callId}, 'calling', '1', '2')`.execute(db);
  await sql`insert into call_history (project_id, from_number, to_number, status, call_id)
    values (${project}, '1', '2', 'answered', ${callId})`.execute(db);
}

/** A shareable rule at the world's answering device, for guest passes. */
const guestRule = async () =>
  (
    await getCommand('access_rule.create').run({ api }, {
      name: `Guests ${uid()}`,
      devices: [w.deviceA1],
      is_shareable: true,
    } as never)
  ).data.id;
/** A guest key valid from now for a day. */
const guestKey = (rule: number) => {
  const at = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  const now = Date.now();
  return {
    selectedAccessRules: [rule],
    restrictPeriod: true,
    validatePeriod: { from: at(now), to: at(now + 86_400_000) },
    restrictPassCount: true,
    passLimit: 2,
  };
};
/** A guest pass `client` made. */
const guestPassOf = async (client: ApiClient) =>
  (await getCommand('guest_access.create').run({ api: client }, guestKey(await guestRule()) as never)).data
    .id;

/** A QR identifier of the project the client signs in to. */
const qrOf = async (client: ApiClient) =>
  (await getCommand('identifier.create').run({ api: client }, { type: 'qr' } as never)).data.id;
const faceOf = async (client: ApiClient) =>
  (await getCommand('identifier.create').run({ api: client }, { type: 'face' } as never)).data.id;
/** A face identifier with its photo, made by the administrator of the client's project. */
const facePhotoOf = async (client: ApiClient) => {
  const id = await faceOf(client);
  await getCommand('identifier.photo_upload').run({ api: client }, { id, image: await png() });
  return id;
};

/** The project's wallet settings with a self-signed certificate (made once), so a pass can be signed. */
let walletSet = false;
async function walletReady(): Promise<void> {
  if (walletSet) return;
  const { cert, key } = selfSigned('matrix');
  await getCommand('settings.wallet_update').run(
    { api },
    { pass_type_id: 'pass.test.matrix', team_id: 'MATRIX1234', certificate: cert, key },
  );
  walletSet = true;
}

/** A ready backup of the project's settings (made once per project; `fresh`: a new one, to delete). */
const backups = new Map<ApiClient, number>();
async function settingsBackup(client: ApiClient = api, fresh = false): Promise<number> {
  if (!fresh && backups.has(client)) return backups.get(client)!;
  const made = await getCommand('backup.make').run(
    { api: client },
    { name: 'Matrix', entities: ['settings'] },
  );
  const ready = await waitReady(client, made.data.id);
  if (!fresh) backups.set(client, ready.id);
  return ready.id;
}

/** A licence row of the default project, or (null) of the second project. */
const licenceRow = async (projectUid: string | null) => {
  const db = ts.server.context.db;
  const p = projectUid
    ? await db.selectFrom('projects').select('id').where('uid', '=', projectUid).executeTakeFirstOrThrow()
    : await db.selectFrom('projects').select('id').where('uid', '<>', 'default').executeTakeFirstOrThrow();
  const row = await db
    .insertInto('licenses')
    .values({ project_id: p.id, issuer: 'matrix', features: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
};

const freshUser = async (domains = [w.A1], extra: Args = {}) =>
  (
    await getCommand('user.create').run(
      { api },
      {
        login: `f${uid()}`,
        name: `F ${uid()}`,
        role: w.emptyRole,
        domains,
        password: 'pw-long-enough',
        send_registration_link: false,
        ...extra,
      },
    )
  ).data.id;
const freshGroup = (parent = w.A) => group(api, `G${uid()}`, parent);
/** A small PNG logo. */
const logoPng = async () =>
  new Blob(
    [new Uint8Array(await new Jimp({ width: 40, height: 20, color: 0x3366ccff }).getBuffer('image/png'))],
    {
      type: 'image/png',
    },
  );
const freshRole = async () =>
  (await getCommand('role.create').run({ api }, { name: `R${uid()}`, permissions: [] })).data.id;
const freshMarker = async () => {
  const maker = await userWith(ts, api, { permissions: ['markers.create'], domains: [w.A1] });
  return (
    await getCommand('marker.create').run(
      { api: await maker.client() },
      { name: `M${uid()}`, color: '#123456' },
    )
  ).data.id;
};
const freshDevice = async (domain_id = w.A1, extra: Args = {}) =>
  (
    await getCommand('device.create').run(
      { api },
      { name: `D ${uid()}`, type: 'panel', serial_number: `PM-${uid()}`, domain_id, ...extra },
    )
  ).data.id;
/** a task for a device (made by the administrator): restart, waiting for the offline device */
const taskOn = async (id: number) => (await getCommand('device.restart').run({ api }, { id })).task.id;
/** a network search started by `by` (of one address nothing answers on), by its request id */
const searchOf = async (by: ApiClient) =>
  (
    await getCommand('device.search').run(
      { api: by },
      { start_ip: '127.0.0.252', end_ip: '127.0.0.252', port: 9 },
    )
  ).request_id;
/** a device in the pool of unregistered devices (as if it had called in), by its serial */
const pooled = async () => {
  const serial = `PP-${uid()}`;
  await sql`insert into device_pool (serial_number) values (${serial})`.execute(ts.server.context.db);
  return serial;
};
/** a device as a network search found it */
const foundItem = () => ({
  serial_number: `PF-${uid()}`,
  device_type: 'panel' as const,
  ip_address: '127.0.0.252',
  port: 80,
});
/** An event the device pushed (`POST /device-gateway/logs` with its own credentials); the filter of its events. */
const eventOn = async (id: number) => {
  const c = await getCommand('device.credentials').run({ api }, { id });
  const res = await fetch(`${ts.url}/api/v0/device-gateway/logs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
    },
    body: JSON.stringify({ events: [{ event_id: uid(), kind: 'door_opened', reason: 'button' }] }),
  });
  expect(res.status).toBe(200);
  return { filters: [{ field: 'device', rule: 'equals', value: String(id) }] };
};
/** A decision at a door the device pushed (an unknown card refused): a row of the ACS log; its filter. */
const acsOn = async (id: number) => {
  const c = await getCommand('device.credentials').run({ api }, { id });
  const res = await fetch(`${ts.url}/api/v0/device-gateway/logs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
    },
    body: JSON.stringify({
      events: [
        {
          event_id: uid(),
          kind: 'identifier_refused',
          identifier_number: '42',
          result: 'denied',
          reason: 'unknown',
        },
      ],
    }),
  });
  expect(res.status).toBe(200);
  return { filters: [{ field: 'device', rule: 'equals', value: String(id) }] };
};
/** the tester of the case running now (imports belong to whoever started them) */
let currentTester: ApiClient | null = null;
const importOf = async (client: ApiClient) =>
  (await getCommand('user.import_start').run({ api: client }, {})).id;
const png = async () =>
  new Blob(
    [new Uint8Array(await new Jimp({ width: 32, height: 32, color: 0x808080ff }).getBuffer('image/png'))],
    { type: 'image/png' },
  );
const idIs = (id: number) => ({ filters: [{ field: 'id', rule: 'equals', value: id }] });
let numbers = 1000;
/** A virtual number in a group, made by the administrator. */
const freshNumber = async (domain: number) =>
  (
    await getCommand('sip_number.create').run(
      { api },
      { number: String(numbers++), name: `Desk ${uid()}`, domain_id: domain },
    )
  ).data.id;

const listCases: Record<string, Case> = {
  'user.list': {
    perms: ['users.view'],
    ok: () => idIs(w.userA1),
    out: () => idIs(w.userB),
    hidden: () => w.userB,
  },
  'user.get': { perms: ['users.view'], ok: () => ({ id: w.userA1 }), out: () => ({ id: w.userB }) },
  'user.create': {
    perms: ['users.create', 'users.view'],
    available: () => [w.emptyRole],
    ok: () => ({
      login: `c${uid()}`,
      name: 'Created',
      role: w.emptyRole,
      domains: [w.A1],
      password: 'pw-long-enough',
      send_registration_link: false,
    }),
    out: () => ({
      login: `c${uid()}`,
      name: 'Created',
      role: w.emptyRole,
      domains: [w.B],
      password: 'pw-long-enough',
      send_registration_link: false,
    }),
  },
  'user.update': {
    perms: ['users.view', 'users.edit_all'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({ id: await freshUser(), name: 'Renamed' }),
    out: () => ({ id: w.userB, name: 'Renamed' }),
  },
  'user.delete': {
    perms: ['users.view', 'users.delete'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({ id: await freshUser() }),
    out: () => ({ id: w.userB }),
  },
  'user.delete_all': {
    perms: ['users.view', 'users.delete'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({ items: [await freshUser()] }),
    out: () => ({ items: [w.userB, w.userP2] }),
  },
  'user.password': {
    perms: ['users.view', 'users.edit_all'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({ id: await freshUser(), new_password: 'another-long-one' }),
    out: () => ({ id: w.userB, new_password: 'another-long-one' }),
  },
  'user.send_registration_link': {
    perms: ['users.view', 'users.edit_all'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({
      id: await freshUser([w.A1], {
        password: undefined,
        email: `${uid()}@example.test`,
        send_registration_link: false,
      }),
    }),
    out: () => ({ id: w.userB }),
  },
  'user.avatar_upload': {
    perms: ['users.view', 'users.edit_all'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({ id: await freshUser(), image: await png(), x: 0, y: 0, size: 20 }),
    out: async () => ({ id: w.userB, image: await png(), x: 0, y: 0, size: 20 }),
  },
  'user.avatar_delete': {
    perms: ['users.view', 'users.edit_all'],
    // authority over the target as he is: his role is one the tester may give (issue 12)
    available: () => [w.emptyRole],
    ok: async () => ({ id: await freshUser() }),
    out: () => ({ id: w.userP2 }),
  },

  'group.list': {
    perms: ['domains.create_descendant'],
    ok: () => idIs(w.A1),
    out: () => idIs(w.B),
    hidden: () => w.B,
  },
  'group.get': { perms: ['domains.create_descendant'], ok: () => ({ id: w.A1 }), out: () => ({ id: w.B }) },
  'group.full': { perms: ['domains.create_descendant'], ok: () => ({}) },
  'group.tree': { perms: ['domains.create_descendant'], ok: () => ({}) },
  'group.children': {
    perms: ['domains.create_descendant'],
    ok: () => ({ id: w.A }),
    out: () => ({ id: w.B }),
  },
  'group.create': {
    perms: ['domains.create_descendant'],
    ok: () => ({ name: `N${uid()}`, parent_id: w.A }),
    out: () => ({ name: `N${uid()}`, parent_id: w.B }),
  },
  'group.update': {
    perms: ['domains.edit_descendant'],
    ok: async () => ({ id: await freshGroup(), description: 'changed' }),
    out: () => ({ id: w.B, description: 'changed' }),
  },
  'group.delete': {
    perms: ['domains.delete_all', 'domains.view_all'],
    ok: async () => ({ id: await freshGroup() }),
    out: () => ({ id: w.groupP2 }),
  },
  'group.delete_all': {
    perms: ['domains.delete_all', 'domains.view_all'],
    ok: async () => ({ items: [await freshGroup()] }),
    out: () => ({ items: [w.groupP2] }),
  },
  'group.generate': {
    perms: ['domains.create_descendant'],
    ok: () => ({ id: w.A, count: 2, prefix: 'Flat ' }),
    out: () => ({ id: w.B, count: 2, prefix: 'Flat ' }),
  },
  'group.save_generated': {
    perms: ['domains.create_descendant'],
    ok: async () => ({ id: await freshGroup(), count: 2, prefix: 'Flat ' }),
    out: () => ({ id: w.B, count: 2, prefix: 'Flat ' }),
  },
  'group.whitelabel_logo_delete': {
    perms: ['domains.edit_descendant', 'domains.own_white_label'],
    ok: async () => ({ id: await freshGroup() }),
    out: () => ({ id: w.B }),
  },
  'group.whitelabel_get': {
    perms: ['domains.own_white_label'],
    ok: () => ({ id: w.A }),
    out: () => ({ id: w.B }),
  },
  'group.whitelabel_update': {
    perms: ['domains.edit_descendant'],
    ok: async () => ({ id: await freshGroup(), name: 'Matrix brand' }),
    out: () => ({ id: w.B, name: 'Matrix brand' }),
  },
  'group.whitelabel_logo_upload': {
    perms: ['domains.own_white_label'],
    ok: async () => ({ id: w.A, image: await logoPng() }),
    out: async () => ({ id: w.B, image: await logoPng() }),
  },

  'role.list': {
    perms: ['roles.view'],
    available: () => [w.emptyRole],
    ok: () => idIs(w.emptyRole),
    out: async () => idIs(await freshRole()),
  },
  'role.get': {
    perms: ['roles.view'],
    available: () => [w.emptyRole],
    ok: () => ({ id: w.emptyRole }),
    out: async () => ({ id: await freshRole() }),
  },
  'role.create': {
    perms: ['roles.create', 'users.view'],
    ok: () => ({ name: `R${uid()}`, permissions: ['users.view'] }),
  },
  'role.update': {
    perms: ['roles.view', 'roles.edit_available'],
    ok: async () => ({ id: (cases['role.update'] as { target?: number }).target!, description: 'changed' }),
    out: async () => ({ id: await freshRole(), description: 'changed' }),
  },
  'role.delete': {
    perms: ['roles.view', 'roles.delete_available'],
    ok: async () => ({ id: (cases['role.delete'] as { target?: number }).target! }),
    out: async () => ({ id: await freshRole() }),
  },
  'role.delete_all': {
    perms: ['roles.view', 'roles.delete_available'],
    ok: async () => ({ items: [(cases['role.delete_all'] as { target?: number }).target!] }),
    out: async () => ({ items: [await freshRole()] }),
  },

  'marker.list': {
    perms: ['markers.view'],
    ok: () => idIs(w.markerA),
    out: () => idIs(w.markerB),
    hidden: () => w.markerB,
  },
  'marker.get': { perms: ['markers.view'], ok: () => ({ id: w.markerA }), out: () => ({ id: w.markerB }) },
  'marker.create': { perms: ['markers.create'], ok: () => ({ name: `M${uid()}`, color: '#abcdef' }) },
  'marker.update': {
    perms: ['markers.view', 'markers.edit'],
    ok: async () => ({ id: await freshMarker(), color: '#000000' }),
    out: () => ({ id: w.markerB, color: '#000000' }),
  },
  'marker.delete': {
    perms: ['markers.view', 'markers.delete'],
    ok: async () => ({ id: await freshMarker() }),
    out: () => ({ id: w.markerB }),
  },
  'marker.delete_all': {
    perms: ['markers.view', 'markers.delete'],
    ok: async () => ({ items: [await freshMarker()] }),
    out: () => ({ items: [w.markerB] }),
  },
  'marker.apply': {
    perms: ['markers.view', 'markers.apply_to_user', 'users.view'],
    ok: () => ({ id: w.markerA, users: [w.userA1] }),
    out: () => ({ id: w.markerB, users: [w.userA1] }),
  },

  'sip_number.list': {
    perms: ['sip_numbers.view_descendant'],
    ok: () => idIs(w.numberA),
    out: () => idIs(w.numberB),
    hidden: () => w.numberB,
  },
  'sip_number.get': {
    perms: ['sip_numbers.view_descendant'],
    ok: () => ({ id: w.numberA }),
    out: () => ({ id: w.numberB }),
  },
  'sip_number.create': {
    perms: ['sip_numbers.create'],
    ok: () => ({ number: String(numbers++), name: 'Desk', domain_id: w.A1 }),
    // placed in a group out of the tester's reach
    out: () => ({ number: String(numbers++), name: 'Desk', domain_id: w.B }),
  },
  'sip_number.update': {
    perms: ['sip_numbers.view_descendant', 'sip_numbers.edit'],
    ok: async () => ({ id: await freshNumber(w.A1), name: 'Renamed' }),
    out: () => ({ id: w.numberB, name: 'Renamed' }),
  },
  'sip_number.delete': {
    perms: ['sip_numbers.view_descendant', 'sip_numbers.delete'],
    ok: async () => ({ id: await freshNumber(w.A1) }),
    out: () => ({ id: w.numberB }),
  },
  'sip_number.delete_all': {
    perms: ['sip_numbers.view_descendant', 'sip_numbers.delete'],
    ok: async () => ({ items: [await freshNumber(w.A1)] }),
    out: () => ({ items: [w.numberB] }),
  },

  'domain_type.list': {
    perms: ['domains.edit_all'],
    ok: async () =>
      idIs((await getCommand('domain_type.create').run({ api }, { type: `t${uid()}`, name: 'T' })).data.id),
    out: () => idIs(w.typeP2),
    hidden: () => w.typeP2,
  },
  'domain_type.get': {
    perms: ['domains.edit_all'],
    ok: async () => ({
      id: (await getCommand('domain_type.create').run({ api }, { type: `t${uid()}`, name: 'T' })).data.id,
    }),
    out: () => ({ id: w.typeP2 }),
  },
  'domain_type.create': { perms: ['domains.edit_all'], ok: () => ({ type: `t${uid()}`, name: 'Type' }) },
  'domain_type.update': {
    perms: ['domains.edit_all'],
    ok: async () => ({
      id: (await getCommand('domain_type.create').run({ api }, { type: `t${uid()}`, name: 'T' })).data.id,
      name: 'U',
    }),
    out: () => ({ id: w.typeP2, name: 'U' }),
  },
  'domain_type.delete': {
    perms: ['domains.edit_all'],
    ok: async () => ({
      id: (await getCommand('domain_type.create').run({ api }, { type: `t${uid()}`, name: 'T' })).data.id,
    }),
    out: () => ({ id: w.typeP2 }),
  },
  'domain_type.delete_all': {
    perms: ['domains.edit_all'],
    ok: async () => ({
      items: [
        (await getCommand('domain_type.create').run({ api }, { type: `t${uid()}`, name: 'T' })).data.id,
      ],
    }),
    out: () => ({ items: [w.typeP2] }),
  },

  // the import of users: a session of the importer's own, in his project
  'user.import_start': { perms: ['users.create'], ok: () => ({ file_name: 'people.csv' }) },
  'user.import_rows': {
    perms: ['users.create'],
    ok: async () => ({
      id: await importOf(currentTester!),
      rows: [{ line: 2, login: `i${uid()}`, name: 'Imported', role: w.emptyRole, domains: [w.A1] }],
    }),
    out: async () => ({
      id: await importOf(w.P2.api),
      rows: [{ line: 2, login: `i${uid()}`, name: 'Imported', role: w.emptyRole, domains: [w.A1] }],
    }),
  },
  'user.import_commit': {
    perms: ['users.create'],
    ok: async () => ({ id: await importOf(currentTester!), dry_run: true }),
    out: async () => ({ id: await importOf(w.P2.api), dry_run: true }),
  },
  'user.import_cancel': {
    perms: ['users.create'],
    ok: async () => ({ id: await importOf(currentTester!) }),
    out: async () => ({ id: await importOf(w.P2.api) }),
  },

  'seed.scale': {
    perms: ['project_settings.change'],
    ok: () => ({ users: 1 }),
  },
  'seed.demo': {
    perms: ['project_settings.change'],
    ok: () => ({}),
  },

  'licence.list': { perms: ['licenses.view'], ok: () => ({}) },
  'licence.usage': { perms: ['licenses.view'], ok: () => ({}) },
  'reports.licences_used': { perms: ['reports.licenses_used'], ok: () => ({}) },
  'reports.licences_period': { perms: ['reports.licenses_used'], ok: () => ({}) },
  'reports.licences_used_export': { perms: ['reports.licenses_used'], ok: () => ({ format: 'csv' }) },
  'reports.licences_period_export': { perms: ['reports.licenses_used'], ok: () => ({ format: 'csv' }) },
  'licence.notify_get': { perms: ['licenses.view'], ok: () => ({}) },
  // webhooks: a project's own (another project's is not found)
  'webhook.deliveries': {
    perms: ['integrations.view'],
    ok: async () => ({ id: await hookOf() }),
    out: async () => ({ id: await hookOf(w.P2.api) }),
  },
  'webhook.test': {
    perms: ['integrations.edit'],
    ok: async () => ({ id: await hookOf() }),
    out: async () => ({ id: await hookOf(w.P2.api) }),
  },
  // access control (issue 21): identifiers reach the whole project; the matrix reads every rule
  'identifier.revoke': {
    perms: ['identifiers.edit', 'identifiers.view_all'],
    ok: async () => ({
      id: (await getCommand('identifier.create').run({ api }, { type: 'qr' } as never)).data.id,
    }),
  },
  // a QR identifier's files: read like the identifier (another project's is not found)
  'identifier.qr': {
    perms: ['identifiers.view_all'],
    ok: async () => ({ id: await qrOf(api) }),
    out: async () => ({ id: await qrOf(w.P2.api) }),
  },
  'identifier.wallet_pass': {
    perms: ['identifiers.view_all'],
    ok: async () => (await walletReady(), { id: await qrOf(api) }),
    out: async () => ({ id: await qrOf(w.P2.api) }),
  },
  // a face identifier's photo: uploaded like editing it, read like reading it
  'identifier.photo_upload': {
    perms: ['identifiers.edit', 'identifiers.view_all'],
    ok: async () => ({ id: await faceOf(api), image: await png() }),
    out: async () => ({ id: await faceOf(w.P2.api), image: await png() }),
  },
  'identifier.photo': {
    perms: ['identifiers.view_all'],
    ok: async () => ({ id: await facePhotoOf(api) }),
    out: async () => ({ id: await facePhotoOf(w.P2.api) }),
  },
  // a cell to show: an identifier and a rule naming it at a device
  'access_matrix.list': {
    perms: ['access_rules.view_all'],
    ok: async () => {
      const id = (await getCommand('identifier.create').run({ api }, { type: 'qr' } as never)).data.id;
      await getCommand('access_rule.create').run({ api }, {
        name: `Matrix ${uid()}`,
        devices: [w.deviceA1],
        identifiers: [id],
      } as never);
      return {};
    },
  },
  'access_matrix.export': { perms: ['access_rules.view_all'], ok: () => ({ format: 'csv' }) },
  // guest access (issue 21 item 7): shareable rules; a pass is changed and deleted by its maker
  'guest_access.access_rules': { perms: ['identifiers.create_guest'], ok: () => ({}) },
  'guest_access.list': { perms: ['identifiers.view_all'], ok: async () => (await guestPassOf(api), {}) },
  'guest_access.create': {
    perms: ['identifiers.create_guest'],
    ok: async () => guestKey(await guestRule()),
  },
  'guest_access.update': {
    perms: ['identifiers.create_guest'],
    ok: async () => ({ id: await guestPassOf(currentTester!), name: `Guest ${uid()}` }),
  },
  'guest_access.delete': {
    perms: ['identifiers.create_guest'],
    ok: async () => ({ id: await guestPassOf(currentTester!) }),
  },
  // backups: of the caller's project only (another project's backup is not found)
  'backup.list': { perms: ['backups.view'], ok: async () => (await settingsBackup(), {}) },
  'backup.get': {
    perms: ['backups.view'],
    ok: async () => ({ id: await settingsBackup() }),
    out: async () => ({ id: await settingsBackup(w.P2.api) }),
  },
  'backup.delete': {
    perms: ['backups.delete'],
    ok: async () => ({ id: await settingsBackup(api, true) }),
    out: async () => ({ id: await settingsBackup(w.P2.api, true) }),
  },
  'backup.make': { perms: ['backups.create'], ok: () => ({ name: 'Matrix', entities: ['settings'] }) },
  'backup.apply': {
    perms: ['backups.apply'],
    ok: async () => ({ id: await settingsBackup() }),
    out: async () => ({ id: await settingsBackup(w.P2.api) }),
  },
  'backup.download': {
    perms: ['backups.download'],
    ok: async () => ({ id: await settingsBackup() }),
    out: async () => ({ id: await settingsBackup(w.P2.api) }),
  },
  // the instance's metrics (installation-wide; no row of a project to hold in scope)
  'system.metrics': { perms: ['system_info.view'], ok: () => ({}) },
  'system.info': { perms: ['system_info.view'], ok: () => ({}) },
  // workers: the instance's modules and the installation's job kinds (no row of a project to hold in scope)
  'worker.list': { perms: ['system_info.view'], ok: () => ({}) },
  'worker.stop': { perms: ['project_settings.change'], ok: () => ({ name: 'job:events.prune' }) },
  'worker.start': { perms: ['project_settings.change'], ok: () => ({ name: 'job:events.prune' }) },
  'worker.restart': { perms: ['project_settings.change'], ok: () => ({ name: 'job:events.prune' }) },
  // logs: the instance's files (installation-wide; no row of a project to hold in scope)
  'log.available': { perms: ['system_info.view'], ok: () => ({}) },
  'log.get': { perms: ['system_info.view'], ok: () => ({ name: 'events' }) },
  'log.download': { perms: ['system_info.view'], ok: () => ({ name: 'events' }) },
  'log.clear': { perms: ['project_settings.change'], ok: () => ({ name: 'events' }) },
  // project settings: of the caller's project (another project's are out of reach by construction)
  'settings.general_get': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.general_update': { perms: ['project_settings.change'], ok: () => ({ description: 'Matrix' }) },
  'settings.mail_get': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.mail_update': { perms: ['project_settings.change'], ok: () => ({ from: 'matrix@example.test' }) },
  'settings.retention_get': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.wallet_get': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.wallet_update': { perms: ['project_settings.change'], ok: () => ({ team_id: 'MATRIX1234' }) },
  'settings.whitelabel_get': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.whitelabel_update': { perms: ['project_settings.change'], ok: () => ({ name: 'Matrix' }) },
  'settings.whitelabel_logo_upload': {
    perms: ['project_settings.change'],
    ok: async () => ({ image: await logoPng() }),
  },
  'settings.whitelabel_logo_delete': { perms: ['project_settings.change'], ok: () => ({}) },
  'settings.retention_update': { perms: ['project_settings.change'], ok: () => ({ audit_event: 365 }) },
  'settings.sip_get': { perms: ['project_settings.view'], ok: () => ({}) },
  // telephony is off on the matrix's server: saved, and nothing to restart
  'settings.sip_update': { perms: ['project_settings.change'], ok: () => ({ ring_timeout_s: 60 }) },
  'settings.push_get': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.push_update': { perms: ['project_settings.change'], ok: () => ({ provider: 'none' }) },
  'broker.status': { perms: ['project_settings.view'], ok: () => ({}) },
  'settings.broker_get': { perms: ['project_settings.view'], ok: () => ({}) },
  // the platform's connection made again: cheap, and the same on every run of the matrix
  'broker.restart': { perms: ['project_settings.change'], ok: () => ({ type: 'connection' }) },
  // no certificate stored: removing none is a success that changes nothing
  'settings.broker_delete': { perms: ['project_settings.change'], ok: () => ({}) },
  // mail templates: the project's need project settings; a group's, its edit rights (tests/api/mail-templates
  // holds the groups' cases); here the project's, so the gate is project_settings.change
  'mail_template.types': { perms: ['project_settings.change'], ok: () => ({}) },
  'mail_template.list': {
    perms: ['project_settings.change'],
    // a project's template to list (one per type: made once)
    ok: async () => {
      const listed = await getCommand('mail_template.list').run({ api }, {});
      if (!listed.data.length)
        await getCommand('mail_template.create').run(
          { api },
          { mail_type_id: 'test_email', subject: 'Matrix', body: 'Through {{host}}' },
        );
      return {};
    },
  },
  'mail_template.preview': {
    perms: ['project_settings.change'],
    ok: () => ({ mail_type_id: 'confirm', subject: 'S', body: '{{link}}' }),
  },
  // integrations: a project's needs project settings (tests/api/integrations.test.ts holds the groups' cases)
  'integration.available': { perms: ['integrations.view'], ok: () => ({}) },
  'integration.certificate_upload': {
    perms: ['project_settings.change'],
    ok: async () => ({
      id: await integrationOf(),
      certificate: new File([selfSigned('integration').cert], 'server.pem', { type: 'text/plain' }),
    }),
    out: async () => ({
      id: await integrationOf(w.P2.api),
      certificate: new File([selfSigned('integration').cert], 'server.pem', { type: 'text/plain' }),
    }),
  },
  'integration.certificate_delete': {
    perms: ['project_settings.change'],
    ok: async () => ({ id: await integrationOf() }),
    out: async () => ({ id: await integrationOf(w.P2.api) }),
  },
  // IP blocking: installation-wide, like the addresses it guards (no row of a project to hold in scope)
  'ip_blocking.status': { perms: ['project_settings.view'], ok: () => ({}) },
  'ip_blocking.banned': { perms: ['project_settings.view'], ok: () => ({}) },
  'ip_blocking.whitelist': { perms: ['project_settings.view'], ok: () => ({}) },
  'ip_blocking.status_set': {
    perms: ['project_settings.change'],
    ok: () => ({ service: 'sip', ban_time_s: 600 }),
  },
  'ip_blocking.unban_all': { perms: ['project_settings.change'], ok: () => ({ service: 'sip' }) },
  'ip_blocking.unban': {
    perms: ['project_settings.change'],
    ok: () => ({ service: 'sip', ips: ['192.0.2.1'] }),
  },
  'ip_blocking.whitelist_add': {
    perms: ['project_settings.change'],
    ok: () => ({ service: 'sip', ips: [`192.0.2.${Math.floor(Math.random() * 250) + 1}`] }),
  },
  'ip_blocking.whitelist_delete': {
    perms: ['project_settings.change'],
    ok: () => ({ service: 'sip', ips: ['192.0.2.0/24'] }),
  },
  'backup.schedule_get': { perms: ['backups.view'], ok: () => ({}) },
  'backup.schedule_set': { perms: ['backups.create'], ok: () => ({ keep: 5 }) },
  'licence.notify_update': { perms: ['licenses.manage'], ok: () => ({ mode: 'everyday' }) },
  'licence.delete': {
    perms: ['licenses.manage'],
    ok: async () => ({ id: await licenceRow('default') }),
    out: async () => ({ id: await licenceRow(null) }),
  },

  // devices: view descendant reaches the tester's subtree (A, so A1), not B
  'device.list': {
    perms: ['devices.view_descendant'],
    ok: () => idIs(w.deviceA1),
    out: () => idIs(w.deviceB),
    hidden: () => w.deviceB,
  },
  'device.get': {
    perms: ['devices.view_descendant'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.create': {
    perms: ['devices.create'],
    ok: () => ({ name: 'Created', type: 'panel', serial_number: `PM-${uid()}`, domain_id: w.A1 }),
    out: () => ({ name: 'Created', type: 'panel', serial_number: `PM-${uid()}`, domain_id: w.B }),
  },
  'device.update': {
    perms: ['devices.view_descendant', 'devices.edit'],
    ok: async () => ({ id: await freshDevice(), name: 'Renamed' }),
    out: () => ({ id: w.deviceB, name: 'Renamed' }),
  },
  'device.delete': {
    perms: ['devices.view_descendant', 'devices.delete'],
    ok: async () => ({ id: await freshDevice() }),
    out: () => ({ id: w.deviceB }),
  },
  'device.delete_all': {
    perms: ['devices.view_descendant', 'devices.delete'],
    ok: async () => ({ items: [await freshDevice()] }),
    out: () => ({ items: [w.deviceB] }),
  },
  'device.credentials': {
    perms: ['devices.view_descendant', 'devices.edit'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.credentials_reset': {
    perms: ['devices.view_descendant', 'devices.edit'],
    ok: async () => ({ id: await freshDevice() }),
    out: () => ({ id: w.deviceB }),
  },
  'device.broker_sync': {
    perms: ['devices.edit'],
    ok: () => ({}),
  },
  // the test servers run no SIP server: the status says so (down, disabled) to whoever may see it
  'sip.status': { perms: ['project_settings.view'], ok: () => ({}) },
  'device.info': {
    perms: ['devices.view_descendant'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.tasks': {
    perms: ['devices.view_descendant', 'devices.view_tasks'],
    ok: () => ({ device_id: w.deviceA1 }),
  },
  // the home's charts: any device view permission (events and tasks only with theirs, null otherwise)
  'device.activity': { perms: ['devices.view_descendant'], ok: () => ({}) },
  'device.apply_settings': {
    perms: ['devices.view_descendant', 'devices.edit'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.restart': {
    perms: ['devices.view_descendant', 'devices.tasks'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.reinit': {
    perms: ['devices.view_descendant', 'devices.tasks'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.task_retry': {
    perms: ['devices.view_descendant', 'devices.tasks'],
    ok: async () => ({ id: await taskOn(w.deviceA1) }),
    out: async () => ({ id: await taskOn(w.deviceB) }),
  },
  'device.task_stop': {
    perms: ['devices.view_descendant', 'devices.tasks'],
    ok: async () => ({ id: await taskOn(w.deviceA1) }),
    out: async () => ({ id: await taskOn(w.deviceB) }),
  },
  'device.search': {
    perms: ['devices.create'],
    ok: () => ({ start_ip: '127.0.0.250', end_ip: '127.0.0.251', port: 9 }),
  },
  // a search is its user's: another's request id is not found
  'device.search_result': {
    perms: ['devices.create'],
    ok: async () => ({ request_id: await searchOf(currentTester!) }),
    out: async () => ({ request_id: await searchOf(api) }),
  },
  'device.raw_list': {
    perms: ['devices.view_descendant'],
    ok: () => ({}),
    out: () => ({ search: 'PM-' }),
    hidden: () => w.deviceB,
  },
  // a fresh device: the others' protocols stay as they are
  'device.set_protocol': {
    perms: ['devices.view_descendant', 'devices.edit'],
    ok: async () => ({ id: await freshDevice(), protocol: 'mqtt' }),
    out: () => ({ id: w.deviceB, protocol: 'mqtt' }),
  },
  'device.init_apply': {
    perms: ['devices.view_descendant', 'devices.edit'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.sync_entities': {
    perms: ['devices.view_descendant', 'devices.tasks'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.sync_errors': {
    perms: ['devices.view_descendant'],
    ok: () => ({ id: w.deviceA1 }),
    out: () => ({ id: w.deviceB }),
  },
  'device.pool': { perms: ['devices.create'], ok: () => ({}) },
  'device.from_pool': {
    perms: ['devices.create'],
    ok: async () => ({ serial_number: await pooled(), domain_id: w.A1, name: `Pooled ${uid()}` }),
    out: async () => ({ serial_number: await pooled(), domain_id: w.B, name: `Pooled ${uid()}` }),
  },
  'device.add_found': {
    perms: ['devices.create'],
    ok: () => ({ domain_id: w.A1, items: [foundItem()] }),
    out: () => ({ domain_id: w.B, items: [foundItem()] }),
  },

  'device_event.list': {
    perms: ['devices.view_descendant', 'devices.view_events'],
    ok: () => eventOn(w.deviceA1),
    out: () => eventOn(w.deviceB),
  },

  // calls as the SIP server's events leave them (these test servers run none); tests/sip/calls.test.ts holds
  // who sees which call
  'call.list': {
    perms: ['calls.can_intercept_call_like_concierge'],
    ok: async () => (await callRows(), {}),
  },
  // a concierge's interception settings (tests/sip/interception.test.ts: the groups he may choose, the refusals)
  'call.interception': {
    perms: ['calls.can_intercept_call_like_concierge'],
    ok: () => ({}),
  },
  'call.intercept': {
    perms: ['calls.can_intercept_call_like_concierge'],
    ok: () => ({ is_active: false, domains: [] }),
  },
  // the doors a concierge may open (tests/cli/doors.test.ts opens one and refuses the others)
  'door.list': {
    perms: ['calls.call_all'],
    ok: () => ({}),
  },
  'call_history.list': {
    perms: ['calls.history'],
    ok: async () => (await callRows(), {}),
  },
  // the access-control log reaches the whole project (a permission of the system section)
  'acs_event.list': {
    perms: ['access_control_events.view'],
    ok: () => acsOn(w.deviceA1),
    out: () => ({ filters: [{ field: 'serial_number', rule: 'equals', value: 'no-such-serial' }] }),
  },

  'audit_event.list': {
    perms: ['audit.view'],
    ok: () => ({}),
    out: () => ({ filters: [{ field: 'user', rule: 'equals', value: w.userP2 }] }),
  },
};

/** An export streams its list's rows: the same gate and scope, so the list's case (its rows, not `data`). */
const cases: Record<string, Case> = {
  ...listCases,
  ...Object.fromEntries(
    Object.entries(listCases)
      .filter(([id]) => id.endsWith('.list') && registry.has(id.replace(/\.list$/, '.export')))
      .map(([id, c]) => [id.replace(/\.list$/, '.export'), c]),
  ),
};
/** The rows a list or an export answered. */
const rowsOf = (id: string, result: unknown): Array<{ id: number }> =>
  id.endsWith('.export')
    ? (result as Array<{ id: number }>)
    : (result as { data: Array<{ id: number }> }).data;
const isList = (id: string) => id.endsWith('.list') || id.endsWith('.raw_list') || id.endsWith('.export');

/** A project's integration (no group) of the project `client` signs in to, at a server of its own. */
const integrationOf = async (client: ApiClient = api) =>
  (
    await getCommand('integration.create').run(
      { api: client },
      {
        name: `VMS ${uid()}`,
        domain_id: null,
        axxon_one_settings: {
          server_url: `https://vms-${uid()}.example.test`,
          login: 'root',
          password: 'root-password',
        },
      },
    )
  ).data.id;

/** A webhook of the project `client` signs in to (its endpoint is refused at once: the server's own address). */
const hookOf = async (client: ApiClient = api) =>
  (
    await getCommand('webhook.create').run(
      { api: client },
      // inactive: the matrix's own events are sent nowhere (only webhook.test sends, once)
      {
        name: `Hook ${uid()}`,
        url: 'https://127.0.0.1:9/x',
        secret: 'a-secret-of-twenty-chars',
        is_active: false,
      },
    )
  ).data.id;

/**
 * Commands the matrix does not run, each with the reason. Every other command of the registry gets a case:
 * a new command fails "has a matrix case for every command" until it has one or a reason here.
 */
const OPT_OUT: Partial<Record<CommandId, string>> = {
  'identifier.import_attempt':
    'its body is an NDJSON stream the generic runner does not send: tests/api/access-families.test.ts holds its gate',
  'identifier.import_continue':
    "continues an import the caller's own attempt staged: tests/api/access-families.test.ts holds its gate and owner",
  'user.import_stream':
    'its body is an NDJSON stream the generic runner does not send: tests/api/user-import-stream.test.ts holds its gate and owner',
  'session.login': 'public: no session, so no gate to hold',
  'session.refresh': 'public: no session, so no gate to hold',
  'registration.register': 'public: no session, so no gate to hold',
  'registration.invite_info': 'public: no session, so no gate to hold',
  'registration.invite_attempt': 'public: no session, so no gate to hold',
  'registration.confirm': 'public: no session, so no gate to hold',
  'self_registration.create': 'public: no session, so no gate to hold',
  'self_registration.info': 'public: no session, so no gate to hold',
  'self_registration.resend': 'public: no session, so no gate to hold',
  'self_registration.confirm': 'public: no session, so no gate to hold',
  'password.recovery': 'public: no session, so no gate to hold',
  'password.reset': 'public: no session, so no gate to hold',
  'server.info': 'public: no session, so no gate to hold',
  'guest_access.info':
    "public: the pass's key is the credential; tests/devices/guest-access.test.ts refuses unknown, revoked, expired and used-up keys",
  'guest_access.wallet_pass':
    "public: the pass's key is the credential (as for guest_access.info); tests/devices/guest-access.test.ts asks it by the key",
  'guest_access.open':
    "public: the pass's key is the credential; tests/devices/guest-access.test.ts refuses other passes' door tokens and rate-limits it",
  'system.openapi': 'public: no session, so no gate to hold',
  'session.logout': "self-service: acts on the caller's own session (no permission gate)",
  'profile.get': "self-service: acts on the caller's own profile (no permission gate)",
  'profile.whitelabel':
    "self-service: the brand the caller's own console shows (no permission gate); tests/api/whitelabel.test.ts",
  'profile.update': "self-service: acts on the caller's own profile (no permission gate)",
  'profile.password': "self-service: acts on the caller's own profile (no permission gate)",
  'profile.mobile_popup': "self-service: acts on the caller's own profile (no permission gate)",
  'profile.delete': "self-service: deletes the caller's own account (no permission gate)",
  'notification.unread':
    "self-service: the caller's own notifications (no permission gate; tests/api/notifications.test.ts)",
  'notification.list':
    "self-service: the caller's own notifications (no permission gate; tests/api/notifications.test.ts)",
  'notification.read':
    "self-service: the caller's own notifications (no permission gate; tests/api/notifications.test.ts)",
  'notification.read_all':
    "self-service: the caller's own notifications (no permission gate; tests/api/notifications.test.ts)",
  'notification.settings_get':
    "self-service: the caller's own notifications (no permission gate; tests/api/notifications.test.ts)",
  'notification.settings_update':
    "self-service: the caller's own notifications (no permission gate; tests/api/notifications.test.ts)",
  'server.settings': 'self-service: start-up data every signed-in user reads (no permission gate)',
  'sip.profile':
    "self-service: the caller's own number for the web dialer, licence-gated (no permission gate); tests/e2e/dialer.test.ts reads it against Kamailio",
  'sip.reinit':
    'needs a running SIP server (the test servers here run none): tests/sip/register.test.ts runs it against Kamailio and refuses a viewer',
  'sip.restart':
    'needs a running SIP server (the test servers here run none): tests/sip/register.test.ts runs it against Kamailio and refuses a viewer',
  'mail_template.create':
    "one per type per group: a second run of the matrix's cases would be refused as a duplicate; tests/api/mail-templates.test.ts runs it and refuses callers without the project's or the group's rights",
  'mail_template.update':
    "tests/api/mail-templates.test.ts runs it and refuses callers without the project's or the group's rights (the rights depend on the template's group, which the generic runner does not make)",
  'mail_template.delete':
    "tests/api/mail-templates.test.ts runs it and refuses callers without the project's or the group's rights (the rights depend on the template's group, which the generic runner does not make)",
  'mail_template.send_preview':
    'sends mail, counted against the recipient: tests/api/mail-templates.test.ts sends one to a real SMTP receiver; its gate is that of mail_template.preview, which the matrix holds',
  'settings.broker_update':
    'its arguments are a certificate and its key (PEM files) the generic runner does not make: tests/devices/broker-service.test.ts uploads them, refuses a viewer and checks the key is never returned',
  'settings.mail_test':
    'needs a mail server to send to: tests/api/settings.test.ts runs it against a real SMTP receiver; its gate is the same as settings.mail_update, which the matrix holds',
  'resources.meta': 'self-service: start-up data every signed-in user reads (no permission gate)',
  'licence.add_file':
    'needs a file signed by a trusted key for this instance: tests/api/licences.test.ts runs it and refuses a viewer',
  'backup.apply_file':
    'its argument is a backup zip the generic runner does not make: tests/api/backups.test.ts refuses a caller with backups.apply but not backups.apply_from_file',
  'licence.add_cloud':
    'needs a licence server: tests/api/licences.test.ts runs it against one and refuses a viewer',
  'device.remote_session':
    'needs an online device on mqtt (the world here holds an http one): tests/devices/remote-control.test.ts refuses callers without devices.edit and out of scope',
  'device.remote_session_keepalive':
    'needs an online device on mqtt (the world here holds an http one): tests/devices/remote-control.test.ts refuses callers without devices.edit and out of scope',
  'device.remote_state':
    'needs an online device on mqtt (the world here holds an http one): tests/devices/remote-control.test.ts refuses callers without devices.edit and out of scope',
  'device.remote_open_lock':
    'needs an online device on mqtt (the world here holds an http one): tests/devices/remote-control.test.ts refuses callers without devices.edit and out of scope',
  'device.remote_reboot':
    'needs an online device on mqtt (the world here holds an http one): tests/devices/remote-control.test.ts refuses callers without devices.edit and out of scope',
  'device_gateway.heartbeat':
    "a device's own call (its login and password, or its broker topics), never a person's: tests/devices/gateway.test.ts refuses sessions and wrong credentials",
  'device_gateway.status':
    "a device's own call (its broker topics), never a person's: tests/devices/gateway.test.ts holds it to its own serial",
  'sip.route':
    "the SIP server's own call (the installation's SIP secret), never a person's: tests/sip/calls.test.ts refuses sessions and wrong secrets",
  'sip.call_event':
    "the SIP server's own call (the installation's SIP secret), never a person's: tests/sip/calls.test.ts refuses sessions and wrong secrets",
  'sip.call_events':
    "the SIP server's own call (the installation's SIP secret), never a person's: tests/sip/calls.test.ts refuses sessions and wrong secrets",
  'sip.join':
    "the SIP server's own call (the installation's SIP secret), never a person's: tests/sip/interception.test.ts joins a waiting call through it and refuses a number that may not intercept",
  'sip.auth_failed':
    "the SIP server's own call (the installation's SIP secret), never a person's: tests/sip/register.test.ts bans an address through it and refuses sessions",
  'door.open':
    'needs an online door on mqtt (the world here holds an http one): tests/cli/doors.test.ts opens one as a concierge and refuses a device that is no door, a door out of his groups and a user without call permissions',
  'call.stop':
    'needs a call in progress on a running SIP server: tests/sip/calls.test.ts stops one and refuses a user whose number is not in it',
  'integration.macros':
    "reads the integration's own server (Axxon One): tests/api/integrations.test.ts reads one answering as Axxon One does with each permission that reaches the integration, a device editor of a group it serves, and refuses one of another group and another project's",
  'integration.cameras':
    "reads the integration's own server (Axxon One): tests/api/integrations.test.ts reads one answering as Axxon One does with each permission that reaches the integration, a device editor of a group it serves, and refuses one of another group and another project's",
  'device_gateway.logs':
    "a device's own call (its login and password, or its broker topics), never a person's: tests/devices/events.test.ts refuses sessions and wrong credentials",
};
/**
 * Families of the registry without hand-written cases get theirs from the declaration
 * (tests/support/registry-suites.ts `familyMatrixSuite`): adding a family to the registry is all it needs.
 */
const derivedFamilies = (resources as readonly AnyResource[]).filter((r) =>
  Object.values(r.commands).every((c) => !cases[c.id]),
);
/** Every family's relation verbs get theirs from the declaration too, hand cases or not (`relationMatrix`). */
const handFamilies = (resources as readonly AnyResource[]).filter((r) => !derivedFamilies.includes(r));
const derived = new Set<string>([
  ...derivedFamilies.flatMap((r) => Object.values(r.commands).map((c) => c.id as string)),
  ...(resources as readonly AnyResource[]).flatMap((r) => relationCommands(r).map((c) => c.id as string)),
]);
const familyCommands = [...registry.values()].filter(
  (c) => !OPT_OUT[c.id as CommandId] && !derived.has(c.id),
);
/** Commands any signed-in user may call: they act on the caller's own session and profile. */
const SELF_SERVICE = new Set(
  Object.entries(OPT_OUT)
    .filter(([, why]) => why.startsWith('self-service'))
    .map(([id]) => id),
);

/**
 * The matrix in `of` shards, each a test file of its own (tests/api/permissions-<n>.test.ts) with its own server
 * and world, so the forks share it: whole, it was the parallel phase's longest file (220 s of CPU, one fork).
 * Shard n takes every of-th command and family from the n-th; shard 0 also the registry's and licences' checks.
 */
export function permissionsMatrix(shard: number, of: number): void {
  const mine = <T>(list: readonly T[]): T[] => list.filter((_, i) => i % of === shard);
  beforeAll(async () => {
    // hundreds of test users sign in from one address within a minute here, which the public-route limit
    // (300 a minute per address, tested in abuse.test.ts) would rightly refuse; this file is about gates
    ts = await startTestServer({
      config: {
        rateLimits: { public: { limit: 100_000, windowS: 60 } },
        // no access sync of its own: the matrix's rules and identifiers would queue tasks to its devices, whose
        // addresses answer nobody, ahead of the backups its cases wait for (tests/devices/access-sync tests it)
        accessSync: { pollMs: 0 },
      },
    });
    api = await admin(ts);
    const full = await getCommand('group.full').run({ api }, {});
    w.root = full.data.find((g) => g.parent_id === null)!.id;
    w.A = await group(api, 'A', w.root);
    w.A1 = await group(api, 'A1', w.A);
    w.B = await group(api, 'B', w.root);
    w.P2 = await secondProject(ts);
    w.emptyRole = (await getCommand('role.create').run({ api }, { name: 'Empty', permissions: [] })).data.id;
    const mk = async (domains: number[], client = api) =>
      (
        await getCommand('user.create').run(
          { api: client },
          {
            login: `x${uid()}`,
            name: `X ${uid()}`,
            role:
              client === api
                ? w.emptyRole
                : (await getCommand('role.list').run({ api: client }, { limit: 1, sort: 'id' })).data[0]!.id,
            domains,
            password: 'pw-long-enough',
            send_registration_link: false,
          },
        )
      ).data.id;
    w.userA1 = await mk([w.A1]);
    w.userB = await mk([w.B]);
    w.userP2 = await mk([w.P2.rootGroup], w.P2.api);
    // markers made by people of A and of B
    const makerA = await userWith(ts, api, { permissions: ['markers.create'], domains: [w.A1] });
    const makerB = await userWith(ts, api, { permissions: ['markers.create'], domains: [w.B] });
    w.markerA = (
      await getCommand('marker.create').run(
        { api: await makerA.client() },
        { name: `MA${uid()}`, color: '#aa0000' },
      )
    ).data.id;
    w.markerB = (
      await getCommand('marker.create').run(
        { api: await makerB.client() },
        { name: `MB${uid()}`, color: '#00aa00' },
      )
    ).data.id;
    w.typeP2 = (
      await getCommand('domain_type.create').run({ api: w.P2.api }, { type: 'entrance', name: 'Entrance' })
    ).data.id;
    w.groupP2 = await group(w.P2.api, 'P2 group', w.P2.rootGroup);
    // a device in A1 that answers (a simulated panel on http, at its own address), one in B
    w.sim = new SimulatedDevice({
      serial: `PM-${uid()}`,
      management: { protocol: 'http', url: '', login: '', password: '' },
      heartbeatMs: 0,
    });
    await w.sim.start();
    w.deviceA1 = await freshDevice(w.A1, {
      serial_number: w.sim.serial,
      ip_address: '127.0.0.1',
      port: w.sim.httpPort,
    });
    w.deviceB = await freshDevice(w.B);
    // every licence flag on: a gate behind a licence must be seen open (a), so that (b) and (d) prove something
    await licence(ts, everyFeatureOn());
    w.numberA = await freshNumber(w.A1);
    w.numberB = await freshNumber(w.B);
  });
  afterAll(async () => {
    await w.sim?.stop();
    await ts?.close();
  });

  if (shard === 0)
    describe('the registry', () => {
      it('has no signed-in route without a permission gate, except the self-service ones', () => {
        for (const cmd of registry.values()) {
          // public routes and devices' own calls have no person's permission to hold
          if (cmd.access !== 'session' || SELF_SERVICE.has(cmd.id)) continue;
          expect(cmd.gates.anyPermission?.length, cmd.id).toBeGreaterThan(0);
        }
      });
      it('has a matrix case for every command, or a reason to leave it out', () => {
        expect(familyCommands.map((c) => c.id).filter((id) => !cases[id])).toEqual([]);
        // a reason only where there is no case, and only for registered commands
        expect(Object.keys(OPT_OUT).filter((id) => cases[id] || !registry.has(id))).toEqual([]);
        expect(Object.values(OPT_OUT).every((why) => why.length > 10)).toBe(true);
      });
    });

  familyMatrixSuite(mine(derivedFamilies), () => ({ ts, api, root: w.root, A: w.A, B: w.B }));
  familyMatrixSuite(mine(handFamilies), () => ({ ts, api, root: w.root, A: w.A, B: w.B }), {
    only: 'relations',
  });

  describe.each(mine(familyCommands.filter((c) => cases[c.id])).map((c) => [c.id]))('%s', (id) => {
    const cmd = registry.get(id)!;
    const c = cases[id]!;

    async function tester(perms: string[], domains = [w.A]) {
      return (
        await userWith(ts, api, { permissions: perms, domains, available: c.available?.() ?? [] })
      ).client();
    }
    /** targets the tester's role must list, for the role family */
    async function prepareRoleTargets(roleAvailable: number[]) {
      for (const key of ['role.update', 'role.delete', 'role.delete_all'])
        if (id === key) {
          const target = await freshRole();
          (c as { target?: number }).target = target;
          roleAvailable.push(target);
        }
    }

    it('(a) runs with the permission in scope', async () => {
      const available = [...(c.available?.() ?? [])];
      await prepareRoleTargets(available);
      const client = await (
        await userWith(ts, api, { permissions: c.perms, domains: [w.A], available })
      ).client();
      currentTester = client;
      const result = (await cmd.run({ api: client }, (await c.ok()) as never)) as Record<string, unknown>;
      // a list answers {data}; the licences' list answers {active_ids, items} (spec part 2 §7)
      if (id.endsWith('.export')) expect(rowsOf(id, result).length).toBeGreaterThan(0);
      if (isList(id) && !id.endsWith('.export'))
        expect(((result.data ?? result.items) as unknown[]).length).toBeGreaterThan(0);
      if (id.endsWith('.delete_all')) expect((result.not_deleted as unknown[]).length).toBe(0);
    });

    it('(b) is refused without the permission', async () => {
      // some permission, but none of the ones this command accepts
      const other = AllPermissions.find((p) => !cmd.gates.anyPermission!.includes(p))!;
      const client = await tester([other]);
      currentTester = await (await userWith(ts, api, { permissions: c.perms, domains: [w.A] })).client();
      const e = await failure(cmd.run({ api: client }, (await c.ok()) as never));
      expect(e.status).toBe(403);
      expect(e.message).toBe('method_prohibited');
    });

    // commands without an out-of-scope target (creates without a place, whole-tree reads) get no (c)
    if (c.out)
      it('(c) does not reach out of scope (another subtree, another project)', async () => {
        const client = await tester(c.perms);
        const args = (await c.out!()) as never;
        if (isList(id)) {
          const rows = rowsOf(id, await cmd.run({ api: client }, args));
          if (c.hidden) expect(rows.map((r) => r.id)).not.toContain(c.hidden());
          else expect(rows).toEqual([]);
        } else if (id.endsWith('.delete_all')) {
          const result = (await cmd.run({ api: client }, args)) as {
            deleted: number[];
            not_deleted: Array<{ reason: string }>;
          };
          expect(result.deleted).toEqual([]);
          expect(
            result.not_deleted.every((n) => ['item_not_found', 'method_prohibited'].includes(n.reason)),
          ).toBe(true);
        } else {
          const e = await failure(cmd.run({ api: client }, args));
          expect([403, 404]).toContain(e.status);
        }
      });

    if (cmd.gates.licence?.length)
      it('(d) is refused without the licence', async () => {
        // the tester's group switches its own licences on, without this feature
        const g = await group(api, `Unlicensed ${uid()}`, w.A, {
          license_settings: { is_enabled: true, licenses: [] },
        });
        const client = await (await userWith(ts, api, { permissions: c.perms, domains: [g] })).client();
        const target = await group(api, `Child ${uid()}`, g);
        // a command aimed at one record is aimed at one in the tester's reach; a list or a create as it is
        const aimed = 'id' in ((cmd.args as { shape?: object }).shape ?? {});
        const args = { ...((await c.ok()) as object), ...(aimed ? { id: target } : {}) };
        const e = await failure(cmd.run({ api: client }, args as never));
        expect(e.status).toBe(403);
        expect(e.message).toBe('feature_not_licensed');
        expect(e.data).toMatchObject({ feature: cmd.gates.licence![0], by: 'group' });
      });
  });

  if (shard === 0)
    describe('licences', () => {
      it('a feature needs the server licence too', async () => {
        const db = ts.server.context.db;
        await db.updateTable('licenses').set({ is_active: false }).execute();
        try {
          const e = await failure(getCommand('group.whitelabel_logo_delete').run({ api }, { id: w.A }));
          expect(e.message).toBe('feature_not_licensed');
          await db
            .updateTable('licenses')
            .set({ is_active: true, valid_to: new Date(Date.now() - 1000) })
            .execute();
          expect(
            (await failure(getCommand('group.whitelabel_logo_delete').run({ api }, { id: w.A }))).message,
          ).toBe('license_expired');
        } finally {
          await db.updateTable('licenses').set({ is_active: true, valid_to: null }).execute();
        }
        await expect(getCommand('group.whitelabel_logo_delete').run({ api }, { id: w.A })).resolves.toEqual({
          ok: true,
        });
      });

      it('shows in the profile what both the server and the groups allow', async () => {
        const profile = await getCommand('profile.get').run({ api }, {});
        // the administrator's groups restrict nothing: every flag of the server licence is on
        expect(LicenceFlags.filter((f) => !licenceFlagOn(profile.license_info, f))).toEqual([]);
        // a group that keeps only the mobile app: its people see the mobile app, and no SIP
        const only = await group(api, `Mobile only ${uid()}`, w.A, {
          license_settings: {
            is_enabled: true,
            notifications: { period: 'never', notify_before: 0 },
            licenses: [
              {
                is_active: true,
                features: { mobile_app: everyFeatureOn().mobile_app },
                restrict_period: { is_active: false, from: null, to: null },
              },
            ],
          },
        });
        const member = await (await userWith(ts, api, { permissions: [], domains: [only] })).client();
        const info = (await getCommand('profile.get').run({ api: member }, {})).license_info;
        expect(LicenceFlags.filter((f) => licenceFlagOn(info, f))).toEqual(
          LicenceFlags.filter((f) => f.startsWith('mobile_app')),
        );
      });
    });
}

export type { CommandId };
