/**
 * Issue 20, item 2: image bombs that pass the header check. Each file is made here: a PNG with a second IHDR,
 * an interlaced PNG whose data inflates to 1 GiB, a progressive JPEG with 10,000 scans, a 35-byte GIF whose
 * frame is larger than its screen. Each is refused with a catalogue error, nothing is stored, every decoder
 * process has exited and the server's memory is back near where it was (its RSS, never a time).
 */
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, uid } from '../support/fixtures';
import { decodersRunning } from '../../apps/server/src/storage/image-worker';

const SLOW_MS = 240_000;
const MiB = 1024 * 1024;

let ts: TestServer;
let api: ApiClient;
let userId: number;

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([head, body, crc]);
}

function ihdr(width: number, height: number, colour: number, interlace: number): Buffer {
  const h = Buffer.alloc(13);
  h.writeUInt32BE(width, 0);
  h.writeUInt32BE(height, 4);
  h[8] = 8; // bit depth
  h[9] = colour;
  h[12] = interlace;
  return chunk('IHDR', h);
}

/** `total` zero bytes deflated, a mebibyte at a time (the test never holds them whole). */
async function deflatedZeros(total: number): Promise<Buffer> {
  const deflate = zlib.createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (d: Buffer) => out.push(d));
  const ended = new Promise((r) => deflate.on('end', r));
  const zeros = Buffer.alloc(MiB);
  for (let left = total; left > 0; left -= MiB) {
    const piece = left >= MiB ? zeros : zeros.subarray(0, left);
    if (!deflate.write(piece)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await ended;
  return Buffer.concat(out);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** 100 × 100 by its first header, 6000 × 6000 RGBA by its second, with the data of the second (144 MB). */
async function secondIhdr(): Promise<Buffer> {
  const side = 6000;
  return Buffer.concat([
    PNG_SIGNATURE,
    ihdr(100, 100, 6, 0),
    ihdr(side, side, 6, 0),
    chunk('IDAT', await deflatedZeros(side * (1 + side * 4))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An interlaced 100 × 100 grey PNG whose image data inflates to 1 GiB (about 1 MB sent). */
async function inflatesToGiB(): Promise<Buffer> {
  return Buffer.concat([
    PNG_SIGNATURE,
    ihdr(100, 100, 0, 1),
    chunk('IDAT', await deflatedZeros(1024 * MiB)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A progressive 256 × 256 grey JPEG of 10,000 DC scans (each block's difference: one Huffman bit). */
function tenThousandScans(): Buffer {
  const side = 256;
  const seg = (marker: number, body: number[]) => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 255,
    ...body,
  ];
  const dqt = seg(0xdb, [0, ...Array(64).fill(1)]);
  const sof2 = seg(0xc2, [8, side >> 8, side & 255, side >> 8, side & 255, 1, 1, 0x11, 0]);
  // DC table 0: one code of length 1 for category 0 (a difference of zero)
  const dht = seg(0xc4, [0x00, 1, ...Array(15).fill(0), 0]);
  const sos = seg(0xda, [1, 1, 0x00, 0, 0, 0]);
  const blocks = (side / 8) * (side / 8);
  const scan = Buffer.from([...sos, ...Array(blocks / 8).fill(0)]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8, ...dqt, ...sof2, ...dht]),
    ...Array.from({ length: 10_000 }, () => scan),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** 35 bytes: a 16 × 16 screen with one 10,000 × 10,000 frame. */
function frameLargerThanScreen(): Buffer {
  const gif = Buffer.from([
    ...Buffer.from('GIF89a', 'latin1'),
    16,
    0,
    16,
    0,
    0x80,
    0,
    0, // screen, a global table of two colours
    0,
    0,
    0,
    255,
    255,
    255,
    0x2c,
    0,
    0,
    0,
    0,
    0x10,
    0x27,
    0x10,
    0x27,
    0, // the frame: 10,000 × 10,000 at 0, 0
    2,
    2,
    0x2c,
    0,
    0, // LZW: clear, end
    0x3b,
  ]);
  expect(gif.length).toBe(35);
  return gif;
}

beforeAll(async () => {
  ts = await startTestServer();
  api = await admin(ts);
  const roles = await getCommand('role.list').run({ api }, { limit: 1, sort: 'id' });
  const groups = await getCommand('group.full').run({ api }, {});
  userId = (
    await getCommand('user.create').run(
      { api },
      {
        login: `bomb${uid()}`,
        name: 'Bombs',
        role: roles.data[0]!.id,
        domains: [groups.data[0]!.id],
        send_registration_link: false,
      },
    )
  ).data.id;
}, SLOW_MS);
afterAll(async () => {
  await ts?.close();
});

const upload = (data: Buffer, type: string) =>
  getCommand('user.avatar_upload').run(
    { api },
    { id: userId, image: new Blob([new Uint8Array(data)], { type }), x: 0, y: 0, size: 16 },
  );

describe('image bombs (issue 20, item 2)', () => {
  it(
    'are refused with a catalogue error, and the memory is back where it was',
    async () => {
      const bombs = [
        {
          name: 'PNG with a second IHDR',
          data: await secondIhdr(),
          type: 'image/png',
          code: 'wrong_file_body',
        },
        {
          name: 'interlaced PNG inflating to 1 GiB',
          data: await inflatesToGiB(),
          type: 'image/png',
          code: 'payload_too_large',
        },
        {
          name: 'JPEG of 10,000 scans',
          data: tenThousandScans(),
          type: 'image/jpeg',
          code: 'payload_too_large',
        },
        {
          name: 'GIF frame larger than its screen',
          data: frameLargerThanScreen(),
          type: 'image/gif',
          code: 'wrong_file_body',
        },
      ];
      // an honest image first: the decoding path works, and what it loads once is in the baseline
      const ok = new Jimp({ width: 64, height: 64, color: 0x336699ff });
      expect((await upload(await ok.getBuffer('image/png'), 'image/png')).avatar_url).toMatch(/^\/storage\//);
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      try {
        for (const bomb of bombs) {
          const t0 = performance.now();
          const err = await failure(upload(bomb.data, bomb.type));
          const ms = performance.now() - t0;
          console.log(
            `${bomb.name} (${bomb.data.length} bytes): ${err.status} ${err.message} in ${ms.toFixed(0)} ms`,
          );
          expect({ bomb: bomb.name, status: err.status, code: err.message }).toEqual({
            bomb: bomb.name,
            status: bomb.code === 'payload_too_large' ? 413 : 400,
            code: bomb.code,
          });
        }
      } finally {
        clearInterval(sampler);
      }
      // every decoder process has exited; the server's own memory did not take the bombs in
      expect(decodersRunning()).toBe(0);
      const after = process.memoryUsage().rss;
      console.log(
        `RSS ${(before / MiB).toFixed(0)} MB -> peak ${(peak / MiB).toFixed(0)} MB -> after ${(after / MiB).toFixed(0)} MB`,
      );
      expect(peak - before).toBeLessThan(200 * MiB);
      expect(after - before).toBeLessThan(100 * MiB);
      // the user's avatar is still the honest one
      const user = await getCommand('user.get').run({ api }, { id: userId });
      expect(user.avatar_url).toMatch(/^\/storage\/avatars\//);
    },
    SLOW_MS,
  );

  it('a decode past its deadline is killed and refused', async () => {
    const images = ts.server.context.config.images;
    const saved = images.deadlineMs;
    images.deadlineMs = 1; // no decoder process even starts within it
    try {
      const honest = await new Jimp({ width: 64, height: 64, color: 0x336699ff }).getBuffer('image/png');
      const err = await failure(upload(honest, 'image/png'));
      expect([err.status, err.message]).toEqual([413, 'payload_too_large']);
      expect(decodersRunning()).toBe(0);
    } finally {
      images.deadlineMs = saved;
    }
  });
});
