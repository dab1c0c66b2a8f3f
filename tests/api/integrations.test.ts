/**
 * Integrations (issue 24 item 5): Axxon One servers a project or a group uses. Who may manage which one (spec
 * part 2 §6: a project's needs project_settings.change, a group's the group's edit rights or
 * domains.own_integrations); the password never returned; bad input refused with the catalogue's codes
 * (server URL exists, invalid related entity); the certificate upload; and the macros and cameras read from a
 * server that answers as Axxon One does (tests/support/axxon-one.ts) — over HTTP, over HTTPS trusted by the
 * certificate uploaded, with a wrong password, and unreachable (refused, and never answering).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { DUMMY_PASSWORD, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, raw, rootGroup, tokenOf, uid, userWith } from '../support/fixtures';
import { closedPort, startFakeAxxon, type FakeAxxon } from '../support/axxon-one';

const LOGIN = 'root';
const PASSWORD = `axxon-${uid()}-pass`;
const MACROS = [
  { id: '4fd9420e-0d22-4684-9f0a-3514240cc1ac', name: 'Open barrier' },
  { id: '0d1e05e6-8b4b-4be7-bc44-fcdf2cde4135', name: 'Record entrance' },
  { id: '0667120b-46af-407b-ae79-4603c119652e', name: '19.0.Camera: 1.Motion detection', auto: true },
  { id: '8a3e7c1d-1111-4b4b-9c9c-000000000004', name: 'Lights on' },
];
const CAMERAS = Array.from({ length: 7 }, (_, i) => ({
  displayId: String(i + 1),
  displayName: i % 2 ? `Parking ${i + 1}` : `Entrance ${i + 1}`,
}));

let ts: TestServer;
let api: ApiClient;
let axxon: FakeAxxon;
let secure: FakeAxxon;
let tlsCert: string;
let root: number;
let A: number;
let A1: number;
let B: number;

/** A certificate for 127.0.0.1 and its key: what a self-signed Axxon One server presents. */
function loopbackCertificate(): { cert: string; key: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-axxon-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=Axxon One test'].concat([
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'k.pem'),
        '-out',
        path.join(dir, 'c.pem'),
      ]),
      { stdio: 'ignore' },
    );
    return {
      cert: fs.readFileSync(path.join(dir, 'c.pem'), 'utf8'),
      key: fs.readFileSync(path.join(dir, 'k.pem'), 'utf8'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  const tls = loopbackCertificate();
  tlsCert = tls.cert;
  axxon = await startFakeAxxon({
    login: LOGIN,
    password: PASSWORD,
    macros: MACROS,
    cameras: CAMERAS,
  });
  secure = await startFakeAxxon({ login: LOGIN, password: PASSWORD, macros: MACROS, cameras: CAMERAS, tls });
  ts = await startTestServer({
    // the fake server lives on loopback, which only the operator's switch allows; a short deadline for the
    // server that never answers
    config: { integrations: { allowLoopback: true, timeoutMs: 1_500 } },
  });
  api = await admin(ts);
  root = await rootGroup(api);
  A = await group(api, 'Tower A', root);
  A1 = await group(api, 'Tower A, entrance 1', A);
  B = await group(api, 'Tower B', root);
});
afterAll(async () => {
  await ts?.close();
  await axxon?.close();
  await secure?.close();
});

const settings = (server_url = `https://vms-${uid()}.example.test`) => ({
  server_url,
  login: LOGIN,
  password: PASSWORD,
});
const create = (
  client: ApiClient,
  args: { domain_id?: number | null; domains?: number[]; server_url?: string; name?: string } = {},
) =>
  getCommand('integration.create').run(
    { api: client },
    {
      name: args.name ?? `VMS ${uid()}`,
      domain_id: args.domain_id ?? null,
      domains: args.domains ?? [],
      axxon_one_settings: settings(args.server_url),
    },
  );
/** A URL of its own on the fake server (its web server's prefix): one integration per server URL. */
const site = (server: FakeAxxon = axxon) => `${server.url}/site-${uid()}`;
const pem = (text: string, name = 'server.pem') => new File([text], name, { type: 'text/plain' });

describe('integrations: the record', () => {
  it('lists the available types', async () => {
    const { data } = await getCommand('integration.available').run({ api }, {});
    expect(data).toEqual([{ type: 'axxon', settings: 'axxon_one_settings', certificate: true }]);
  });

  it('never returns the password: the placeholder says one is stored, and sent back keeps it', async () => {
    const url = site();
    const made = (await create(api, { domain_id: A, domains: [A, A1], server_url: url })).data;
    expect(made).toMatchObject({
      type: 'axxon',
      domain_id: A,
      domain: { id: A, name: 'Tower A' },
      axxon_one_settings: { server_url: url, login: LOGIN, password: DUMMY_PASSWORD, certificate: null },
    });
    expect(made.domains.map((d) => d.id).sort()).toEqual([A, A1].sort());
    const get = await raw(ts, api, 'GET', `/integrations/${made.id}`);
    const list = await raw(ts, api, 'GET', '/integrations');
    const exported = await fetch(`${ts.url}/api/v0/integrations/export?format=ndjson`, {
      headers: { authorization: `Bearer ${tokenOf(api)}` },
    });
    for (const text of [JSON.stringify(get.body), JSON.stringify(list.body), await exported.text()])
      expect(text).not.toContain(PASSWORD);
    // the placeholder sent back with a new name keeps the stored password: the server still lets it in
    await getCommand('integration.update').run(
      { api },
      { id: made.id, name: `Renamed ${uid()}`, axxon_one_settings: { password: DUMMY_PASSWORD } },
    );
    const macros = await getCommand('integration.macros').run({ api }, { id: made.id });
    expect(macros.data.length).toBe(3);
    // nor is it in the audit log or the server's logs
    const events = await raw(ts, api, 'GET', '/audit-events', {
      query: { filters: [{ field: 'entity', rule: 'equals', value: 'integration' }] },
    });
    expect(JSON.stringify(events.body)).not.toContain(PASSWORD);
    expect(ts.logs()).not.toContain(PASSWORD);
    await getCommand('integration.delete').run({ api }, { id: made.id });
  });

  it('refuses bad input with the catalogue codes, and changes nothing', async () => {
    const put = (body: unknown) => raw(ts, api, 'PUT', '/integrations', { body });
    const base = { name: `Bad ${uid()}`, domain_id: null, domains: [], axxon_one_settings: settings() };
    for (const server_url of [
      'ftp://vms.example',
      'not a url',
      'https://root:pw@vms.example',
      'https://vms/?a=1',
    ]) {
      const r = await put({ ...base, axxon_one_settings: { ...base.axxon_one_settings, server_url } });
      expect([r.status, r.body.message], server_url).toEqual([422, 'check_fields_data']);
    }
    const noPassword = await put({
      ...base,
      axxon_one_settings: { server_url: 'https://x.example', login: 'a' },
    });
    expect(noPassword.body.message).toBe('check_fields_data');
    const wrongType = await put({ ...base, type: 'milestone' });
    expect(wrongType.body.message).toBe('check_fields_data');
    const unknownGroup = await put({ ...base, domain_id: 2_000_000 });
    expect([unknownGroup.status, unknownGroup.body.message]).toEqual([422, 'invalid_related_entity']);
    const unknownServed = await put({ ...base, domains: [2_000_000] });
    expect(unknownServed.body.message).toBe('invalid_related_entity');
    // a group's integration serves that group and the groups below it, not another's
    const elsewhere = await put({ ...base, domain_id: A, domains: [B] });
    expect([elsewhere.status, elsewhere.body.message]).toEqual([422, 'invalid_related_entity']);
    // one integration per server in a project, however its URL is typed
    const url = `https://vms-${uid()}.example.test/api`;
    const first = (await create(api, { server_url: url })).data;
    for (const again of [url, `${url}/`, url.toUpperCase().replace('HTTPS', 'https')]) {
      const e = await failure(create(api, { server_url: again }));
      expect([e.status, e.message, e.data], again).toEqual([
        409,
        'integration_url_exists',
        { field: 'axxon_one_settings.server_url' },
      ]);
    }
    const other = (await create(api)).data;
    const moved = await failure(
      getCommand('integration.update').run(
        { api },
        { id: other.id, axxon_one_settings: { server_url: url } },
      ),
    );
    expect(moved.message).toBe('integration_url_exists');
    const list = await getCommand('integration.list').run({ api }, { limit: 100 });
    expect(list.data.filter((i) => i.name.startsWith('Bad '))).toEqual([]);
    for (const id of [first.id, other.id]) await getCommand('integration.delete').run({ api }, { id });
  });
});

describe('integrations: who may manage which (spec part 2 §6)', () => {
  const as = async (permissions: string[], domains = [A]) =>
    (await userWith(ts, api, { permissions, domains })).client();
  const update = (client: ApiClient, id: number, args: Record<string, unknown> = {}) =>
    getCommand('integration.update').run({ api: client }, { id, name: `Changed ${uid()}`, ...args });

  it('a project one needs project_settings.change, and that permission reaches no group one', async () => {
    const settingsPerson = await as(['project_settings.change']);
    const own = (await create(settingsPerson)).data;
    await update(settingsPerson, own.id);
    const groups = (await create(api, { domain_id: A })).data;
    expect((await failure(create(settingsPerson, { domain_id: A }))).message).toBe('method_prohibited');
    expect((await failure(update(settingsPerson, groups.id))).status).toBe(404);
    const seen = await getCommand('integration.list').run({ api: settingsPerson }, { limit: 100 });
    expect(seen.data.map((i) => i.id)).toContain(own.id);
    expect(seen.data.map((i) => i.id)).not.toContain(groups.id);
  });

  it("a group one needs the group's edit rights: all, at or below one's groups, or one's own groups", async () => {
    const inA = (await create(api, { domain_id: A })).data;
    const inA1 = (await create(api, { domain_id: A1 })).data;
    const inB = (await create(api, { domain_id: B })).data;
    const project = (await create(api)).data;

    const editAll = await as(['domains.edit_all']);
    for (const i of [inA, inA1, inB]) await update(editAll, i.id);
    // the project's own is not a group's: the group edit permissions do not reach it
    expect((await failure(update(editAll, project.id))).status).toBe(404);
    expect((await failure(create(editAll))).message).toBe('method_prohibited');
    // nor may they make a group's integration the project's
    expect((await failure(update(editAll, inB.id, { domain_id: null }))).message).toBe('method_prohibited');

    const descendant = await as(['domains.edit_descendant']);
    await update(descendant, inA.id);
    await update(descendant, inA1.id);
    expect((await failure(update(descendant, inB.id))).status).toBe(404);
    await create(descendant, { domain_id: A1 });
    expect((await failure(create(descendant, { domain_id: B }))).message).toBe('method_prohibited');
    // a move out of his subtree is a placement he may not make
    expect((await failure(update(descendant, inA1.id, { domain_id: B }))).message).toBe('method_prohibited');

    const own = await as(['domains.own_integrations']);
    await update(own, inA.id);
    expect((await failure(update(own, inA1.id))).status).toBe(404);
    await create(own, { domain_id: A, domains: [A, A1] });
    expect((await failure(create(own, { domain_id: A1 }))).message).toBe('method_prohibited');
    expect((await failure(getCommand('integration.delete').run({ api: own }, { id: inB.id }))).status).toBe(
      404,
    );
    await getCommand('integration.delete').run({ api: own }, { id: inA.id });

    // integrations.view sees every one and changes none
    const viewer = await as(['integrations.view']);
    const seen = (await getCommand('integration.list').run({ api: viewer }, { limit: 100 })).data.map(
      (i) => i.id,
    );
    expect(seen).toEqual(expect.arrayContaining([inA1.id, inB.id, project.id]));
    expect((await failure(update(viewer, inB.id))).message).toBe('method_prohibited');
    expect((await failure(create(viewer))).message).toBe('method_prohibited');

    // and a person with none of these is refused at the gate
    const nobody = await as(['users.view']);
    expect((await failure(getCommand('integration.list').run({ api: nobody }, {}))).status).toBe(403);
    expect((await failure(getCommand('integration.available').run({ api: nobody }, {}))).status).toBe(403);
  });
});

describe('integrations: macros and cameras, from a server that answers as Axxon One', () => {
  it('reads the macros people run (not the automatic rules), searched and a page at a time', async () => {
    const url = site();
    const i = (await create(api, { server_url: url })).data;
    const all = await getCommand('integration.macros').run({ api }, { id: i.id });
    expect(all).toEqual({
      data: [
        { id: MACROS[0]!.id, name: 'Open barrier' },
        { id: MACROS[1]!.id, name: 'Record entrance' },
        { id: MACROS[3]!.id, name: 'Lights on' },
      ],
      meta: { next: null },
    });
    const last = axxon.requests.at(-1)!;
    expect(last.path).toBe(`${new URL(url).pathname}/macro/list/?exclude_auto`);
    expect(last.authorization).toBe(`Basic ${Buffer.from(`${LOGIN}:${PASSWORD}`).toString('base64')}`);
    const found = await getCommand('integration.macros').run({ api }, { id: i.id, search: 'RECORD' });
    expect(found.data.map((m) => m.name)).toEqual(['Record entrance']);
    const first = await getCommand('integration.macros').run({ api }, { id: i.id, limit: 2 });
    expect(first.data.length).toBe(2);
    const rest = await getCommand('integration.macros').run(
      { api },
      { id: i.id, limit: 2, next: first.meta.next! },
    );
    expect([...first.data, ...rest.data].map((m) => m.name)).toEqual(all.data.map((m) => m.name));
    expect(rest.meta.next).toBeNull();
  });

  it('reads the cameras a page at a time by the server’s own token, and searches on the server', async () => {
    const url = site();
    // typed with a slash at its end: the same server
    const i = (await create(api, { server_url: `${url}/` })).data;
    expect(i.axxon_one_settings.server_url).toBe(url);
    const seen: string[] = [];
    let next: string | undefined;
    do {
      const page = await getCommand('integration.cameras').run({ api }, { id: i.id, limit: 3, next });
      expect(page.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data.map((c) => c.name));
      next = page.meta.next ?? undefined;
    } while (next);
    expect(seen).toEqual(CAMERAS.map((c) => c.displayName));
    const one = await getCommand('integration.cameras').run(
      { api },
      { id: i.id, search: 'parking', limit: 100 },
    );
    expect(one.data.map((c) => c.name)).toEqual(['Parking 2', 'Parking 4', 'Parking 6']);
    expect(one.data[0]).toEqual({
      id: '2',
      name: 'Parking 2',
      access_point: 'hosts/Server1/DeviceIpint.2/SourceEndpoint.video:0:0',
      is_active: true,
      ip_address: '10.0.0.2',
      vendor: 'AxxonSoft',
      model: 'Virtual several streams',
    });
    expect(axxon.requests.at(-1)!.path).toBe(`${new URL(url).pathname}/camera/list?limit=100&query=parking`);
  });

  it('says the password is wrong when the server refuses the credentials', async () => {
    const i = (await create(api, { server_url: site() })).data;
    await getCommand('integration.update').run(
      { api },
      { id: i.id, axxon_one_settings: { password: 'wrong-one' } },
    );
    const e = await failure(getCommand('integration.cameras').run({ api }, { id: i.id }));
    expect([e.status, e.message]).toEqual([422, 'integration_wrong_password']);
    expect(axxon.requests.at(-1)!.authorization).toBe(
      `Basic ${Buffer.from(`${LOGIN}:wrong-one`).toString('base64')}`,
    );
  });

  it('says the server is unavailable when nothing answers, and when it answers too late', async () => {
    const refused = (await create(api, { server_url: `http://127.0.0.1:${await closedPort()}` })).data;
    const e = await failure(getCommand('integration.macros').run({ api }, { id: refused.id }));
    expect([e.status, e.message, e.data]).toEqual([
      502,
      'integration_server_unavailable',
      { reason: 'refused' },
    ]);
    const slow = await startFakeAxxon({ login: LOGIN, password: PASSWORD, macros: MACROS, cameras: CAMERAS });
    try {
      slow.hang = true;
      const late = (await create(api, { server_url: site(slow) })).data;
      const t = await failure(getCommand('integration.cameras').run({ api }, { id: late.id }));
      expect([t.status, t.message, t.data]).toEqual([
        502,
        'integration_server_unavailable',
        { reason: 'timeout' },
      ]);
    } finally {
      await slow.close();
    }
  });

  it('lets each permission that reaches an integration read its macros and cameras', async () => {
    const project = (await create(api, { server_url: site() })).data;
    const inA = (await create(api, { domain_id: A, server_url: site() })).data;
    const inB = (await create(api, { domain_id: B, server_url: site() })).data;
    for (const [permission, reaches, not] of [
      ['project_settings.change', project, inA],
      ['domains.edit_all', inB, project],
      ['domains.edit_descendant', inA, inB],
      ['domains.own_integrations', inA, inB],
      ['integrations.view', inB, null],
    ] as const) {
      const client = await (await userWith(ts, api, { permissions: [permission], domains: [A] })).client();
      const macros = await getCommand('integration.macros').run({ api: client }, { id: reaches.id });
      expect(macros.data.length, permission).toBe(3);
      if (not) {
        const e = await failure(getCommand('integration.cameras').run({ api: client }, { id: not.id }));
        expect([e.status, e.message], permission).toEqual([403, 'integration_not_allowed']);
      }
    }
  });

  it('lets a device editor read the cameras of an integration serving his groups, and no other', async () => {
    const servesA = (await create(api, { domain_id: root, domains: [A], server_url: site() })).data;
    const servesB = (await create(api, { domain_id: B, domains: [B], server_url: site() })).data;
    const installer = await (
      await userWith(ts, api, { permissions: ['devices.edit'], domains: [A1] })
    ).client();
    // A serves his group's parent: no; an integration is used by the groups it serves and their devices
    expect(
      (await failure(getCommand('integration.cameras').run({ api: installer }, { id: servesA.id }))).message,
    ).toBe('integration_not_allowed');
    await getCommand('integration.update').run({ api }, { id: servesA.id, domains: [A, A1] });
    const cams = await getCommand('integration.cameras').run({ api: installer }, { id: servesA.id });
    expect(cams.data.length).toBe(CAMERAS.length);
    const e = await failure(getCommand('integration.cameras').run({ api: installer }, { id: servesB.id }));
    expect([e.status, e.message]).toEqual([403, 'integration_not_allowed']);
    // another project's (or none) is not found
    const none = await failure(getCommand('integration.macros').run({ api: installer }, { id: 2_000_000 }));
    expect(none.status).toBe(404);
    // he does not see the integrations themselves
    expect(
      (await failure(getCommand('integration.get').run({ api: installer }, { id: servesA.id }))).status,
    ).toBe(403);
  });
});

describe("integrations: a device's Axxon One camera", () => {
  it('names an integration serving the device’s group, else integration not allowed for the device', async () => {
    const servesA = (await create(api, { domain_id: root, domains: [A], server_url: site() })).data;
    const axxonOf = (integration_id: number | null) => ({
      device_settings: { integration_axxon: { is_enabled: true, integration_id, camera_id: '2' } },
    });
    const device = (
      await getCommand('device.create').run({ api }, {
        name: `Panel ${uid()}`,
        type: 'panel',
        serial_number: `PM-${uid()}`,
        domain_id: A,
        protocol: 'none',
        ...axxonOf(servesA.id),
      } as never)
    ).data;
    expect(device.device_settings.integration_axxon).toEqual({
      is_enabled: true,
      integration_id: servesA.id,
      camera_id: '2',
    });
    const made = async (domain_id: number, integration: number) =>
      failure(
        getCommand('device.create').run({ api }, {
          name: `Panel ${uid()}`,
          type: 'panel',
          serial_number: `PM-${uid()}`,
          domain_id,
          protocol: 'none',
          ...axxonOf(integration),
        } as never),
      );
    const inB = await made(B, servesA.id);
    expect([inB.status, inB.message]).toEqual([403, 'integration_not_allowed']);
    expect((await made(A, 2_000_000)).message).toBe('invalid_related_entity');
    // moved to a group the integration does not serve: refused, and the device stays where it was
    const moved = await failure(
      getCommand('device.update').run({ api }, { id: device.id, domain_id: B } as never),
    );
    expect(moved.message).toBe('integration_not_allowed');
    expect((await getCommand('device.get').run({ api }, { id: device.id })).domain_id).toBe(A);
    // without an integration it is free to move
    await getCommand('device.update').run({ api }, { id: device.id, ...axxonOf(null) } as never);
    await getCommand('device.update').run({ api }, { id: device.id, domain_id: B } as never);
  });
});

describe('integrations: the certificate of the server', () => {
  it('refuses what is no certificate, keeps only the certificates of a PEM, and trusts the server by it', async () => {
    const i = (await create(api, { server_url: site(secure) })).data;
    // the server's certificate is its own: without it uploaded, its HTTPS is not trusted
    const untrusted = await failure(getCommand('integration.macros').run({ api }, { id: i.id }));
    expect([untrusted.message, untrusted.data]).toEqual([
      'integration_server_unavailable',
      { reason: 'tls' },
    ]);
    const upload = (file: File) =>
      getCommand('integration.certificate_upload').run({ api }, { id: i.id, certificate: file });
    const notPem = await failure(upload(pem('hello, I am no certificate')));
    expect([notPem.message, notPem.data]).toEqual([
      'check_fields_data',
      { fields: [{ field: 'certificate', rule: 'pem_certificate' }] },
    ]);
    const withKey = await failure(
      upload(pem(`${tlsCert}\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`)),
    );
    expect(withKey.data).toEqual({ fields: [{ field: 'certificate', rule: 'private_key' }] });
    const png = new File([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')], 'x.png', {
      type: 'image/png',
    });
    expect((await failure(upload(png))).message).toBe('invalid_file');
    const got = (await upload(pem(tlsCert))).data;
    expect(got.axxon_one_settings.certificate).toMatchObject({
      subject: expect.stringContaining('Axxon One test'),
      names: ['127.0.0.1'],
      fingerprint: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
    });
    // never the PEM itself
    expect(JSON.stringify(await getCommand('integration.get').run({ api }, { id: i.id }))).not.toContain(
      'BEGIN CERTIFICATE',
    );
    const macros = await getCommand('integration.macros').run({ api }, { id: i.id });
    expect(macros.data.length).toBe(3);
    // someone who may not edit it may not change its certificate
    const viewer = await (
      await userWith(ts, api, { permissions: ['integrations.view'], domains: [A] })
    ).client();
    expect(
      (await failure(getCommand('integration.certificate_delete').run({ api: viewer }, { id: i.id })))
        .message,
    ).toBe('method_prohibited');
    const removed = (await getCommand('integration.certificate_delete').run({ api }, { id: i.id })).data;
    expect(removed.axxon_one_settings.certificate).toBeNull();
    expect((await failure(getCommand('integration.macros').run({ api }, { id: i.id }))).data).toEqual({
      reason: 'tls',
    });
  });
});
