/**
 * The one path every image the server decodes takes (avatars, face photos and white-label logos; event pictures
 * later): `decodeImage` first walks the file's structure (`image-guard.ts`: one header, frames inside the
 * image, at most so many scans and frames, pixels within the kind's limit), then decodes it with jimp in a
 * child process of its own — off the request path, with a heap ceiling, a bound on what the PNG data
 * inflates to, and a deadline after which it is killed. The process exits after its one image, so whatever
 * the decode took goes back to the system; at most `decoders` run at once, the other images wait their turn.
 * Issue 20, item 2; the limits are in docs/decisions.md, "Hardening, second pass (HTTP)".
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { UploadKinds, type UploadKindName } from '@lintel/core';
import { DefaultImageLimits, inspectImage } from './image-guard';

export interface ImageSettings {
  /** how long one image may take to decode before its process is killed (LINTEL_IMAGE_DEADLINE_MS, 20 s) */
  deadlineMs: number;
  /** images decoded at once, each in its own process (LINTEL_IMAGE_DECODERS, 2) */
  decoders: number;
}

export const defaultImageSettings: ImageSettings = { deadlineMs: 20_000, decoders: 2 };

export interface CropJob {
  data: Uint8Array;
  /** the square to keep, in pixels of the image; null: the largest square at its centre; 'whole': no crop */
  crop: { x: number; y: number; size: number } | null | 'whole';
  /** largest side of the result (the whole image keeps its proportions within it) */
  side: number;
  quality: number;
  /** what the result is encoded as (default JPEG; PNG keeps a logo's transparency) */
  format?: 'image/jpeg' | 'image/png';
}

export type CropResult =
  /** `jpeg`: the encoded image (PNG when the job asked for it) */
  | { ok: true; jpeg: Uint8Array }
  /** `malformed`: the structure contradicts itself or no decoder reads it; `limit`: over a limit; `deadline` */
  | { ok: false; error: 'malformed' | 'limit' | 'deadline'; reason?: string }
  | { ok: false; error: 'outside'; width: number; height: number };

/** Old-generation heap of a decoder process; the pixels are Buffers, bounded by the pixel and inflate limits. */
const HEAP_MB = 256;

// CommonJS, run with `-e`: a file of its own would not survive the server's single-file bundle
const DECODER = `
const zlib = require('node:zlib');
const done = (result) => process.send(result, () => process.exit(0));
process.once('message', async (job) => {
  const data = Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength);
  if (job.inflateMax !== undefined) {
    // the PNG's image data may inflate to what its header announces and no more (an interlaced 1 MB file
    // inflated to 1 GiB): inflated here with that ceiling before the decoder, which has none, sees it
    const idat = [];
    for (let pos = 8; pos + 8 <= data.length; ) {
      const length = data.readUInt32BE(pos);
      const type = data.toString('latin1', pos + 4, pos + 8);
      if (type === 'IDAT') idat.push(data.subarray(pos + 8, pos + 8 + length));
      if (type === 'IEND') break;
      pos += 12 + length;
    }
    try {
      zlib.inflateSync(Buffer.concat(idat), { maxOutputLength: job.inflateMax + 1 });
    } catch (err) {
      return done({ ok: false, error: err && err.code === 'ERR_BUFFER_TOO_LARGE' ? 'limit' : 'malformed', reason: 'png: inflated size' });
    }
  }
  const { Jimp } = require(job.jimp);
  let img;
  try {
    img = await Jimp.read(data);
  } catch {
    return done({ ok: false, error: 'malformed', reason: 'decoder' });
  }
  if (job.crop === 'whole') {
    if (img.width > job.side || img.height > job.side) img.scaleToFit({ w: job.side, h: job.side });
  } else {
    const side = Math.min(img.width, img.height);
    const { x, y, size } = job.crop || { x: (img.width - side) >> 1, y: (img.height - side) >> 1, size: side };
    if (x + size > img.width || y + size > img.height)
      return done({ ok: false, error: 'outside', width: img.width, height: img.height });
    img.crop({ x, y, w: size, h: size });
    if (size > job.side) img.resize({ w: job.side, h: job.side });
  }
  const format = job.format || 'image/jpeg';
  const jpeg = await img.getBuffer(format, format === 'image/jpeg' ? { quality: job.quality } : {});
  done({ ok: true, jpeg: new Uint8Array(jpeg) });
});
`;

let running = 0;
const waiting: Array<() => void> = [];

/** Decoder processes running now (tests: every one has exited once the images are answered). */
export const decodersRunning = () => running;

async function slot(settings: ImageSettings): Promise<() => void> {
  if (running >= Math.max(1, settings.decoders)) await new Promise<void>((r) => waiting.push(r));
  else running++;
  return () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
}

function runDecoder(job: CropJob & { inflateMax?: number }, settings: ImageSettings): Promise<CropResult> {
  const jimp = createRequire(import.meta.url).resolve('jimp');
  return new Promise<CropResult>((resolve) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '-e', DECODER], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'advanced',
      env: { PATH: process.env.PATH ?? '' },
    });
    let result: CropResult | null = null;
    const timer = setTimeout(() => {
      result ??= { ok: false, error: 'deadline' };
      child.kill('SIGKILL');
    }, settings.deadlineMs);
    child.once('message', (m: CropResult) => (result ??= m));
    child.once('error', () => undefined);
    // answered once the process is gone: its memory is back with the system by then
    child.once('close', () => {
      clearTimeout(timer);
      // a process that died without answering (out of memory, killed) decoded nothing
      resolve(result ?? { ok: false, error: 'malformed', reason: 'decoder died' });
    });
    child.send({ ...job, jimp });
  });
}

/**
 * Decodes an image of an upload kind, crops the square and encodes a JPEG — the one way the server decodes
 * an image. The structure is checked first (a refusal costs no process), then the decoder runs in its own.
 */
export async function cropToJpeg(
  kind: UploadKindName,
  job: CropJob,
  settings: ImageSettings = defaultImageSettings,
): Promise<CropResult> {
  const maxPixels = (UploadKinds[kind] as { maxPixels?: number }).maxPixels ?? 25_000_000;
  const verdict = inspectImage(job.data, { ...DefaultImageLimits, maxPixels });
  if (!verdict.ok)
    return { ok: false, error: verdict.error === 'limit' ? 'limit' : 'malformed', reason: verdict.reason };
  const release = await slot(settings);
  try {
    return await runDecoder({ ...job, inflateMax: verdict.inflateMax }, settings);
  } finally {
    release();
  }
}
