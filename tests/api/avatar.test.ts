import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { sweepStorage } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let userId: number;
beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  const roles = await getCommand('role.list').run({ api }, { limit: 1, sort: 'id' });
  const groups = await getCommand('group.full').run({ api }, {});
  userId = (
    await getCommand('user.create').run(
      { api },
      {
        login: `av${uid()}`,
        name: 'Avatar',
        role: roles.data[0]!.id,
        domains: [groups.data[0]!.id],
        send_registration_link: false,
      },
    )
  ).data.id;
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

describe('avatars', () => {
  it('uploads as multipart, crops the square and serves it; delete removes it', async () => {
    const { avatar_url } = await getCommand('user.avatar_upload').run(
      { api },
      { id: userId, image: await picture(), x: 250, y: 50, size: 100 },
    );
    expect(avatar_url).toMatch(/^\/storage\/avatars\/[0-9a-f]+\.jpg$/);
    const res = await fetch(`${ts.url}${avatar_url}`);
    expect(res.status).toBe(200);
    const stored = await Jimp.read(Buffer.from(await res.arrayBuffer()));
    expect([stored.width, stored.height]).toEqual([100, 100]);
    // cropped from the blue half
    const { r, b } = (({ r, b }) => ({ r, b }))(intToRGBA(stored.getPixelColor(50, 50)));
    expect(b).toBeGreaterThan(200);
    expect(r).toBeLessThan(60);
    expect((await getCommand('user.get').run({ api }, { id: userId })).avatar_url).toBe(avatar_url);

    await getCommand('user.avatar_delete').run({ api }, { id: userId });
    expect((await fetch(`${ts.url}${avatar_url}`)).status).toBe(404);
    expect((await getCommand('user.get').run({ api }, { id: userId })).avatar_url).toBeNull();
  });

  it("a deleted user's avatar is swept from storage once an hour old; a named or a younger one stays", async () => {
    const roles = await getCommand('role.list').run({ api }, { limit: 1, sort: 'id' });
    const groups = await getCommand('group.full').run({ api }, {});
    const someone = async () =>
      (
        await getCommand('user.create').run(
          { api },
          {
            login: `sw${uid()}`,
            name: 'Swept',
            role: roles.data[0]!.id,
            domains: [groups.data[0]!.id],
            send_registration_link: false,
          },
        )
      ).data.id;
    const kept = await someone();
    const gone = await someone();
    const upload = async (id: number) =>
      (
        await getCommand('user.avatar_upload').run(
          { api },
          { id, image: await picture(), x: 0, y: 0, size: 90 },
        )
      ).avatar_url!;
    const file = (url: string) =>
      path.join(ts.server.context.config.storageDir, url.slice('/storage/'.length));
    const keptUrl = await upload(kept);
    const goneUrl = await upload(gone);
    await getCommand('user.delete').run({ api }, { id: gone });
    // deleting the user leaves the file, still served though nothing names it
    expect((await fetch(`${ts.url}${goneUrl}`)).status).toBe(200);
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const url of [keptUrl, goneUrl]) fs.utimesSync(file(url), old, old);
    const young = file('/storage/avatars/in-flight.jpg');
    fs.writeFileSync(young, 'an upload in flight');
    expect((await sweepStorage(ts.server.context)).avatars).toBe(1);
    expect((await fetch(`${ts.url}${goneUrl}`)).status).toBe(404);
    expect((await fetch(`${ts.url}${keptUrl}`)).status).toBe(200);
    expect(fs.existsSync(young)).toBe(true);
    fs.rmSync(young);
  });

  it('refuses a file that is no image, a crop outside the picture, and a file over 5 MiB', async () => {
    const bad = new Blob([new TextEncoder().encode('not an image')], { type: 'image/png' });
    expect(
      (
        await failure(
          getCommand('user.avatar_upload').run({ api }, { id: userId, image: bad, x: 0, y: 0, size: 50 }),
        )
      ).message,
    ).toBe('invalid_file');
    expect(
      (
        await failure(
          getCommand('user.avatar_upload').run(
            { api },
            { id: userId, image: await picture(), x: 350, y: 0, size: 100 },
          ),
        )
      ).message,
    ).toBe('wrong_parameters');
    const huge = new Blob([new Uint8Array(6 * 1024 * 1024)], { type: 'image/png' });
    expect(
      (
        await failure(
          getCommand('user.avatar_upload').run({ api }, { id: userId, image: huge, x: 0, y: 0, size: 50 }),
        )
      ).status,
    ).toBe(413);
  });
});

function intToRGBA(c: number) {
  return { r: (c >>> 24) & 255, g: (c >>> 16) & 255, b: (c >>> 8) & 255, a: c & 255 };
}
