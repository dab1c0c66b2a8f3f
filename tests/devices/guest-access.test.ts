/**
 * Guest access (issue 21 item 7) against a real server and simulated panels: a guest pass made from the
 * guest key with shareable rules, a validity and a pass limit within the maker's groups' limits (the
 * catalogue's `guest_limits_exceeded`), the permissions and the licence flag; the public page's pass by its
 * key (no sign-in) and a door opened by its device token reaching the panel, counted against the pass limit,
 * rate-limited; unknown, revoked, expired and used-up keys refused with the catalogue codes and nothing else;
 * the pass deleted by its job once its validity ended (the server's clock moved, never slept).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import type { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import {
  admin,
  everyFeatureOn,
  failure,
  group,
  licence,
  raw,
  rootGroup,
  uid,
  userWith,
} from '../support/fixtures';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';
import { settleAccessSync, simulatedPanel } from './panels';
import { dataUrlSvg, readQr, readSvgQr } from '../support/qr';

const clock = new ManualClock(Date.parse('2026-11-27T08:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let root: number;
let smtp: SmtpReceiver;
const sims: SimulatedDevice[] = [];
const cmd = getCommand;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  ts = await startTestServer({
    config: {
      clock,
      smtpUrl: smtp.url,
      modules: ['events', 'devices', 'http'],
      mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 2000, sweepMs: 0 },
      rateLimits: { guest_open: { limit: 6, windowS: 60 }, guest_file: { limit: 3, windowS: 60 } },
      accessSync: { pollMs: 0 },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
// each test starts with the openings' rate limit unspent (its own test spends it)
beforeEach(async () => {
  await sql`delete from rate_limits`.execute(ts.server.context.db);
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
  await smtp?.close();
});

const sync = () => settleAccessSync(ts);
/** A panel on mqtt in `domain`, and its simulator, online. */
const panel = (domain = root) =>
  simulatedPanel(api, {
    domain,
    sims,
    prefix: 'GA',
    fields: { device_login: 'admin', device_password: 'panel-secret' },
  });

const rule = async (devices: number[], extra: Record<string, unknown> = {}) =>
  (
    await cmd('access_rule.create').run({ api }, {
      name: `Guests ${uid()}`,
      devices,
      is_shareable: true,
      ...extra,
    } as never)
  ).data.id;

/** A validity as entered and as instants (the client sends both: here the same, as in UTC). */
const period = (from: string, to: string) => ({ from, to, from_u: `${from}Z`, to_u: `${to}Z` });

/** A guest key for today 09:00–18:00. */
const key = (rules: number[], extra: Record<string, unknown> = {}) => ({
  selectedAccessRules: rules,
  restrictPeriod: true,
  validatePeriod: period('2026-11-27T09:00:00', '2026-11-27T18:00:00'),
  restrictPassCount: true,
  passLimit: 2,
  ...extra,
});

const info = (k: string) => raw(ts, null, 'GET', `/guest-access/key/${k}`);
const open = (k: string, device: string) =>
  raw(ts, null, 'POST', `/guest-access/key/${k}/open`, { body: { device } });

describe('guest access', () => {
  let door: Awaited<ReturnType<typeof panel>>;
  let shared: number;

  it('is licensed: without the guest identifiers flag the form is refused', async () => {
    door = await panel();
    shared = await rule([door.id]);
    const e = await failure(cmd('guest_access.create').run({ api }, key([shared]) as never));
    expect(e.message).toBe('feature_not_licensed');
    await licence(ts, everyFeatureOn());
  });

  it('makes a pass whose key shows it publicly and opens its door twice, then says pass limit reached', async () => {
    const made = await cmd('guest_access.create').run({ api }, key([shared]) as never);
    expect(made.data).toMatchObject({
      name: 'Guest identifier',
      guest_type: 'guest',
      valid_from_u: '2026-11-27T09:00:00Z',
      valid_to_u: '2026-11-27T18:00:00Z',
      pass_limit: 2,
      passes_count: 0,
      state: 'not_yet_valid',
      access_rules: [{ id: shared }],
    });
    expect(made.url).toBe(`${ts.server.context.config.publicUrl}/guest-access/${made.key_id}`);
    // it is an identifier of the family too: a guest's QR, no owner
    const ident = await cmd('identifier.get').run({ api }, { id: made.data.id });
    expect(ident).toMatchObject({ type: 'qr', owner_type: 'guest', owner: null, value: made.data.value });
    // the key is never stored nor shown again
    const stored = await sql<{ key_hash: string }>`select key_hash from guest_passes`.execute(
      ts.server.context.db,
    );
    expect(stored.rows.map((r) => r.key_hash)).not.toContain(made.key_id);
    expect(JSON.stringify(await cmd('guest_access.list').run({ api }, {}))).not.toContain(made.key_id);

    // before its validity the page shows it; the door is not opened yet
    const before = await info(made.key_id);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      qr: made.data.value,
      state: 'not_yet_valid',
      pass_limit: 2,
      passes_count: 0,
      devices: [{ name: door.name }],
    });
    // its QR code drawn, as the page shows it (an SVG a camera reads back to the pass's value)
    const svg = dataUrlSvg(before.body.qr_image as string);
    expect(readSvgQr(svg)).toBe(made.data.value);
    // no wallet settings: the page offers no Apple Wallet pass, and asking for one says why
    expect(before.body.wallet_enabled).toBe(false);
    const wallet = await raw(ts, null, 'GET', `/guest-access/key/${made.key_id}/wallet-pass`);
    expect([wallet.status, wallet.body.message]).toEqual([409, 'wallet_certificate_missing']);
    // nothing of the maker, the rules or the devices' ids
    expect(Object.keys(before.body).sort()).toEqual(
      [
        'devices',
        'name',
        'passes_count',
        'pass_limit',
        'qr',
        'qr_image',
        'state',
        'valid_from_u',
        'valid_to_u',
        'wallet_enabled',
      ].sort(),
    );
    expect(Object.keys(before.body.devices[0]).sort()).toEqual(['name', 'token']);
    const token = before.body.devices[0].token as string;
    expect((await open(made.key_id, token)).body.message).toBe('identifier_not_yet_valid');

    clock.set(Date.parse('2026-11-27T10:00:00Z'));
    for (const n of [1, 2]) {
      const r = await open(made.key_id, token);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ opened: true, device: door.name, passes_count: n, pass_limit: 2 });
      expect(door.sim.locks[1].opened).toBe(n);
    }
    const third = await open(made.key_id, token);
    expect([third.status, third.body.message]).toEqual([403, 'pass_limit_reached']);
    expect(door.sim.locks[1].opened).toBe(2);
    expect((await info(made.key_id)).body.message).toBe('pass_limit_reached');
    const listed = (await cmd('guest_access.list').run({ api }, {})).data.find((p) => p.id === made.data.id);
    expect(listed).toMatchObject({ state: 'exhausted', passes_count: 2 });
  });

  it('e-mails the pass to the guest: the page that shows its QR, its validity and its passes', async () => {
    const to = `guest-${uid()}@example.test`;
    const made = await cmd('guest_access.create').run({ api }, key([shared], { email: to }) as never);
    expect(made.data.email).toBe(to);
    await ts.server.context.jobs.drain();
    const mail = await smtp.next(to);
    expect(mail.subject).toBe('Your guest pass: Guest identifier');
    expect(mail.text).toContain(made.url);
    expect(mail.text).toContain('Valid from 2026-11-27 09:00 to 2026-11-27 18:00. Passes: 2.');
    // the QR code inline: an HTML part showing the image by its content id, the image a PNG that reads back
    // to the pass's value
    const image = mail.attachments.find((a) => a.cid === 'guest-pass-qr@lintel');
    expect(image).toMatchObject({ contentType: 'image/png', disposition: 'inline' });
    expect(mail.html).toContain('src="cid:guest-pass-qr@lintel"');
    expect(mail.html).toContain('alt="QR code of your guest pass"');
    expect(mail.html).toContain(made.url);
    expect(await readQr(image!.content)).toBe(made.data.value);
  });

  it('refuses an unknown, revoked or expired key and an unknown door with the catalogue codes, saying nothing more', async () => {
    const unknown = await info('x'.repeat(43));
    expect([unknown.status, unknown.body.message]).toEqual([422, 'invalid_identifier']);
    expect(Object.keys(unknown.body.data ?? {})).toEqual([]);

    const made = await cmd('guest_access.create').run({ api }, key([shared], { passLimit: 5 }) as never);
    const token = (await info(made.key_id)).body.devices[0].token as string;
    const wrongDoor = await open(made.key_id, 'not-a-door-token');
    expect([wrongDoor.status, wrongDoor.body.message]).toEqual([404, 'device_not_found']);
    // a token is the door's for this pass only
    const other = await cmd('guest_access.create').run({ api }, key([shared], { passLimit: 5 }) as never);
    expect((await open(other.key_id, token)).body.message).toBe('device_not_found');

    await cmd('identifier.revoke').run({ api }, { id: made.data.id });
    expect((await info(made.key_id)).body.message).toBe('invalid_identifier');
    expect((await open(made.key_id, token)).body.message).toBe('invalid_identifier');

    clock.set(Date.parse('2026-11-27T18:00:01Z'));
    expect((await info(other.key_id)).body.message).toBe('identifier_expired');
    clock.set(Date.parse('2026-11-27T10:00:00Z'));
  });

  it('opens only what the one decision allows: a prohibition on the door refuses', async () => {
    const gate = await panel();
    const allow = await rule([gate.id]);
    const made = await cmd('guest_access.create').run({ api }, key([allow], { passLimit: 9 }) as never);
    const token = (await info(made.key_id)).body.devices[0].token as string;
    const prohibit = (
      await cmd('access_rule.create').run({ api }, {
        name: `No guests ${uid()}`,
        devices: [gate.id],
        identifiers: [made.data.id],
        prohibition: true,
      } as never)
    ).data.id;
    expect((await open(made.key_id, token)).body.message).toBe('access_prohibited');
    expect(gate.sim.locks[1].opened).toBe(0);
    await cmd('access_rule.delete').run({ api }, { id: prohibit });
    expect((await open(made.key_id, token)).status).toBe(200);
    expect(gate.sim.locks[1].opened).toBe(1);
  });

  it("counts the page's openings at the panel too: a QR opened once from the page passes once more there, then is refused", async () => {
    const gate = await panel();
    const made = await cmd('guest_access.create').run({ api }, key([await rule([gate.id])]) as never);
    await sync();
    expect(gate.sim.identifiers.has(`identifier-${made.data.id}`)).toBe(true);
    const token = (await info(made.key_id)).body.devices[0].token as string;
    expect((await open(made.key_id, token)).body).toMatchObject({ opened: true, passes_count: 1 });
    await sync();
    gate.sim.setClock('2026-11-27T10:00:00Z');
    expect((await gate.sim.presentCard(made.data.value, 1, 'qr')).granted).toBe(true);
    expect(await gate.sim.presentCard(made.data.value, 1, 'qr')).toMatchObject({
      granted: false,
      reason: 'pass_limit_reached',
    });
    expect((await info(made.key_id)).body.message).toBe('pass_limit_reached');
    const listed = (await cmd('guest_access.list').run({ api }, {})).data.find((p) => p.id === made.data.id);
    expect(listed).toMatchObject({ state: 'exhausted', passes_count: 2 });
  });

  it('says device problem when the panel cannot be reached, and gives the pass back', async () => {
    const gate = await panel();
    const made = await cmd('guest_access.create').run({ api }, key([await rule([gate.id])]) as never);
    const token = (await info(made.key_id)).body.devices[0].token as string;
    await sql`update devices set status = 'offline' where id = ${gate.id}`.execute(ts.server.context.db);
    const r = await open(made.key_id, token);
    expect([r.status, r.body.message]).toEqual([502, 'device_problem']);
    expect((await info(made.key_id)).body.passes_count).toBe(0);
  });

  it('rate-limits opening per address', async () => {
    const made = await cmd('guest_access.create').run({ api }, key([shared], { passLimit: 50 }) as never);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await open(made.key_id, 'nothing-here')).status);
    expect(statuses.slice(0, 6).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(6)).toEqual([429, 429]);
  });

  it('rate-limits the Apple Wallet file per address (each is signed with RSA on a public route)', async () => {
    const made = await cmd('guest_access.create').run({ api }, key([shared]) as never);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await raw(ts, null, 'GET', `/guest-access/key/${made.key_id}/wallet-pass`)).status);
    // refused as not set up (409) until the address's limit, then 429 before anything is looked up
    expect(statuses).toEqual([409, 409, 409, 429, 429]);
  });

  it('keeps the pass within the groups limits, with the catalogue message, and only shareable rules', async () => {
    const g = await group(api, `Guests ${uid()}`, root, {
      guest_identifier_limits: { max_passes_count: 3, max_period_days: 1 },
    });
    const child = await group(api, `Flat ${uid()}`, g);
    const resident = await userWith(ts, api, {
      permissions: ['domains.own_guest_access'],
      domains: [child],
    });
    const client = await resident.client();
    const mine = await rule([door.id], { domains: [child] });
    const theirs = await rule([door.id]);
    const notShared = await rule([door.id], { domains: [child], is_shareable: false });
    const offered = (await cmd('guest_access.access_rules').run({ api: client }, {})).data.map((r) => r.id);
    expect(offered).toContain(mine);
    expect(offered).not.toContain(theirs);
    expect(offered).not.toContain(notShared);

    const tooMany = await failure(
      cmd('guest_access.create').run({ api: client }, key([mine], { passLimit: 4 }) as never),
    );
    expect([tooMany.status, tooMany.message, tooMany.data]).toEqual([
      422,
      'guest_limits_exceeded',
      { max_count: 3, max_days: 1 },
    ]);
    const tooLong = await failure(
      cmd('guest_access.create').run(
        { api: client },
        key([mine], { validatePeriod: period('2026-11-27T09:00:00', '2026-11-29T09:00:00') }) as never,
      ),
    );
    expect(tooLong.message).toBe('guest_limits_exceeded');
    const unlimited = await failure(
      cmd('guest_access.create').run({ api: client }, key([mine], { restrictPassCount: false }) as never),
    );
    expect(unlimited.message).toBe('guest_limits_exceeded');
    const foreign = await failure(cmd('guest_access.create').run({ api: client }, key([theirs]) as never));
    expect(foreign.message).toBe('check_fields_data');

    const made = await cmd('guest_access.create').run(
      { api: client },
      key([mine], { passLimit: 3 }) as never,
    );
    expect(made.data.created_by_user?.id).toBe(resident.id);
    // a change is held to the same limits
    const more = await failure(
      cmd('guest_access.update').run({ api: client }, { id: made.data.id, passLimit: 10 } as never),
    );
    expect(more.message).toBe('guest_limits_exceeded');
    const renamed = await cmd('guest_access.update').run({ api: client }, {
      id: made.data.id,
      name: 'Plumber',
      passLimit: 1,
    } as never);
    expect(renamed.data).toMatchObject({ name: 'Plumber', pass_limit: 1 });
    // the resident sees his own passes only; another's is not his to change
    const seen = (await cmd('guest_access.list').run({ api: client }, {})).data.map((p) => p.id);
    expect(seen).toEqual([made.data.id]);
    const adminPass = (await cmd('guest_access.list').run({ api }, {})).data.find(
      (p) => p.id !== made.data.id,
    )!;
    const notHis = await failure(cmd('guest_access.delete').run({ api: client }, { id: adminPass.id }));
    expect(notHis.message).toBe('item_not_found');
  });

  it('refuses the form to a user without the permissions', async () => {
    const nobody = await userWith(ts, api, { permissions: ['identifiers.view_all'], domains: [root] });
    const e = await failure(
      cmd('guest_access.create').run({ api: await nobody.client() }, key([shared]) as never),
    );
    expect(e.status).toBe(403);
  });

  it('asks for a validity: a pass without an end is refused', async () => {
    const e = await failure(
      cmd('guest_access.create').run({ api }, key([shared], { restrictPeriod: false }) as never),
    );
    expect([e.message, e.data]).toEqual([
      'check_fields_data',
      { fields: [{ field: 'validatePeriod', rule: 'required' }] },
    ]);
  });

  it('deletes a pass by its job once its validity ended, and not before', async () => {
    clock.set(Date.parse('2026-11-28T08:00:00Z'));
    const made = await cmd('guest_access.create').run(
      { api },
      key([shared], { validatePeriod: period('2026-11-28T09:00:00', '2026-11-28T12:00:00') }) as never,
    );
    const jobs = ts.server.context.jobs;
    const exists = async () =>
      (await sql`select 1 from identifiers where id = ${made.data.id}`.execute(ts.server.context.db)).rows
        .length === 1;
    // moved later before it ended: the first job finds it still valid and waits for the new end
    await cmd('guest_access.update').run({ api }, {
      id: made.data.id,
      validatePeriod: period('2026-11-28T09:00:00', '2026-11-28T14:00:00'),
    } as never);
    clock.set(Date.parse('2026-11-28T12:00:01Z'));
    await jobs.drain();
    expect(await exists()).toBe(true);
    expect((await info(made.key_id)).status).toBe(200);
    clock.set(Date.parse('2026-11-28T14:00:01Z'));
    await jobs.drain();
    expect(await exists()).toBe(false);
    expect((await info(made.key_id)).body.message).toBe('invalid_identifier');
    const gone = await sql<{
      n: number;
    }>`select count(*)::int as n from guest_passes where identifier_id = ${made.data.id}`.execute(
      ts.server.context.db,
    );
    expect(gone.rows[0]!.n).toBe(0);
  });
});
