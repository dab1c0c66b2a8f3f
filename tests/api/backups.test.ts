/**
 * Backups (issue 24 item 1): make → download → junk refused with the catalogue code and nothing changed →
 * apply restores a deleted user exactly; apply from an uploaded file; the schedule and its retention by the
 * server's clock; delete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import JSZip from 'jszip';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, group, rootGroup, secondProject, tokenOf, userWith } from '../support/fixtures';
import { copyRows, olderFormat, projectRows, waitReady } from '../support/backups';
import { backupsDir } from '../../apps/server/src/backup/service';

let ts: TestServer;
let api: ApiClient;
const clock = new ManualClock();

beforeAll(async () => {
  ts = await startTestServer({ config: { clock, accessTtlS: 30 * 86400 } });
  api = await admin(ts);
});
afterAll(async () => {
  const dir = ts && backupsDir(ts.server.context.config);
  await ts?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function download(id: number): Promise<Buffer> {
  const res = await fetch(`${ts.url}/api/v0/backups/${id}/download`, {
    headers: { authorization: `Bearer ${tokenOf(api)}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/zip');
  return Buffer.from(await res.arrayBuffer());
}

const applyFile = (bytes: Uint8Array, name = 'backup.zip') =>
  getCommand('backup.apply_file').run({ api }, { file: new File([new Uint8Array(bytes)], name) });

describe('backups', () => {
  let backupId: number;
  let zip: Buffer;
  /** the same backup as a file of format 3 (NDJSON) would hold it */
  let format3: Uint8Array;
  let before: Record<string, unknown[]>;
  let victim: number;

  it('makes a backup of every entity set by a job, as a zip of documented files', async () => {
    const root = await rootGroup(api);
    const child = await group(api, 'Backup child', root);
    await getCommand('marker.create').run({ api }, { name: 'Backup marker', color: '#112233' });
    for (let i = 0; i < 5; i++)
      await userWith(ts, api, { permissions: ['users.view'], domains: [i % 2 ? root : child] });
    victim = (await userWith(ts, api, { permissions: ['users.view'], domains: [child], name: 'Victim' })).id;
    before = await projectRows(ts.server.context.db, 1);

    const made = await getCommand('backup.make').run({ api }, { name: 'first' });
    expect(made.data.state).toBe('making');
    const ready = await waitReady(api, made.data.id);
    backupId = ready.id;
    expect(ready.entities).toContain('users');
    expect(ready.tables.users).toBe(before.users!.length);
    const list = await getCommand('backup.list').run({ api }, {});
    expect(list.data.map((b) => b.id)).toContain(backupId);

    zip = await download(backupId);
    expect(zip.length).toBe(ready.size);
    // read by a zip reader that is not the server's
    const z = await JSZip.loadAsync(zip);
    const manifest = JSON.parse(await z.file('manifest.json')!.async('string'));
    expect(manifest).toMatchObject({ format: 'lintel-backup', format_version: 4, name: 'first' });
    expect(manifest.source.database).toBe(process.env.DATABASE_URL ? 'postgres' : 'pglite');
    const users = manifest.tables.find((t: { name: string }) => t.name === 'users');
    expect(users.rows).toBe(before.users!.length);
    expect(users.file).toBe('tables/users.copy');
    // COPY text: a line a row, the manifest's columns, new lines and backslashes in values escaped
    const rows = copyRows(await z.file('tables/users.copy')!.async('string'), users.columns);
    expect(rows.length).toBe(before.users!.length);
    expect(rows.map((r) => Number(r.id)).sort()).toEqual(
      (before.users as { id: number }[]).map((u) => u.id).sort(),
    );
    const victimRow = rows.find((r) => Number(r.id) === victim)!;
    expect(victimRow.name).toBe('Victim');
    expect(victimRow.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00$/);
    format3 = await olderFormat(ts.server.context.db, zip, 3);
  });

  it('refuses junk, a newer format and a broken row with "invalid backup image", changing nothing', async () => {
    const now = await projectRows(ts.server.context.db, 1);
    const text = await failure(applyFile(new TextEncoder().encode('this is not a backup\n')));
    expect(text.code).toBe('invalid_backup_image');
    const noise = await failure(applyFile(new Uint8Array(4096).map((_, i) => (i * 7919) % 251)));
    expect(noise.code).toBe('invalid_backup_image');

    const z = await JSZip.loadAsync(zip);
    const manifest = JSON.parse(await z.file('manifest.json')!.async('string'));
    const newer = await JSZip.loadAsync(zip);
    newer.file('manifest.json', JSON.stringify({ ...manifest, format_version: 99 }));
    const e1 = await failure(applyFile(await newer.generateAsync({ type: 'uint8array' })));
    expect(e1.code).toBe('invalid_backup_image');
    expect(e1.data).toMatchObject({ reason: 'newer_format' });

    // a zip that is not a backup at all
    const other = new JSZip();
    other.file('hello.txt', 'hi');
    expect((await failure(applyFile(await other.generateAsync({ type: 'uint8array' })))).code).toBe(
      'invalid_backup_image',
    );

    // a broken line in the last table: the tables before it were loaded, and are rolled back
    const broken = await JSZip.loadAsync(zip);
    const markersFile = await broken.file('tables/user_markers.copy')!.async('string');
    broken.file('tables/user_markers.copy', markersFile + '1\tnot a number\n');
    const lastTable = manifest.tables.find((t: { name: string }) => t.name === 'user_markers');
    lastTable.rows += 1;
    broken.file('manifest.json', JSON.stringify(manifest));
    await getCommand('user.delete').run({ api }, { id: victim });
    const afterDelete = await projectRows(ts.server.context.db, 1);
    const e2 = await failure(applyFile(await broken.generateAsync({ type: 'uint8array' })));
    expect(e2.code).toBe('invalid_backup_image');
    expect(e2.data).toMatchObject({ reason: 'bad_row', table: 'user_markers' });
    expect(await projectRows(ts.server.context.db, 1)).toEqual(afterDelete);
    expect(afterDelete.users!.length).toBe(now.users!.length - 1);
    // a line of the wrong number of values, and a file that holds fewer rows than its manifest says
    const short = await JSZip.loadAsync(zip);
    short.file('tables/user_markers.copy', markersFile + '1\n');
    short.file('manifest.json', JSON.stringify(manifest));
    expect((await failure(applyFile(await short.generateAsync({ type: 'uint8array' })))).data).toMatchObject({
      reason: 'bad_row',
    });
    const fewer = await JSZip.loadAsync(zip);
    fewer.file('manifest.json', JSON.stringify(manifest));
    expect((await failure(applyFile(await fewer.generateAsync({ type: 'uint8array' })))).data).toMatchObject({
      reason: 'row_count',
      table: 'user_markers',
    });
    // of format 3: a line that is not JSON
    const old = await JSZip.loadAsync(format3);
    const oldManifest = JSON.parse(await old.file('manifest.json')!.async('string'));
    old.file(
      'tables/user_markers.ndjson',
      (await old.file('tables/user_markers.ndjson')!.async('string')) + '{"user_id": 1, "marker_id"\n',
    );
    oldManifest.tables.find((t: { name: string }) => t.name === 'user_markers').rows += 1;
    old.file('manifest.json', JSON.stringify(oldManifest));
    const e3 = await failure(applyFile(await old.generateAsync({ type: 'uint8array' })));
    expect(e3.code).toBe('invalid_backup_image');
    expect(await projectRows(ts.server.context.db, 1)).toEqual(afterDelete);
  });

  it('applies a backup of format 3 (NDJSON tables) as before', async () => {
    const applied = await applyFile(format3);
    expect(applied.rows).toBeGreaterThan(0);
    expect(await projectRows(ts.server.context.db, 1)).toEqual(before);
    await getCommand('user.delete').run({ api }, { id: victim });
  });

  it('applies the stored backup: the deleted user is back exactly, later changes are undone', async () => {
    await userWith(ts, api, { permissions: ['users.view'], domains: [await rootGroup(api)], name: 'Later' });
    const applied = await getCommand('backup.apply').run({ api }, { id: backupId });
    expect(applied.entities).toContain('users');
    expect(await projectRows(ts.server.context.db, 1)).toEqual(before);
    // the caller's session survived (its user is in the backup)
    const got = await getCommand('user.get').run({ api }, { id: victim });
    expect(got.name).toBe('Victim');
    // a new row after the apply gets a fresh id past the restored ones
    const again = await userWith(ts, api, { permissions: ['users.view'], domains: [await rootGroup(api)] });
    expect(again.id).toBeGreaterThan(Math.max(...(before.users as { id: number }[]).map((u) => u.id)));
  });

  it('applies an uploaded file, only the sets asked for', async () => {
    await getCommand('user.delete').run({ api }, { id: victim });
    const applied = await getCommand('backup.apply_file').run(
      { api },
      { file: new File([new Uint8Array(zip)], 'b.zip'), entities: 'users' },
    );
    expect(applied.entities).toEqual(['users']);
    const rows = await projectRows(ts.server.context.db, 1);
    expect(rows.users!.map((u) => (u as { id: number }).id)).toContain(victim);
  });

  it('makes backups on a schedule, keeping the newest ones', async () => {
    const s = await getCommand('backup.schedule_set').run(
      { api },
      { enabled: true, every_hours: 1, keep: 2, entities: ['roles', 'groups'] },
    );
    expect(s.data.next_run_at).not.toBeNull();
    for (let i = 0; i < 3; i++) {
      clock.advance(3_600_000);
      // the instance's own workers may hold a job of the run: wait for them too
      await ts.server.context.jobs.drain();
      await ts.server.context.jobs.idle();
      await ts.server.context.jobs.drain();
    }
    const list = (await getCommand('backup.list').run({ api }, {})).data.filter((b) => b.scheduled);
    expect(list.length).toBe(2);
    expect(list.every((b) => b.state === 'ready')).toBe(true);
    expect(list[0]!.entities).toEqual(['groups', 'roles']);
    await getCommand('backup.schedule_set').run({ api }, { enabled: false });
    expect((await getCommand('backup.schedule_get').run({ api }, {})).data.next_run_at).toBeNull();
  });

  it('applies a file only with backups.apply_from_file', async () => {
    const root = await rootGroup(api);
    const applier = await (
      await userWith(ts, api, { permissions: ['backups.apply'], domains: [root] })
    ).client();
    const e = await failure(
      getCommand('backup.apply_file').run(
        { api: applier },
        { file: new File([new Uint8Array(zip)], 'b.zip') },
      ),
    );
    expect(e.code).toBe('method_prohibited');
    const fromFile = await (
      await userWith(ts, api, { permissions: ['backups.apply_from_file'], domains: [root] })
    ).client();
    const ok = await getCommand('backup.apply_file').run(
      { api: fromFile },
      { file: new File([new Uint8Array(zip)], 'b.zip'), entities: 'markers' },
    );
    expect(ok.entities).toEqual(['markers']);
  });

  it("holds only the project's rows when another project shares the server (its links too)", async () => {
    // alone on the server, a project's link tables are read whole; beside another, through their users
    await secondProject(ts);
    const mine = await projectRows(ts.server.context.db, 1);
    const made = await getCommand('backup.make').run({ api }, { name: 'beside another' });
    const ready = await waitReady(api, made.data.id);
    const z = await JSZip.loadAsync(await download(ready.id));
    const manifest = JSON.parse(await z.file('manifest.json')!.async('string'));
    const columnsOf = (name: string) =>
      manifest.tables.find((t: { name: string }) => t.name === name).columns;
    const links = copyRows(
      await z.file('tables/user_domains.copy')!.async('string'),
      columnsOf('user_domains'),
    );
    expect(links.length).toBe(mine.user_domains!.length);
    const users = new Set((mine.users as { id: number }[]).map((u) => u.id));
    expect(links.every((l) => users.has(Number(l.user_id)))).toBe(true);
    expect(ready.tables.user_domains).toBe(mine.user_domains!.length);
    await getCommand('backup.delete').run({ api }, { id: ready.id });
  });

  it('deletes a backup and its file', async () => {
    await getCommand('backup.delete').run({ api }, { id: backupId });
    const list = await getCommand('backup.list').run({ api }, {});
    expect(list.data.map((b) => b.id)).not.toContain(backupId);
    expect((await failure(getCommand('backup.apply').run({ api }, { id: backupId }))).code).toBe(
      'item_not_found',
    );
  });
});
