/**
 * A face identifier's photo (issue 21 item 1): uploaded as multipart, checked and made like an avatar (the
 * square, or the largest at the centre, JPEG), read back with `identifier.photo` (gated like reading the
 * identifier, never under /storage/), refused for another type with `invalid_identifier`, refused for a bad
 * image with the avatars' errors, and refused without `identifiers.edit`. The devices' side is
 * tests/devices/face-photos.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Jimp } from 'jimp';
import { downloadFile, getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { sweepStorage } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, raw, rootGroup, userWith } from '../support/fixtures';

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

/** A 400×300 PNG: red on the left half, blue on the right. */
async function picture(): Promise<Blob> {
  const img = new Jimp({ width: 400, height: 300, color: 0xff0000ff });
  img.scan(200, 0, 200, 300, (_x, _y, idx) => {
    img.bitmap.data.writeUInt32BE(0x0000ffff, idx);
  });
  return new Blob([new Uint8Array(await img.getBuffer('image/png'))], { type: 'image/png' });
}

const faceIdentifier = async () =>
  (await cmd('identifier.create').run({ api }, { type: 'face', name: 'Face' } as never)).data;

const blueOf = (img: Awaited<ReturnType<typeof Jimp.read>>, x: number, y: number) => {
  const c = img.getPixelColor(x, y);
  return { r: (c >>> 24) & 255, b: (c >>> 8) & 255 };
};

describe("a face identifier's photo", () => {
  it('uploads as multipart, is made like an avatar and reads back; a new photo replaces it', async () => {
    const ident = await faceIdentifier();
    const none = await failure(downloadFile({ api }, cmd('identifier.photo'), { id: ident.id }));
    expect([none.status, none.message]).toEqual([404, 'item_not_found']);

    // no crop: the largest square at the centre (300×300 of 400×300), half red, half blue
    const first = await cmd('identifier.photo_upload').run({ api }, { id: ident.id, image: await picture() });
    expect(first.photo_sha256).toMatch(/^[0-9a-f]{64}$/);
    const file = await downloadFile({ api }, cmd('identifier.photo'), { id: ident.id });
    expect(file.contentType).toBe('image/jpeg');
    expect(file.filename).toBe(`identifier-${ident.id}.jpg`);
    expect(createHash('sha256').update(Buffer.from(file.bytes)).digest('hex')).toBe(first.photo_sha256);
    const img = await Jimp.read(Buffer.from(file.bytes));
    expect([img.width, img.height]).toEqual([300, 300]);
    expect(blueOf(img, 20, 150).r).toBeGreaterThan(200);
    expect(blueOf(img, 280, 150).b).toBeGreaterThan(200);

    // a crop from the blue half replaces it
    const second = await cmd('identifier.photo_upload').run(
      { api },
      { id: ident.id, image: await picture(), x: 250, y: 50, size: 100 },
    );
    expect(second.photo_sha256).not.toBe(first.photo_sha256);
    const again = await Jimp.read(
      Buffer.from((await downloadFile({ api }, cmd('identifier.photo'), { id: ident.id })).bytes),
    );
    expect([again.width, again.height]).toEqual([100, 100]);
    expect(blueOf(again, 50, 50).b).toBeGreaterThan(200);
    expect(blueOf(again, 50, 50).r).toBeLessThan(60);

    // never served as a public file
    const direct = await fetch(`${ts.url}/storage/faces/${second.photo_sha256}.jpg`);
    expect(direct.status).toBe(404);
    const spelled = await fetch(`${ts.url}/storage/%66aces/${second.photo_sha256}.jpg`);
    expect(spelled.status).toBe(404);
  });

  it("a deleted identifier's photo is swept from storage once an hour old; a named or a younger one stays", async () => {
    const dir = path.join(ts.server.context.config.storageDir, 'faces');
    const file = (sha: string) => path.join(dir, `${sha}.jpg`);
    const kept = await faceIdentifier();
    const gone = await faceIdentifier();
    const keptSha = (
      await cmd('identifier.photo_upload').run(
        { api },
        { id: kept.id, image: await picture(), x: 0, y: 0, size: 110 },
      )
    ).photo_sha256;
    const goneSha = (
      await cmd('identifier.photo_upload').run(
        { api },
        { id: gone.id, image: await picture(), x: 260, y: 0, size: 120 },
      )
    ).photo_sha256;
    await cmd('identifier.delete').run({ api }, { id: gone.id });
    // the delete leaves the file: nothing of the database's names it now
    expect(fs.existsSync(file(goneSha))).toBe(true);
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const sha of [keptSha, goneSha]) fs.utimesSync(file(sha), old, old);
    // an upload stores its file before it names it: a young unnamed file stays
    const young = file('0'.repeat(64));
    fs.writeFileSync(young, 'an upload in flight');
    expect((await sweepStorage(ts.server.context)).faces).toBe(1);
    expect(fs.existsSync(file(goneSha))).toBe(false);
    expect(fs.existsSync(file(keptSha))).toBe(true);
    expect(fs.existsSync(young)).toBe(true);
    fs.rmSync(young);
  });

  it('is refused for an identifier of another type with invalid_identifier', async () => {
    const qr = (await cmd('identifier.create').run({ api }, { type: 'qr' } as never)).data;
    const up = await failure(
      cmd('identifier.photo_upload').run({ api }, { id: qr.id, image: await picture() }),
    );
    expect([up.status, up.message]).toEqual([422, 'invalid_identifier']);
    const read = await failure(downloadFile({ api }, cmd('identifier.photo'), { id: qr.id }));
    expect([read.status, read.message]).toEqual([422, 'invalid_identifier']);
  });

  it('refuses a bad image with the errors of avatars', async () => {
    const ident = await faceIdentifier();
    const bad = new Blob([new TextEncoder().encode('not an image')], { type: 'image/png' });
    expect(
      (await failure(cmd('identifier.photo_upload').run({ api }, { id: ident.id, image: bad }))).message,
    ).toBe('invalid_file');
    const outside = await failure(
      cmd('identifier.photo_upload').run(
        { api },
        { id: ident.id, image: await picture(), x: 350, y: 0, size: 100 },
      ),
    );
    expect(outside.message).toBe('wrong_parameters');
    const huge = new Blob([new Uint8Array(6 * 1024 * 1024)], { type: 'image/png' });
    expect(
      (await failure(cmd('identifier.photo_upload').run({ api }, { id: ident.id, image: huge }))).status,
    ).toBe(413);
    const gif = new Blob([new Uint8Array(await new Jimp({ width: 20, height: 20 }).getBuffer('image/gif'))], {
      type: 'image/gif',
    });
    const refused = await failure(cmd('identifier.photo_upload').run({ api }, { id: ident.id, image: gif }));
    // a face photo is JPEG or PNG (an avatar may be a GIF too)
    expect([refused.status, refused.message]).toEqual([400, 'invalid_file']);
    // nothing was stored
    const none = await failure(downloadFile({ api }, cmd('identifier.photo'), { id: ident.id }));
    expect(none.message).toBe('item_not_found');
  });

  it('is gated like editing the identifier; reading it like reading it', async () => {
    const ident = await faceIdentifier();
    const viewer = await userWith(ts, api, { permissions: ['identifiers.view_all'], domains: [root] });
    const viewerApi = await viewer.client();
    const e = await failure(
      cmd('identifier.photo_upload').run({ api: viewerApi }, { id: ident.id, image: await picture() }),
    );
    expect([e.status, e.message]).toEqual([403, 'method_prohibited']);
    const editor = await userWith(ts, api, {
      permissions: ['identifiers.view_all', 'identifiers.edit'],
      domains: [root],
    });
    const { photo_sha256 } = await cmd('identifier.photo_upload').run(
      { api: await editor.client() },
      { id: ident.id, image: await picture() },
    );
    const seen = await downloadFile({ api: viewerApi }, cmd('identifier.photo'), { id: ident.id });
    expect(createHash('sha256').update(Buffer.from(seen.bytes)).digest('hex')).toBe(photo_sha256);
    const other = await userWith(ts, api, { permissions: ['users.view'], domains: [root] });
    const denied = await failure(
      downloadFile({ api: await other.client() }, cmd('identifier.photo'), { id: ident.id }),
    );
    expect([denied.status, denied.message]).toEqual([403, 'method_prohibited']);
    expect((await raw(ts, null, 'GET', `/identifiers/${ident.id}/photo`)).status).toBe(401);
  });
});
