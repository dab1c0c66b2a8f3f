import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Jimp } from 'jimp';
import type { Config } from '../config';
import { AppError } from '../errors';

/** Largest side of a stored avatar. */
const AVATAR_SIZE = 256;

/**
 * Crops the square {x, y, size} out of an uploaded image, scales it to 256 px and stores it as JPEG under
 * `storage/avatars/`. Returns the URL path the server serves it at.
 */
export async function storeAvatar(config: Pick<Config, 'storageDir'>, image: Blob, crop: { x: number; y: number; size: number }): Promise<string> {
  let img: Awaited<ReturnType<typeof Jimp.read>>;
  try {
    img = await Jimp.read(Buffer.from(await image.arrayBuffer()));
  } catch {
    throw new AppError('invalid_file', { field: 'image' });
  }
  if (crop.x + crop.size > img.width || crop.y + crop.size > img.height)
    throw new AppError('wrong_parameters', { field: 'size', width: img.width, height: img.height });
  img.crop({ x: crop.x, y: crop.y, w: crop.size, h: crop.size });
  if (crop.size > AVATAR_SIZE) img.resize({ w: AVATAR_SIZE, h: AVATAR_SIZE });
  const jpeg = await img.getBuffer('image/jpeg', { quality: 88 });
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
