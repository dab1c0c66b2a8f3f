/**
 * Backups of access control (the `access` set): identifiers, access rules and their relations, schedules,
 * holidays and their groups, anti-passback areas, a guest pass and the devices' pass counts are made, changed,
 * applied back, every row equal; the guest's link opens its page again (the key's hash came back); the
 * project is planned again after an apply that changed nothing; access control applied without the users it
 * names is refused and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
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
import { projectRows, waitReady } from '../support/backups';
import { backupsDir } from '../../apps/server/src/backup/service';
import { TABLES } from '../../apps/server/src/backup/format';

const clock = new ManualClock(Date.parse('2026-11-27T08:00:00Z'));
let ts: TestServer;
let api: ApiClient;
const cmd = getCommand;

beforeAll(async () => {
  // the planner polls only when asked: the rows it would take stay to be seen
  ts = await startTestServer({ config: { clock, accessSync: { pollMs: 0 } } });
  api = await admin(ts);
  await licence(ts, everyFeatureOn());
});
afterAll(async () => {
  const dir = ts && backupsDir(ts.server.context.config);
  await ts?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const db = () => ts.server.context.db;
const page = (key: string) => raw(ts, null, 'GET', `/guest-access/key/${key}`);
const changes = async () =>
  (
    await sql<{ n: number }>`select count(*)::int as n from access_sync_changes where project_id = 1`.execute(
      db(),
    )
  ).rows[0]!.n;

async function device(domain: number): Promise<number> {
  const serial = `BK-${uid()}`;
  return (
    await cmd('device.create').run(
      { api },
      {
        name: `Door ${serial}`,
        type: 'panel',
        serial_number: serial,
        domain_id: domain,
        protocol: 'mqtt',
        device_login: 'admin',
        device_password: 'panel-secret',
      },
    )
  ).data.id;
}

describe('backups of access control', () => {
  let backupId: number;
  let before: Record<string, unknown[]>;
  let keyId: string;
  let passId: number;
  let owner: number;
  let card: number;
  let rule: number;
  let area: number;
  let doors: number[];

  it('makes a backup holding every access-control table', async () => {
    const root = await rootGroup(api);
    const block = await group(api, `Block ${uid()}`, root);
    owner = (await userWith(ts, api, { permissions: [], domains: [block], name: 'Card owner' })).id;
    doors = [await device(root), await device(block)];
    const schedule = (
      await cmd('schedule.create').run({ api }, {
        name: 'Weekdays',
        valid_from: '2026-01-01',
        repeat_days: ['mon', 'tue'],
        time_from: 28800,
      } as never)
    ).data.id;
    await cmd('holiday.create').run({ api }, {
      name: 'New Year',
      date: '2027-01-01',
      domains: [block],
    } as never);
    card = (await cmd('identifier.create').run({ api }, { type: 'card', value: '123456', owner } as never))
      .data.id;
    const limited = (
      await cmd('identifier.create').run({ api }, {
        type: 'card',
        value: '654321',
        owner,
        passes_restrict_active: true,
        passes_restrict_max_count: 5,
      } as never)
    ).data.id;
    rule = (
      await cmd('access_rule.create').run({ api }, {
        name: 'Residents',
        devices: doors,
        time_rules: [schedule],
        users: [owner],
        identifiers: [card],
        domains: [block],
        is_shareable: true,
      } as never)
    ).data.id;
    await cmd('access_rule.create').run({ api }, {
      name: 'Not the back door',
      devices: [doors[1]],
      identifiers: [limited],
      prohibition: true,
    } as never);
    area = (
      await cmd('access_area.create').run({ api }, {
        name: 'Lobby',
        entry_devices: [doors[0]],
        exit_devices: [doors[1]],
        reset_after_min: 60,
      } as never)
    ).data.id;
    const pass = await cmd('guest_access.create').run({ api }, {
      selectedAccessRules: [rule],
      restrictPeriod: true,
      validatePeriod: {
        from: '2026-11-27T07:00:00',
        to: '2026-11-28T18:00:00',
        from_u: '2026-11-27T07:00:00Z',
        to_u: '2026-11-28T18:00:00Z',
      },
      restrictPassCount: true,
      passLimit: 3,
    } as never);
    keyId = pass.key_id;
    passId = pass.data.id;
    // passes the devices counted (as the ACS log writes them)
    await sql`update identifiers set passes_count = 2 where id = ${limited}`.execute(db());
    await sql`insert into identifier_device_passes (identifier_id, device_id, passes)
      values (${limited}, ${doors[0]}, 1), (${limited}, ${doors[1]}, 1)`.execute(db());

    before = await projectRows(db(), 1);
    for (const t of TABLES.filter((x) => x.set === 'access'))
      expect(before[t.name]!.length, t.name).toBeGreaterThan(0);
    expect((await page(keyId)).status).toBe(200);

    const made = await cmd('backup.make').run({ api }, { name: 'with access' });
    const ready = await waitReady(api, made.data.id);
    backupId = ready.id;
    expect(ready.entities).toContain('access');
    expect(ready.tables.identifiers).toBe(before.identifiers!.length);
    expect(ready.tables.guest_passes).toBe(1);
    expect(ready.tables.identifier_device_passes).toBe(2);
  });

  it('applies it back over changes: every row equal, the guest link opens its page again', async () => {
    await cmd('guest_access.delete').run({ api }, { id: passId });
    expect((await page(keyId)).body.message).toBe('invalid_identifier');
    await cmd('identifier.delete').run({ api }, { id: card });
    await cmd('access_rule.update').run({ api }, { id: rule, name: 'Renamed', devices: [doors[0]] } as never);
    await cmd('access_area.update').run({ api }, {
      id: area,
      reset_after_min: null,
      exit_devices: [],
    } as never);
    const holiday = (await cmd('holiday.list').run({ api }, {})).data[0]!;
    await cmd('holiday.delete').run({ api }, { id: holiday.id });
    await cmd('identifier.create').run({ api }, { type: 'card', value: '999', owner } as never);
    await sql`update identifier_device_passes set passes = 0`.execute(db());
    expect(await projectRows(db(), 1)).not.toEqual(before);

    const applied = await cmd('backup.apply').run({ api }, { id: backupId });
    expect(applied.entities).toContain('access');
    expect(await projectRows(db(), 1)).toEqual(before);
    const shown = await page(keyId);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ pass_limit: 3, devices: [{}, {}] });
  });

  it('asks the access sync to plan the project again, even when no row changed', async () => {
    await sql`delete from access_sync_changes`.execute(db());
    await cmd('backup.apply').run({ api }, { id: backupId, entities: ['access'] });
    expect(await projectRows(db(), 1)).toEqual(before);
    expect(await changes()).toBeGreaterThan(0);
    const planned = await ts.server.context.accessSync.poll();
    expect(planned.map((o) => o.changes).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(await changes()).toBe(0);
  });

  it('refuses access control naming users the project lacks, changing nothing', async () => {
    await cmd('user.delete').run({ api }, { id: owner });
    const now = await projectRows(db(), 1);
    // the owner's identifiers went with him
    expect(now.identifiers!.length).toBeLessThan(before.identifiers!.length);
    const e = await failure(cmd('backup.apply').run({ api }, { id: backupId, entities: ['access'] }));
    expect(e.code).toBe('invalid_related_entity');
    expect(e.data).toMatchObject({ table: 'identifiers', column: 'owner', references: 'users' });
    expect(await projectRows(db(), 1)).toEqual(now);
    // with the users it names, it applies whole
    await cmd('backup.apply').run({ api }, { id: backupId, entities: ['users', 'access'] });
    expect(await projectRows(db(), 1)).toEqual(before);
  });
});
