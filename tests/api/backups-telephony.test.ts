/**
 * Backups of telephony (forward rules and the numbers following them, SIP trunks and their groups) and of
 * administration (mail templates, webhooks, integrations): made, changed, applied back, every row equal; a trunk comes back
 * with its password (what Kamailio presents to the provider) which the API still never returns, and the SIP
 * service is told; a set naming a group the project lacks is refused with invalid_related_entity and changes
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import JSZip from 'jszip';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import { DUMMY_PASSWORD, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, failure, group, licence, rootGroup, tokenOf, uid } from '../support/fixtures';
import { copyRows, projectRows, waitReady } from '../support/backups';
import { backupsDir } from '../../apps/server/src/backup/service';
import { TABLES } from '../../apps/server/src/backup/format';

let ts: TestServer;
let api: ApiClient;
const cmd = getCommand;
const TRUNK_SECRET = `trunk-${uid()}`;
const HOOK_SECRET = `hook-secret-of-the-test-${uid()}`;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  await licence(ts, everyFeatureOn());
});
afterAll(async () => {
  const dir = ts && backupsDir(ts.server.context.config);
  await ts?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const db = () => ts.server.context.db;
const trunkEvents = async () =>
  (
    await sql<{
      n: number;
    }>`select count(*)::int as n from event_outbox where type = 'SipTrunkChangedEvent'`.execute(db())
  ).rows[0]!.n;
const SETS = ['telephony', 'administration'] as const;

describe('backups of telephony and administration', () => {
  let backupId: number;
  let before: Record<string, unknown[]>;
  let block: number;
  let trunk: number;
  let rule: number;
  let template: number;
  let hook: number;
  let integration: number;

  it('makes a backup holding every telephony and administration table, the trunk with its password', async () => {
    const root = await rootGroup(api);
    block = await group(api, `Block ${uid()}`, root);
    const number = String(300000 + Math.floor(Math.random() * 600000));
    const desk = (await cmd('sip_number.create').run({ api }, { number, name: 'Desk', domain_id: root })).data
      .id;
    rule = (
      await cmd('forward_rule.create').run({ api }, {
        name: `Night ${uid()}`,
        domain_id: root,
        numbers: [String(Number(number) + 1)],
        days: ['sat', 'sun'],
      } as never)
    ).data.id;
    await cmd('sip_number.update').run({ api }, {
      id: desk,
      forward_mode: 'manual',
      forward_rules: [rule],
    } as never);
    trunk = (
      await cmd('sip_trunk.create').run(
        { api },
        {
          name: `Provider ${uid()}`,
          outgoing_number: number,
          termination_uri: 'sip:203.0.113.5:5060',
          login: 'lintel',
          password: TRUNK_SECRET,
          groups: [block],
        },
      )
    ).data.id;
    template = (
      await cmd('mail_template.create').run({ api }, {
        mail_type_id: 'invitation',
        domain_id: block,
        subject: 'Welcome to the block',
        body: 'Hello {{name}}, open {{link}}',
      } as never)
    ).data.id;
    hook = (
      await cmd('webhook.create').run(
        { api },
        { name: `Hook ${uid()}`, url: 'https://hooks.example.test/lintel', secret: HOOK_SECRET },
      )
    ).data.id;
    integration = (
      await cmd('integration.create').run(
        { api },
        {
          name: `VMS ${uid()}`,
          domain_id: block,
          domains: [block],
          axxon_one_settings: {
            server_url: 'https://vms.example.test',
            login: 'root',
            password: 'axxon-secret',
          },
        },
      )
    ).data.id;

    before = await projectRows(db(), 1);
    for (const t of TABLES.filter((x) => (SETS as readonly string[]).includes(x.set)))
      expect(before[t.name]!.length, t.name).toBeGreaterThan(0);

    const made = await cmd('backup.make').run({ api }, { name: 'telephony' });
    const ready = await waitReady(api, made.data.id);
    backupId = ready.id;
    expect(ready.entities).toEqual(expect.arrayContaining([...SETS]));
    expect(ready.tables).toMatchObject({
      sip_trunks: 1,
      sip_trunk_groups: 1,
      mail_templates: 1,
      webhooks: 1,
      integrations: 1,
      integration_domains: 1,
    });
    // the file carries the secrets (it is what restores them); what the API says of the backup does not
    const res = await fetch(`${ts.url}/api/v0/backups/${backupId}/download`, {
      headers: { authorization: `Bearer ${tokenOf(api)}` },
    });
    const z = await JSZip.loadAsync(Buffer.from(await res.arrayBuffer()));
    const trunks = JSON.parse(await z.file('manifest.json')!.async('string')).tables.find(
      (t: { name: string }) => t.name === 'sip_trunks',
    );
    expect(
      copyRows(await z.file('tables/sip_trunks.copy')!.async('string'), trunks.columns)[0]!.password,
    ).toBe(TRUNK_SECRET);
    expect(JSON.stringify(await cmd('backup.list').run({ api }, {}))).not.toContain(TRUNK_SECRET);
  });

  it('applies it back over changes: every row equal, the trunk works with its password, the SIP service told', async () => {
    await cmd('sip_trunk.delete').run({ api }, { id: trunk });
    await cmd('forward_rule.delete').run({ api }, { id: rule });
    await cmd('mail_template.update').run({ api }, { id: template, subject: 'Changed' } as never);
    await cmd('webhook.delete').run({ api }, { id: hook });
    await cmd('integration.delete').run({ api }, { id: integration });
    await cmd('webhook.create').run(
      { api },
      { name: `Later ${uid()}`, url: 'https://hooks.example.test/later', secret: 'later-secret-of-the-test' },
    );
    expect(await projectRows(db(), 1)).not.toEqual(before);
    const events = await trunkEvents();

    const applied = await cmd('backup.apply').run({ api }, { id: backupId, entities: [...SETS] });
    expect(applied.entities).toEqual([...SETS]);
    expect(JSON.stringify(applied)).not.toContain(TRUNK_SECRET);
    expect(await projectRows(db(), 1)).toEqual(before);
    const stored = await sql<{
      password: string;
    }>`select password from sip_trunks where id = ${trunk}`.execute(db());
    expect(stored.rows[0]!.password).toBe(TRUNK_SECRET);
    expect((await cmd('sip_trunk.get').run({ api }, { id: trunk })).password).toBe(DUMMY_PASSWORD);
    expect(await trunkEvents()).toBe(events + 1);
    // the restored webhook signs with its secret, and starts at the outbox's last event (the server's)
    const w = await sql<{ secret: string; from_event_id: string }>`select secret, from_event_id::text
      from webhooks where id = ${hook}`.execute(db());
    expect(w.rows[0]!.secret).toBe(HOOK_SECRET);
    const last = await sql<{ id: string }>`select coalesce(max(id), 0)::text as id from event_outbox`.execute(
      db(),
    );
    expect(Number(w.rows[0]!.from_event_id)).toBeGreaterThan(0);
    expect(Number(w.rows[0]!.from_event_id)).toBeLessThanOrEqual(Number(last.rows[0]!.id));
    // nothing of the apply's record holds a secret
    const audit = await sql<{
      data: unknown;
    }>`select data from audit_events where action = 'backup_applied'`.execute(db());
    expect(JSON.stringify(audit.rows)).not.toContain(TRUNK_SECRET);
  });

  it('refuses sets naming a group the project lacks, changing nothing', async () => {
    await sql`delete from domains where id = ${block}`.execute(db());
    const now = await projectRows(db(), 1);
    const e = await failure(cmd('backup.apply').run({ api }, { id: backupId, entities: ['telephony'] }));
    expect(e.code).toBe('invalid_related_entity');
    expect(e.data).toMatchObject({ table: 'sip_trunk_groups', column: 'domain_id', references: 'domains' });
    expect(JSON.stringify(e)).not.toContain(TRUNK_SECRET);
    const e2 = await failure(
      cmd('backup.apply').run({ api }, { id: backupId, entities: ['administration'] }),
    );
    expect(e2.code).toBe('invalid_related_entity');
    expect(e2.data).toMatchObject({ table: 'mail_templates', column: 'domain_id', references: 'domains' });
    expect(await projectRows(db(), 1)).toEqual(now);
    // with the groups they name, they apply whole
    await cmd('backup.apply').run({ api }, { id: backupId, entities: ['groups', ...SETS] });
    expect(await projectRows(db(), 1)).toEqual(before);
  });
});
