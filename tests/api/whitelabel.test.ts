/**
 * White-label (issue 24 item 2): the project's (`settings.whitelabel_*`) and a group's (`group.whitelabel_*`)
 * name, address, contacts and logo — checked, stored, served, gated by the own-group permission and the
 * white-label licence — and the effective one a group shows: its own when enabled, else its nearest enabled
 * ancestor's, else the project's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { sweepStorage } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  rootGroup,
  tokenOf,
  uid,
  userWith,
} from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let root: number;
const cmd = getCommand;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
});

/** A 800×200 PNG with a transparent right half. */
async function logo(): Promise<Blob> {
  const img = new Jimp({ width: 800, height: 200, color: 0x2255aaff });
  img.scan(400, 0, 400, 200, (_x, _y, idx) => {
    img.bitmap.data.writeUInt32BE(0x00000000, idx);
  });
  return new Blob([new Uint8Array(await img.getBuffer('image/png'))], { type: 'image/png' });
}

const served = async (url: string) => {
  const res = await fetch(`${ts.url}${url}`);
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    bytes: new Uint8Array(await res.arrayBuffer()),
  };
};
/** A raw call, for input the commands' own checks would refuse before sending: the server's answer. */
async function raw(method: string, url: string, body: unknown, client = api) {
  const res = await fetch(`${ts.url}/api/v0${url}`, {
    method,
    headers: { authorization: `Bearer ${tokenOf(client)}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { message?: string; data?: unknown } };
}
const stored = (url: string) => path.join(ts.server.context.config.storageDir, url.slice('/storage/'.length));

describe("the project's white-label", () => {
  it('starts empty, is changed key by key and read back', async () => {
    expect((await cmd('settings.whitelabel_get').run({ api }, {})).data).toEqual({
      is_enabled: false,
      logo: null,
      name: '',
      address: '',
      email: '',
      phone: '',
    });
    const r = await cmd('settings.whitelabel_update').run(
      { api },
      {
        is_enabled: true,
        name: ' Riverside Management ',
        email: 'Desk@Riverside.test',
        phone: '+44 (20) 7946-0000',
      },
    );
    expect(r.data).toMatchObject({
      is_enabled: true,
      name: 'Riverside Management',
      email: 'desk@riverside.test',
      phone: '+44 (20) 7946-0000',
      address: '',
    });
    await cmd('settings.whitelabel_update').run({ api }, { address: '1 River Street' });
    expect((await cmd('settings.whitelabel_get').run({ api }, {})).data).toMatchObject({
      name: 'Riverside Management',
      address: '1 River Street',
    });
    // the project's general settings are not touched
    expect((await cmd('settings.general_get').run({ api }, {})).data.name).not.toBe('Riverside Management');
  });

  it('refuses a bad e-mail, a bad phone, a name too long and a logo set by hand, naming the fields', async () => {
    const bad = async (args: Record<string, unknown>) => {
      const r = await raw('PATCH', '/settings/whitelabel', args);
      return { status: r.status, message: r.body.message, data: r.body.data };
    };
    for (const [args, field] of [
      [{ email: 'not-an-email' }, 'email'],
      [{ phone: 'call me' }, 'phone'],
      [{ name: 'x'.repeat(256) }, 'name'],
    ] as const) {
      const e = await bad(args);
      expect(e.status).toBe(422);
      expect(e.message).toBe('check_fields_data');
      expect(JSON.stringify(e.data)).toContain(field);
    }
    // the logo is only ever its upload's: a path sent by hand is refused
    const res = await fetch(`${ts.url}/api/v0/settings/whitelabel`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ logo: 'javascript:alert(1)' }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { code?: string; message?: string }).message).toBe('check_fields_data');
    expect((await cmd('settings.whitelabel_get').run({ api }, {})).data.logo).toBeNull();
  });

  it('stores an uploaded logo as a PNG within 512 px, serves it, replaces it and deletes it', async () => {
    const first = (await cmd('settings.whitelabel_logo_upload').run({ api }, { image: await logo() })).data
      .logo!;
    expect(first).toMatch(/^\/storage\/logos\/[0-9a-f]{24}\.png$/);
    const file = await served(first);
    expect(file.status).toBe(200);
    expect(file.type).toContain('image/png');
    const img = await Jimp.read(Buffer.from(file.bytes));
    expect([img.width, img.height]).toEqual([512, 128]);
    // the transparency is kept
    expect(img.getPixelColor(500, 64) & 0xff).toBe(0);
    expect((await cmd('settings.whitelabel_get').run({ api }, {})).data.logo).toBe(first);

    const second = (await cmd('settings.whitelabel_logo_upload').run({ api }, { image: await logo() })).data
      .logo!;
    expect(second).not.toBe(first);
    expect((await served(first)).status).toBe(404);
    expect(fs.existsSync(stored(second))).toBe(true);

    expect((await cmd('settings.whitelabel_logo_delete').run({ api }, {})).data.logo).toBeNull();
    expect((await served(second)).status).toBe(404);
  });

  it('refuses a file that is no image, and an SVG, with the catalogue error', async () => {
    for (const image of [
      new Blob(['just some text, not a picture'], { type: 'image/png' }),
      new Blob(['<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'], {
        type: 'image/svg+xml',
      }),
    ]) {
      const e = await failure(cmd('settings.whitelabel_logo_upload').run({ api }, { image }));
      expect(e.status).toBe(400);
      expect(e.message).toBe('invalid_file');
    }
    // a PNG signature over bytes that are no PNG: refused by the decoder's checks
    const broken = new Uint8Array(await (await logo()).arrayBuffer()).slice(0, 60);
    const e = await failure(
      cmd('settings.whitelabel_logo_upload').run({ api }, { image: new Blob([broken]) }),
    );
    expect(e.status).toBe(400);
    expect((await cmd('settings.whitelabel_get').run({ api }, {})).data.logo).toBeNull();
  });

  it('needs project_settings.change to change, .view to read', async () => {
    const viewer = await (
      await userWith(ts, api, { permissions: ['project_settings.view'], domains: [root] })
    ).client();
    expect((await cmd('settings.whitelabel_get').run({ api: viewer }, {})).data.name).toBe(
      'Riverside Management',
    );
    // each asked in turn: started together, a refusal that came before the loop awaited it was an
    // unhandled rejection (CI on PostgreSQL, once)
    const image = await logo();
    for (const call of [
      () => cmd('settings.whitelabel_update').run({ api: viewer }, { name: 'Mine' }),
      () => cmd('settings.whitelabel_logo_upload').run({ api: viewer }, { image }),
      () => cmd('settings.whitelabel_logo_delete').run({ api: viewer }, {}),
    ])
      expect((await failure(call())).message).toBe('method_prohibited');
  });
});

describe("a group's white-label", () => {
  let a: number;
  let a1: number;
  let a11: number;
  let b: number;

  beforeAll(async () => {
    await licence(ts, everyFeatureOn());
    a = await group(api, `A ${uid()}`, root);
    a1 = await group(api, `A1 ${uid()}`, a);
    a11 = await group(api, `A11 ${uid()}`, a1);
    b = await group(api, `B ${uid()}`, root);
  });

  it('inherits: its own when enabled, else the nearest enabled ancestor, else the project', async () => {
    const effective = async (id: number) =>
      (await cmd('group.whitelabel_get').run({ api }, { id })).effective;
    // the project's, enabled above
    expect(await effective(a11)).toMatchObject({
      source: 'project',
      group: null,
      settings: { name: 'Riverside Management' },
    });
    await cmd('group.whitelabel_update').run({ api }, { id: a, is_enabled: true, name: 'A Homes' });
    // a1 has settings of its own, but not enabled: they do not count
    await cmd('group.whitelabel_update').run({ api }, { id: a1, is_enabled: false, name: 'A1 draft' });
    const fromA = await effective(a11);
    expect(fromA.source).toBe('group');
    expect(fromA.group?.id).toBe(a);
    expect(fromA.settings.name).toBe('A Homes');
    await cmd('group.whitelabel_update').run({ api }, { id: a1, is_enabled: true });
    expect((await effective(a11)).settings.name).toBe('A1 draft');
    await cmd('group.whitelabel_update').run({ api }, { id: a11, is_enabled: true, name: 'Own' });
    expect(await effective(a11)).toMatchObject({
      source: 'group',
      group: { id: a11 },
      settings: { name: 'Own' },
    });
    // the record shows the group's own
    expect((await cmd('group.get').run({ api }, { id: a1 })).whitelabel_settings).toMatchObject({
      is_enabled: true,
      name: 'A1 draft',
    });
    // the project's switched off: a group under none has none
    await cmd('settings.whitelabel_update').run({ api }, { is_enabled: false });
    expect((await effective(b)).source).toBe('none');
    await cmd('settings.whitelabel_update').run({ api }, { is_enabled: true });
    expect((await effective(b)).source).toBe('project');
  });

  it('uploads, serves and deletes a logo; refuses a non-image and bad contacts', async () => {
    const up = await cmd('group.whitelabel_logo_upload').run({ api }, { id: a, image: await logo() });
    expect(up.data.logo).toMatch(/^\/storage\/logos\/.+\.png$/);
    expect((await served(up.data.logo!)).status).toBe(200);
    expect((await cmd('group.whitelabel_get').run({ api }, { id: a1 })).effective.settings.logo).toBeNull();
    const e = await failure(
      cmd('group.whitelabel_logo_upload').run({ api }, { id: a, image: new Blob(['%PDF-1.4 not an image']) }),
    );
    expect(e.message).toBe('invalid_file');
    const phone = await raw('PATCH', `/domains/${a}/whitelabel`, { phone: '12ab' });
    expect([phone.status, phone.body.message]).toEqual([422, 'check_fields_data']);
    await expect(cmd('group.whitelabel_logo_delete').run({ api }, { id: a })).resolves.toEqual({ ok: true });
    expect((await served(up.data.logo!)).status).toBe(404);
    expect((await cmd('group.whitelabel_get').run({ api }, { id: a })).data.logo).toBeNull();
  });

  it('own white-label: one brands his own groups only; edit_descendant the groups below his own', async () => {
    const own = await (
      await userWith(ts, api, { permissions: ['domains.own_white_label'], domains: [a1] })
    ).client();
    await cmd('group.whitelabel_update').run({ api: own }, { id: a1, address: 'Block 1' });
    expect((await cmd('group.whitelabel_get').run({ api: own }, { id: a1 })).data.address).toBe('Block 1');
    // below his group he reads, but does not change; elsewhere he sees nothing
    expect(
      (await failure(cmd('group.whitelabel_update').run({ api: own }, { id: a11, name: 'x' }))).message,
    ).toBe('method_prohibited');
    expect((await failure(cmd('group.whitelabel_get').run({ api: own }, { id: b }))).message).toBe(
      'item_not_found',
    );
    expect(
      (await failure(cmd('group.whitelabel_logo_upload').run({ api: own }, { id: b, image: await logo() })))
        .message,
    ).toBe('method_prohibited');

    const below = await (
      await userWith(ts, api, { permissions: ['domains.edit_descendant'], domains: [a1] })
    ).client();
    await cmd('group.whitelabel_update').run({ api: below }, { id: a11, phone: '+1 555 0100' });
    expect(
      (await failure(cmd('group.whitelabel_update').run({ api: below }, { id: a1, phone: '+1 555' })))
        .message,
    ).toBe('method_prohibited');
    // group.update no longer takes the white-label: the own-general permission cannot change it
    const general = await (
      await userWith(ts, api, { permissions: ['domains.own_general'], domains: [a1] })
    ).client();
    const e = await raw('PATCH', `/domains/${a1}`, { whitelabel_settings: { name: 'x' } }, general);
    expect([e.status, e.body.message]).toEqual([422, 'check_fields_data']);
    expect(
      (await failure(cmd('group.whitelabel_update').run({ api: general }, { id: a1, name: 'x' }))).message,
    ).toBe('method_prohibited');
  });

  it("the console's brand: a user's group's white-label, else the project's; none without the licence for his groups", async () => {
    const brand = async (client: ApiClient) =>
      (await cmd('profile.whitelabel').run({ api: client }, {})).data;
    // a user of a11 (own brand 'Own' above), one of b (the project's), and one with no permission at all
    const inA11 = await (await userWith(ts, api, { permissions: [], domains: [a11] })).client();
    const inB = await (await userWith(ts, api, { permissions: [], domains: [b] })).client();
    expect(await brand(inA11)).toMatchObject({ source: 'group', name: 'Own' });
    const project = (await cmd('settings.whitelabel_get').run({ api }, {})).data;
    expect(await brand(inB)).toEqual({ source: 'project', name: project.name, logo: project.logo });
    // a's logo reaches the users below it that have no brand of their own
    await cmd('group.whitelabel_update').run({ api }, { id: a11, is_enabled: false });
    await cmd('group.whitelabel_update').run({ api }, { id: a1, is_enabled: false });
    const fromA = (await cmd('group.whitelabel_get').run({ api }, { id: a })).data;
    expect(await brand(inA11)).toEqual({ source: 'group', name: fromA.name, logo: fromA.logo });
    // no licence for his groups (the licences taken away): the group's brand is not his, the project's is
    const kept = await ts.server.context.db.selectFrom('licenses').selectAll().execute();
    await ts.server.context.db.deleteFrom('licenses').execute();
    expect((await failure(cmd('group.whitelabel_update').run({ api }, { id: a1, name: 'x' }))).code).toBe(
      'feature_not_licensed',
    );
    expect(await brand(inA11)).toMatchObject({ source: 'project' });
    await ts.server.context.db
      .insertInto('licenses')
      .values(kept.map(({ id: _id, ...rest }) => ({ ...rest, features: JSON.stringify(rest.features) })))
      .execute();
    // the project's switched off too: none, the product's own
    await cmd('settings.whitelabel_update').run({ api }, { is_enabled: false });
    expect(await brand(inB)).toBeNull();
    await cmd('settings.whitelabel_update').run({ api }, { is_enabled: true });
    await cmd('group.whitelabel_update').run({ api }, { id: a1, is_enabled: true });
    await cmd('group.whitelabel_update').run({ api }, { id: a11, is_enabled: true });
  });

  it('the sweep keeps the logos named and removes an old one nobody names', async () => {
    const up = await cmd('group.whitelabel_logo_upload').run({ api }, { id: b, image: await logo() });
    const project = (await cmd('settings.whitelabel_logo_upload').run({ api }, { image: await logo() })).data
      .logo!;
    const orphan = path.join(ts.server.context.config.storageDir, 'logos', 'orphan.png');
    fs.writeFileSync(orphan, 'x');
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const f of [orphan, stored(up.data.logo!), stored(project)]) fs.utimesSync(f, old, old);
    expect((await sweepStorage(ts.server.context)).logos).toBe(1);
    expect([orphan, stored(up.data.logo!), stored(project)].map((f) => fs.existsSync(f))).toEqual([
      false,
      true,
      true,
    ]);
  });
});
