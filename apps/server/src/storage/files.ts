import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { AppError } from '../errors';
import { cropToJpeg } from './image-worker';

/** Largest side of a stored avatar. */
const AVATAR_SIZE = 256;

/**
 * Crops the square {x, y, size} out of an uploaded image, scales it to 256 px and stores it as JPEG under
 * `storage/avatars/`. Returns the URL path the server serves it at.
 */
export async function storeAvatar(
  config: Pick<Config, 'storageDir' | 'images'>,
  image: Blob,
  crop: { x: number; y: number; size: number },
): Promise<string> {
  // the upload path already refused what is no image or too many pixels by its header; the one decoding
  // path checks the structure and decodes in a process of its own, with limits and a deadline
  const result = await cropToJpeg(
    'avatar',
    { data: new Uint8Array(await image.arrayBuffer()), crop, side: AVATAR_SIZE, quality: 88 },
    config.images,
  );
  if (!result.ok && result.error === 'outside')
    throw new AppError('wrong_parameters', { field: 'size', width: result.width, height: result.height });
  if (!result.ok && result.error === 'malformed') throw new AppError('wrong_file_body', { field: 'image' });
  if (!result.ok)
    throw new AppError('payload_too_large', { field: 'image', limit: result.reason ?? result.error });
  const jpeg = result.jpeg;
  const name = `${randomBytes(12).toString('hex')}.jpg`;
  const dir = path.join(config.storageDir, 'avatars');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, name), jpeg);
  return `/storage/avatars/${name}`;
}

/** Removes a stored file by its URL path; a file already gone is fine. */
export async function removeStored(config: Pick<Config, 'storageDir'>, url: string | null): Promise<void> {
  if (!url?.startsWith('/storage/')) return;
  const file = path.resolve(config.storageDir, url.slice('/storage/'.length));
  if (!file.startsWith(path.resolve(config.storageDir) + path.sep)) return;
  await fs.rm(file, { force: true });
}
