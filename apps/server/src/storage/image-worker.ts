/**
 * Image decoding off the event loop: jimp decodes, crops and encodes in one worker thread with a memory
 * ceiling, one image at a time, so an accepted but large image (the upload kinds allow up to 25 MP) holds
 * neither the other requests nor more than one decode's memory. The worker starts on the first image and
 * never keeps the process alive; a worker that dies (out of memory) fails its images and is started anew.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CropJob {
  data: Uint8Array;
  crop: { x: number; y: number; size: number };
  /** largest side of the result */
  side: number;
  quality: number;
}

export type CropResult =
  | { ok: true; jpeg: Uint8Array }
  | { ok: false; error: 'decode' }
  | { ok: false; error: 'outside'; width: number; height: number };

// CommonJS, run with `eval`: a worker file of its own would not survive the server's single-file bundle
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Jimp } = require(workerData.jimp);
let queue = Promise.resolve();
parentPort.on('message', ({ id, job }) => {
  queue = queue.then(async () => {
    let img;
    try {
      img = await Jimp.read(Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength));
    } catch {
      return parentPort.postMessage({ id, result: { ok: false, error: 'decode' } });
    }
    const { x, y, size } = job.crop;
    if (x + size > img.width || y + size > img.height)
      return parentPort.postMessage({ id, result: { ok: false, error: 'outside', width: img.width, height: img.height } });
    img.crop({ x, y, w: size, h: size });
    if (size > job.side) img.resize({ w: job.side, h: job.side });
    const jpeg = await img.getBuffer('image/jpeg', { quality: job.quality });
    const out = new Uint8Array(jpeg);
    parentPort.postMessage({ id, result: { ok: true, jpeg: out } }, [out.buffer]);
  }).catch((err) => parentPort.postMessage({ id, failed: String(err && err.message || err) }));
});
`;

/** Old-generation heap of the worker; the pixels themselves are Buffers, bounded by the kinds' pixel limits. */
const HEAP_MB = 256;

interface Pending {
  resolve(r: CropResult): void;
  reject(e: Error): void;
}

let worker: Worker | null = null;
let seq = 0;
const pending = new Map<number, Pending>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function start(): Worker {
  const jimp = createRequire(import.meta.url).resolve('jimp');
  const w = new Worker(WORKER, {
    eval: true,
    workerData: { jimp },
    resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
  });
  w.unref();
  w.on('message', (m: { id: number; result?: CropResult; failed?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!p) return;
    if (m.result) p.resolve(m.result);
    else p.reject(new Error(`image worker: ${m.failed}`));
  });
  w.on('error', (err) => failAll(err));
  w.on('exit', () => {
    if (worker === w) worker = null;
    failAll(new Error('image worker exited'));
  });
  return w;
}

/** Decodes, crops the square and encodes a JPEG in the worker. */
export function cropToJpeg(job: CropJob): Promise<CropResult> {
  worker ??= start();
  const id = ++seq;
  const w = worker;
  return new Promise<CropResult>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    const data = new Uint8Array(job.data); // a copy of its own, moved to the worker
    w.postMessage({ id, job: { ...job, data } }, [data.buffer]);
  });
}
