/**
 * Issue 12 point 2: one upload path for every file. A decompression bomb (a 16,000 × 16,000 PNG of a few
 * hundred KB) is refused from its header before anything decodes it; a file's type comes from its bytes,
 * never its name; a file in a field the command does not declare is refused.
 */
import { once } from 'node:events';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, uploadFields, registry } from '@lintel/commands';
import { UploadKinds, type ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, uid } from '../support/fixtures';
import { checkUpload } from '../../apps/server/src/storage/uploads';

let ts: TestServer;
let api: ApiClient;
let token = '';
let userId: number;
let bomb: Buffer;

/** CRC-32 of PNG chunks (zlib.crc32 is Node ≥ 20.15 / 22.2; written out to run on any Node 20). */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([head, body, crc]);
}

/** A valid grey PNG of side × side pixels, all black: its IDAT is deflated zeros, streamed (never held whole). */
async function zeroPng(side: number): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const deflate = zlib.createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (d: Buffer) => parts.push(d));
  const row = Buffer.alloc(side + 1); // filter byte 0, then the row's pixels
  for (let y = 0; y < side; y++) if (!deflate.write(row)) await once(deflate, 'drain');
  deflate.end();
  await once(deflate, 'end');
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.concat(parts)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const png = (data: Buffer, name = 'picture.png') =>
  new File([new Uint8Array(data)], name, { type: 'image/png' });

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  token = (
    await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    )
  ).sessions[0]!.token;
  const roles = await getCommand('role.list').run({ api }, { limit: 1, sort: 'id' });
  const groups = await getCommand('group.full').run({ api }, {});
  userId = (
    await getCommand('user.create').run(
      { api },
      {
        login: `up${uid()}`,
        name: 'Uploader',
        role: roles.data[0]!.id,
        domains: [groups.data[0]!.id],
        send_registration_link: false,
      },
    )
  ).data.id;
  bomb = await zeroPng(16_000);
}, 120_000);
afterAll(async () => {
  await ts?.close();
});

describe('uploads', () => {
  it('every file argument of the registry names an upload kind', () => {
    const declared = [...registry.values()].flatMap((c) => Object.values(uploadFields(c.args)));
    expect(declared).toContain('avatar');
    for (const kind of declared) expect(Object.keys(UploadKinds)).toContain(kind);
  });

  it('a 16,000 × 16,000 PNG bomb is refused from its header, and memory stays where it was', async () => {
    expect(bomb.length).toBeLessThan(UploadKinds.avatar.maxBytes);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    // while the bombs go in, a cheap request keeps asking: its latency shows whether the event loop was held
    const latencies: number[] = [];
    let stop = false;
    const prober = (async () => {
      while (!stop) {
        const t0 = performance.now();
        await fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${token}` } });
        latencies.push(performance.now() - t0);
      }
    })();
    const t0 = performance.now();
    const errs: unknown[] = [];
    for (let i = 0; i < 3; i++)
      errs.push(
        await getCommand('user.avatar_upload')
          .run({ api }, { id: userId, image: png(bomb), x: 0, y: 0, size: 16 })
          .then(
            (ok) => ok,
            (e: unknown) => e,
          ),
      );
    const ms = (performance.now() - t0) / 3;
    stop = true;
    await prober;
    clearInterval(sampler);
    const grew = (peak - before) / 2 ** 20;
    latencies.sort((a, b) => a - b);
    console.log(
      `bomb (${(bomb.length / 1024).toFixed(0)} KB PNG, 16000x16000): ${ms.toFixed(0)} ms per upload; RSS ${(before / 2 ** 20).toFixed(0)} MB -> peak ${(peak / 2 ** 20).toFixed(0)} MB; ` +
        `other requests meanwhile: ${latencies.length}, p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`,
    );
    for (const e of errs)
      expect(e).toMatchObject({
        status: 413,
        message: 'payload_too_large',
        data: { field: 'image', width: 16_000, height: 16_000, max_pixels: UploadKinds.avatar.maxPixels },
      });
    // decoding it would take 256 MB of pixels at least (the issue saw 1.4 GB more)
    expect(grew).toBeLessThan(150);
    expect((await getCommand('user.get').run({ api }, { id: userId })).avatar_url).toBeNull();
  });

  it('an accepted image at the pixel limit is decoded off the event loop: other requests go on meanwhile', async () => {
    const side = Math.floor(Math.sqrt(UploadKinds.avatar.maxPixels));
    const large = await zeroPng(side);
    const latencies: number[] = [];
    let done = false;
    const upload = getCommand('user.avatar_upload')
      .run({ api }, { id: userId, image: png(large), x: 0, y: 0, size: 1000 })
      .finally(() => (done = true));
    const t0 = performance.now();
    while (!done) {
      const t = performance.now();
      await fetch(`${ts.url}/api/v0/profile`, { headers: { authorization: `Bearer ${token}` } });
      latencies.push(performance.now() - t);
    }
    const { avatar_url } = await upload;
    latencies.sort((a, b) => a - b);
    console.log(
      `accepted ${side}x${side} avatar: ${(performance.now() - t0).toFixed(0)} ms; other requests meanwhile: ${latencies.length}, ` +
        `p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`,
    );
    const stored = await fetch(`${ts.url}${avatar_url}`);
    expect(stored.status).toBe(200);
    expect(stored.headers.get('content-type')).toBe('image/jpeg');
  });

  it('the type comes from the bytes: text named .png is refused, a real PNG named .txt is taken', async () => {
    const text = new File([new TextEncoder().encode('<html><script>alert(1)</script></html>')], 'face.png', {
      type: 'image/png',
    });
    expect(
      await failure(
        getCommand('user.avatar_upload').run({ api }, { id: userId, image: text, x: 0, y: 0, size: 16 }),
      ),
    ).toMatchObject({
      status: 400,
      message: 'invalid_file',
      data: { field: 'image' },
    });
    const small = await zeroPng(64);
    const named = new File([new Uint8Array(small)], 'notes.txt', { type: 'text/plain' });
    const { avatar_url } = await getCommand('user.avatar_upload').run(
      { api },
      { id: userId, image: named, x: 0, y: 0, size: 32 },
    );
    expect(avatar_url).toMatch(/^\/storage\/avatars\/[0-9a-f]+\.jpg$/);
  });

  it('a cut header is read from the file alone, never from the bytes after it in memory', async () => {
    // a whole 64 × 64 header, then the file cut inside its height; what follows in the same memory says 65535²
    const whole = await zeroPng(64);
    const memory = Buffer.concat([
      whole.subarray(0, 20),
      Buffer.from([0x00, 0x00, 0xff, 0xff]),
      whole.subarray(24),
    ]);
    await expect(checkUpload('avatar', 'image', memory.subarray(0, 20))).rejects.toMatchObject({
      key: 'wrong_file_body',
    });
    expect(await checkUpload('avatar', 'image', whole)).toEqual({ type: 'image/png', width: 64, height: 64 });
  });

  it('an image whose header is cut is refused before decoding; a file in an undeclared field is refused', async () => {
    const cut = (await zeroPng(64)).subarray(0, 20);
    expect(
      await failure(
        getCommand('user.avatar_upload').run({ api }, { id: userId, image: png(cut), x: 0, y: 0, size: 16 }),
      ),
    ).toMatchObject({
      status: 400,
      message: 'wrong_file_body',
    });
    const form = new FormData();
    form.append('name', 'x');
    form.append('image', png(await zeroPng(16)));
    const res = await fetch(`${ts.url}/api/v0/users/${userId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error_code: 'invalid_data_sent', data: { field: 'image' } });
  });
});
