/**
 * Backups carry the stored files their rows name (format 2): a face identifier's photo and a user's avatar go
 * into the zip beside the rows and come back with them — a photo removed from storage and an avatar deleted
 * read back byte for byte once the backup is applied. A file of format 1 (rows only) still applies; a photo
 * whose bytes are not its name, or a zip holding other files than its manifest counts, is refused and changes
 * nothing, not even the storage folder. The daily sweep of unnamed files keeps what an apply restored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { Jimp } from 'jimp';
import { downloadFile, getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { sweepStorage } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, everyFeatureOn, failure, licence, rootGroup, tokenOf, userWith } from '../support/fixtures';
import { olderFormat, projectRows, waitReady } from '../support/backups';
import { backupsDir } from '../../apps/server/src/backup/service';

let ts: TestServer;
let api: ApiClient;
const cmd = getCommand;

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  // a group's white-label logo needs the white-label licence
  await licence(ts, everyFeatureOn());
});
afterAll(async () => {
  const dir = ts && backupsDir(ts.server.context.config);
  await ts?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const stored = (...parts: string[]) => path.join(ts.server.context.config.storageDir, ...parts);
const db = () => ts.server.context.db;

/** A 400×300 PNG of two colours. */
async function picture(left: number, right: number): Promise<Blob> {
  const img = new Jimp({ width: 400, height: 300, color: left });
  img.scan(200, 0, 200, 300, (_x, _y, idx) => {
    img.bitmap.data.writeUInt32BE(right, idx);
  });
  return new Blob([new Uint8Array(await img.getBuffer('image/png'))], { type: 'image/png' });
}

async function download(id: number): Promise<Buffer> {
  const res = await fetch(`${ts.url}/api/v0/backups/${id}/download`, {
    headers: { authorization: `Bearer ${tokenOf(api)}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const applyZip = async (z: JSZip) =>
  cmd('backup.apply_file').run(
    { api },
    { file: new File([new Uint8Array(await z.generateAsync({ type: 'uint8array' }))], 'b.zip') },
  );

const avatarOf = async (url: string) => {
  const res = await fetch(`${ts.url}${url}`);
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
};

describe('files in backups', () => {
  let zip: Buffer;
  /** the same backup as a file of format 1 (NDJSON rows, no files) would hold it */
  let format1: Uint8Array;
  let face: { id: number; sha256: string; bytes: Uint8Array };
  let avatar: { user: number; url: string; bytes: Uint8Array };
  let logos: { project: string; group: string; projectBytes: Uint8Array; groupBytes: Uint8Array };
  let root: number;
  let before: Record<string, unknown[]>;

  it('puts face photos and avatars into the zip beside the rows', async () => {
    const ident = (await cmd('identifier.create').run({ api }, { type: 'face', name: 'Face' } as never)).data;
    const up = await cmd('identifier.photo_upload').run(
      { api },
      { id: ident.id, image: await picture(0xff0000ff, 0x00ff00ff) },
    );
    const photo = await downloadFile({ api }, cmd('identifier.photo'), { id: ident.id });
    face = { id: ident.id, sha256: up.photo_sha256, bytes: new Uint8Array(photo.bytes) };
    const user = (await userWith(ts, api, { permissions: [], domains: [await rootGroup(api)] })).id;
    const { avatar_url } = await cmd('user.avatar_upload').run(
      { api },
      { id: user, image: await picture(0x0000ffff, 0xffff00ff), x: 150, y: 50, size: 100 },
    );
    avatar = { user, url: avatar_url!, bytes: (await avatarOf(avatar_url!)).bytes };
    root = await rootGroup(api);
    const project = (
      await cmd('settings.whitelabel_logo_upload').run({ api }, { image: await picture(0xff, 0xffffffff) })
    ).data.logo!;
    const group = (
      await cmd('group.whitelabel_logo_upload').run(
        { api },
        { id: root, image: await picture(0x00ff00ff, 0xff) },
      )
    ).data.logo!;
    logos = {
      project,
      group,
      projectBytes: (await avatarOf(project)).bytes,
      groupBytes: (await avatarOf(group)).bytes,
    };
    before = await projectRows(db(), 1);

    const made = await cmd('backup.make').run({ api }, { name: 'with files' });
    const ready = await waitReady(api, made.data.id);
    expect(ready.format_version).toBe(4);
    zip = await download(ready.id);
    format1 = await olderFormat(db(), zip, 1);
    const z = await JSZip.loadAsync(zip);
    const manifest = JSON.parse(await z.file('manifest.json')!.async('string'));
    expect(manifest.format_version).toBe(4);
    expect(manifest.files).toEqual([
      { kind: 'avatars', set: 'users', count: 1, bytes: avatar.bytes.length },
      { kind: 'faces', set: 'access', count: 1, bytes: face.bytes.length },
      { kind: 'logos', set: 'settings', count: 1, bytes: logos.projectBytes.length },
      { kind: 'group_logos', set: 'groups', count: 1, bytes: logos.groupBytes.length },
    ]);
    expect(await z.file(`files/logos/${path.basename(logos.project)}`)!.async('uint8array')).toEqual(
      logos.projectBytes,
    );
    expect(await z.file(`files/group_logos/${path.basename(logos.group)}`)!.async('uint8array')).toEqual(
      logos.groupBytes,
    );
    const inZip = await z.file(`files/faces/${face.sha256}.jpg`)!.async('uint8array');
    expect(sha(inZip)).toBe(face.sha256);
    const avatarName = path.basename(avatar.url);
    expect(await z.file(`files/avatars/${avatarName}`)!.async('uint8array')).toEqual(avatar.bytes);
  });

  it("restores a deleted identifier's photo and a deleted avatar that storage no longer holds", async () => {
    await cmd('identifier.delete').run({ api }, { id: face.id });
    // what the daily sweep does to a photo no identifier names (and what a new server never had)
    fs.rmSync(stored('faces', `${face.sha256}.jpg`));
    await cmd('user.avatar_delete').run({ api }, { id: avatar.user });
    expect((await avatarOf(avatar.url)).status).toBe(404);
    await cmd('settings.whitelabel_logo_delete').run({ api }, {});
    await cmd('group.whitelabel_logo_delete').run({ api }, { id: root });
    expect((await avatarOf(logos.project)).status).toBe(404);
    expect((await avatarOf(logos.group)).status).toBe(404);

    const applied = await cmd('backup.apply').run(
      { api },
      { id: (await cmd('backup.list').run({ api }, {})).data[0]!.id },
    );
    expect(await projectRows(db(), 1)).toEqual(before);
    const photo = await downloadFile({ api }, cmd('identifier.photo'), { id: face.id });
    expect(new Uint8Array(photo.bytes)).toEqual(face.bytes);
    const back = await avatarOf(avatar.url);
    expect(back.status).toBe(200);
    expect(back.bytes).toEqual(avatar.bytes);
    // the logos and the settings naming them come back with the project's settings and its groups
    expect((await cmd('settings.whitelabel_get').run({ api }, {})).data.logo).toBe(logos.project);
    expect((await cmd('group.whitelabel_get').run({ api }, { id: root })).data.logo).toBe(logos.group);
    expect((await avatarOf(logos.project)).bytes).toEqual(logos.projectBytes);
    expect((await avatarOf(logos.group)).bytes).toEqual(logos.groupBytes);
    expect(applied.files).toBe(4);
    // the restored files are named again: the sweep of unnamed files keeps them, however old
    const old = new Date(Date.now() - 2 * 3_600_000);
    const files = [
      stored('faces', `${face.sha256}.jpg`),
      stored('avatars', path.basename(avatar.url)),
      stored('logos', path.basename(logos.project)),
      stored('logos', path.basename(logos.group)),
    ];
    for (const f of files) fs.utimesSync(f, old, old);
    await sweepStorage(ts.server.context);
    expect(files.map((f) => fs.existsSync(f))).toEqual([true, true, true, true]);
    // applied again, the files are there already: none is written
    expect(
      (await cmd('backup.apply_file').run({ api }, { file: new File([new Uint8Array(zip)], 'b.zip') })).files,
    ).toBe(0);
  });

  it('applies a backup of format 1 (rows, no files) as before', async () => {
    const old = await JSZip.loadAsync(format1);
    expect(Object.keys(old.files).some((f) => f.startsWith('files/'))).toBe(false);
    await cmd('identifier.delete').run({ api }, { id: face.id });
    const applied = await applyZip(old);
    expect(applied.files).toBe(0);
    expect(await projectRows(db(), 1)).toEqual(before);
  });

  it('refuses a photo that is not its name, or files the manifest does not count, changing nothing', async () => {
    await cmd('identifier.delete').run({ api }, { id: face.id });
    fs.rmSync(stored('faces', `${face.sha256}.jpg`));
    const now = await projectRows(db(), 1);

    // the good photo comes first in the zip and is written, then the bad one fails the apply: the written
    // file goes again with the rows
    const forged = await JSZip.loadAsync(zip);
    const manifest = JSON.parse(await forged.file('manifest.json')!.async('string'));
    const fake = 'f'.repeat(64);
    forged.file(`files/faces/${fake}.jpg`, 'not the photo of that hash');
    manifest.files.find((f: { kind: string }) => f.kind === 'faces').count = 2;
    forged.file('manifest.json', JSON.stringify(manifest));
    const e = await failure(applyZip(forged));
    expect(e.code).toBe('invalid_backup_image');
    expect(e.data).toMatchObject({ reason: 'file_not_its_name', kind: 'faces' });
    expect(await projectRows(db(), 1)).toEqual(now);
    expect(fs.existsSync(stored('faces', `${face.sha256}.jpg`))).toBe(false);
    expect(fs.existsSync(stored('faces', `${fake}.jpg`))).toBe(false);
    expect(fs.readdirSync(stored('faces')).filter((f) => f.endsWith('.part'))).toEqual([]);

    // an entry the manifest does not count
    const extra = await JSZip.loadAsync(zip);
    extra.file('files/faces/extra.jpg', 'x');
    const e2 = await failure(applyZip(extra));
    expect(e2.code).toBe('invalid_backup_image');
    expect(e2.data).toMatchObject({ reason: 'file_count', kind: 'faces' });
    // a name it may not write
    const named = await JSZip.loadAsync(zip);
    const m3 = JSON.parse(await named.file('manifest.json')!.async('string'));
    named.file('files/avatars/..jpg', 'x');
    m3.files.find((f: { kind: string }) => f.kind === 'avatars').count = 2;
    named.file('manifest.json', JSON.stringify(m3));
    const e3 = await failure(applyZip(named));
    expect(e3.data).toMatchObject({ reason: 'bad_file_name', kind: 'avatars' });
    expect(await projectRows(db(), 1)).toEqual(now);
  });
});
