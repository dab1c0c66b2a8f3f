import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { AppError } from '../errors';
import { cropToJpeg } from './image-worker';

/** Largest side of a stored avatar. */
const AVATAR_SIZE = 256;

/**
 * An uploaded image of an upload kind decoded, cropped to the square (null: the largest at its centre),
 * scaled to `side` and encoded as JPEG — the avatars' checks and errors, whatever the image is for.
 */
async function croppedJpeg(
  config: Pick<Config, 'images'>,
  kind: 'avatar' | 'identifier_photo',
  image: Blob,
  crop: { x: number; y: number; size: number } | null,
  side: number,
): Promise<Uint8Array> {
  // the upload path already refused what is no image or too many pixels by its header; the one decoding
  // path checks the structure and decodes in a process of its own, with limits and a deadline
  const result = await cropToJpeg(
    kind,
    { data: new Uint8Array(await image.arrayBuffer()), crop, side, quality: 88 },
    config.images,
  );
  if (!result.ok && result.error === 'outside')
    throw new AppError('wrong_parameters', { field: 'size', width: result.width, height: result.height });
  if (!result.ok && result.error === 'malformed') throw new AppError('wrong_file_body', { field: 'image' });
  if (!result.ok)
    throw new AppError('payload_too_large', { field: 'image', limit: result.reason ?? result.error });
  return result.jpeg;
}

/**
 * Crops the square {x, y, size} out of an uploaded image, scales it to 256 px and stores it as JPEG under
 * `storage/avatars/`. Returns the URL path the server serves it at.
 */
export async function storeAvatar(
  config: Pick<Config, 'storageDir' | 'images'>,
  image: Blob,
  crop: { x: number; y: number; size: number },
): Promise<string> {
  const jpeg = await croppedJpeg(config, 'avatar', image, crop, AVATAR_SIZE);
  const name = `${randomBytes(12).toString('hex')}.jpg`;
  const dir = path.join(config.storageDir, AVATARS_DIR);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, name), jpeg);
  return `/storage/avatars/${name}`;
}

/** Largest side of a stored logo (a header, a mail, an app's splash: none needs more). */
const LOGO_SIDE = 512;

/** The folder of white-label logos under the storage folder (served under /storage/logos/, like avatars). */
export const LOGOS_DIR = 'logos';

/**
 * A project's or a group's white-label logo: decoded by the one decoding path (the avatars' checks and
 * errors), scaled to fit 512 px with its proportions and encoded again as PNG (its transparency kept; nothing
 * of the uploaded file but its pixels), stored under `storage/logos/`. Returns the URL path it is served at.
 */
export async function storeLogo(config: Pick<Config, 'storageDir' | 'images'>, image: Blob): Promise<string> {
  const result = await cropToJpeg(
    'logo',
    {
      data: new Uint8Array(await image.arrayBuffer()),
      crop: 'whole',
      side: LOGO_SIDE,
      quality: 90,
      format: 'image/png',
    },
    config.images,
  );
  if (!result.ok && result.error === 'malformed') throw new AppError('wrong_file_body', { field: 'image' });
  if (!result.ok)
    throw new AppError('payload_too_large', {
      field: 'image',
      limit: 'reason' in result ? result.reason : result.error,
    });
  const name = `${randomBytes(12).toString('hex')}.png`;
  const dir = path.join(config.storageDir, LOGOS_DIR);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, name), result.jpeg);
  return `/storage/${LOGOS_DIR}/${name}`;
}

/**
 * The advisory lock (with key 0) between a backup's apply, which restores stored files and names them in its
 * transaction (shared), and the sweep of files nobody names (exclusive): the sweep never reads the names
 * before an apply commits and removes a file the apply found stored.
 */
export const STORED_FILES_LOCK = 72432;

/** The folder of avatars under the storage folder (served under /storage/avatars/). */
export const AVATARS_DIR = 'avatars';

/** The folder of face photos under the storage folder: not served under /storage/ (http/app.ts). */
export const FACES_DIR = 'faces';
/** Largest side of a stored face photo (a panel's face template needs no more). */
const FACE_SIZE = 640;
const SHA256_HEX = /^[0-9a-f]{64}$/;

const facePath = (config: Pick<Config, 'storageDir'>, sha256: string) =>
  path.join(config.storageDir, FACES_DIR, `${sha256}.jpg`);

/**
 * A face identifier's photo (issue 21 item 1): checked and made like an avatar (the square, or the largest at
 * its centre, at most 640 px, JPEG), stored as `storage/faces/{sha256}.jpg`. Returns its SHA-256 (hex).
 */
export async function storeFacePhoto(
  config: Pick<Config, 'storageDir' | 'images'>,
  image: Blob,
  crop: { x: number; y: number; size: number } | null,
): Promise<string> {
  const jpeg = await croppedJpeg(config, 'identifier_photo', image, crop, FACE_SIZE);
  const sha256 = createHash('sha256').update(jpeg).digest('hex');
  await fs.mkdir(path.join(config.storageDir, FACES_DIR), { recursive: true });
  await fs.writeFile(facePath(config, sha256), jpeg);
  return sha256;
}

/** A stored face photo by its SHA-256; null when it is not (or no longer) stored. */
export async function readFacePhoto(
  config: Pick<Config, 'storageDir'>,
  sha256: string | null,
): Promise<Buffer | null> {
  if (!sha256 || !SHA256_HEX.test(sha256)) return null;
  try {
    return await fs.readFile(facePath(config, sha256));
  } catch {
    return null;
  }
}

/** Removes a stored face photo (one no identifier names any more); one already gone is fine. */
export async function removeFacePhoto(
  config: Pick<Config, 'storageDir'>,
  sha256: string | null,
): Promise<void> {
  if (!sha256 || !SHA256_HEX.test(sha256)) return;
  await fs.rm(facePath(config, sha256), { force: true });
}

/** Removes a stored file by its URL path; a file already gone is fine. */
export async function removeStored(config: Pick<Config, 'storageDir'>, url: string | null): Promise<void> {
  if (!url?.startsWith('/storage/')) return;
  const file = path.resolve(config.storageDir, url.slice('/storage/'.length));
  if (!file.startsWith(path.resolve(config.storageDir) + path.sep)) return;
  await fs.rm(file, { force: true });
}
