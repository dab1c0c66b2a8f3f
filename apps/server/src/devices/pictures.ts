/**
 * Event pictures (issue 20 item 6): what a device attaches to its events, checked through the one image path
 * (`storage/image-guard.ts`), kept within a quota per device and in all (`LINTEL_DEVICE_PICTURES_MAX_BYTES`,
 * `LINTEL_PICTURES_MAX_BYTES`), given back by the journal's retention with their events, and served only to
 * whoever may read the event: with a bearer token (the event's view scope checked) or by the short signed URL
 * the events list hands that reader. docs/decisions.md, "Event pictures, and device events in bulk".
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { DEVICE_EVENT_IMAGE_MAX_BYTES, type DeviceLogEntry } from '@lintel/commands';
import type { DB } from '../db/schema';
import type { DeviceLimits } from '../config';
import { AppError } from '../errors';
import { DefaultImageLimits, inspectImage } from '../storage/image-guard';

type Q = Transaction<DB> | Kysely<DB>;

/** The most pixels an event picture may announce: a 4K camera frame. */
export const EVENT_PICTURE_MAX_PIXELS = 8_300_000;

/** How long a picture's signed URL stays good (s): the events list hands out a new one at each load. */
export const PICTURE_URL_TTL_S = 15 * 60;

/** The directory of event pictures, under the storage directory (not served by the static route). */
export const PICTURES_DIR = 'logs';

/** A file name the server gave a picture (24 hex digits and its type). */
export const PICTURE_NAME = /^[0-9a-f]{24}\.(jpg|png)$/;

export interface Picture {
  bytes: Buffer;
  ext: 'jpg' | 'png';
}

/**
 * A picture a device attached: JPEG or PNG by its first bytes, within the size, and a structure the image
 * guard accepts (one frame of at most EVENT_PICTURE_MAX_PIXELS, a bounded number of scans); else
 * `invalid_file` naming the field. Nothing decodes it: it is stored and served as it came.
 */
export function pictureOf(entry: DeviceLogEntry, index: number): Picture | null {
  if (entry.image === undefined) return null;
  const bytes = Buffer.from(entry.image, 'base64');
  const field = `events.${index}.image`;
  if (bytes.length > DEVICE_EVENT_IMAGE_MAX_BYTES)
    throw new AppError('invalid_file', { field, max: DEVICE_EVENT_IMAGE_MAX_BYTES });
  const jpeg = bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  const png = bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  if (!jpeg && !png) throw new AppError('invalid_file', { field });
  const verdict = inspectImage(bytes, { ...DefaultImageLimits, maxPixels: EVENT_PICTURE_MAX_PIXELS });
  if (!verdict.ok) throw new AppError('invalid_file', { field, reason: verdict.reason });
  return { bytes, ext: jpeg ? 'jpg' : 'png' };
}

/**
 * Takes room for pictures of `sizes` bytes for one device, in the caller's transaction, as far as the quotas
 * allow: which of them fit (in order; one that does not fit does not stop a smaller one after it). The
 * total's row is locked first — by every push with pictures and by the retention — so the check and the
 * count are one step whatever runs beside it. Three statements, however many pictures.
 */
export async function reservePictures(
  trx: Q,
  limits: Pick<DeviceLimits, 'picturesPerDevice' | 'picturesTotal'>,
  deviceId: number,
  sizes: readonly number[],
): Promise<boolean[]> {
  if (!sizes.length) return [];
  // the total's row locked first; then the device's count, read after the lock (a statement of its own, so
  // it sees what the transaction that held the lock committed)
  const total0 = (
    await sql<{ bytes: string }>`select bytes from device_picture_total for update`.execute(trx)
  ).rows[0];
  const device0 = (
    await sql<{ bytes: string }>`
      select bytes from device_picture_usage where device_id = ${deviceId}`.execute(trx)
  ).rows[0];
  let total = Number(total0?.bytes ?? 0);
  let device = Number(device0?.bytes ?? 0);
  let taken = 0;
  const fits = sizes.map((n) => {
    if (device + n > limits.picturesPerDevice || total + n > limits.picturesTotal) return false;
    device += n;
    total += n;
    taken += n;
    return true;
  });
  if (taken > 0)
    await sql`
      with d as (
        insert into device_picture_usage (device_id, bytes) values (${deviceId}, ${taken})
        on conflict (device_id) do update set bytes = device_picture_usage.bytes + excluded.bytes
      )
      update device_picture_total set bytes = bytes + ${taken}`.execute(trx);
  return fits;
}

/** Gives back the room of deleted events' pictures (the retention), in the transaction that deleted them. */
export async function releasePictures(
  trx: Q,
  rows: readonly { device_id: number | null; image_bytes: number | null }[],
): Promise<void> {
  const byDevice = new Map<number, number>();
  let total = 0;
  for (const r of rows) {
    const n = Number(r.image_bytes ?? 0);
    if (!n) continue;
    total += n;
    if (r.device_id !== null) byDevice.set(r.device_id, (byDevice.get(r.device_id) ?? 0) + n);
  }
  if (!total) return;
  // the total first, as reservePictures locks it
  await sql`update device_picture_total set bytes = greatest(0, bytes - ${total})`.execute(trx);
  if (byDevice.size)
    await sql`
      update device_picture_usage u set bytes = greatest(0, u.bytes - v.n)
      from (values ${sql.join([...byDevice].map(([id, n]) => sql`(${id}::int, ${n}::bigint)`))}) v(id, n)
      where u.device_id = v.id`.execute(trx);
}

/** Writes the pictures stored now (their names given by `nameOf`) under storage/logs/. */
export async function writePictures(
  storageDir: string,
  files: readonly { name: string; bytes: Buffer }[],
): Promise<void> {
  if (!files.length) return;
  const dir = path.join(storageDir, PICTURES_DIR);
  await fs.mkdir(dir, { recursive: true });
  await Promise.all(files.map((f) => fs.writeFile(path.join(dir, f.name), f.bytes)));
}

/** Removes the files of deleted events' pictures; one already gone is fine. */
export async function removePictures(storageDir: string, names: readonly (string | null)[]): Promise<void> {
  const dir = path.join(storageDir, PICTURES_DIR);
  await Promise.all(
    names
      .filter((n): n is string => n !== null && PICTURE_NAME.test(n))
      .map((n) => fs.rm(path.join(dir, n), { force: true })),
  );
}

export const pictureName = (p: Picture) => `${randomBytes(12).toString('hex')}.${p.ext}`;

// ----- signed URLs -----

let keyLoaded: { db: Kysely<DB>; key: Promise<Buffer> } | null = null;

/** The key that signs pictures' URLs: one per installation (table installation_secrets), so any instance checks any. */
export function pictureUrlKey(db: Kysely<DB>): Promise<Buffer> {
  if (keyLoaded?.db !== db) {
    const key = (async () => {
      await sql`insert into installation_secrets (name, value)
        values ('picture_url_key', ${randomBytes(32).toString('hex')}) on conflict (name) do nothing`.execute(
        db,
      );
      const r = await sql<{ value: string }>`
        select value from installation_secrets where name = 'picture_url_key'`.execute(db);
      return Buffer.from(r.rows[0]!.value, 'hex');
    })();
    keyLoaded = { db, key };
    key.catch(() => (keyLoaded = null));
  }
  return keyLoaded.key;
}

const signatureOf = (key: Buffer, name: string, exp: number) =>
  createHmac('sha256', key).update(`${name}\n${exp}`).digest();

/** `/storage/logs/{name}?exp=…&sig=…`: good until `exp` (Unix seconds). */
export function signedPictureUrl(key: Buffer, name: string, now: Date): string {
  const exp = Math.floor(now.getTime() / 1000) + PICTURE_URL_TTL_S;
  return `/storage/${PICTURES_DIR}/${name}?exp=${exp}&sig=${signatureOf(key, name, exp).toString('base64url')}`;
}

/** Whether `exp` and `sig` are a signature of `name` that still holds at `now`. */
export function pictureSignatureHolds(
  key: Buffer,
  name: string,
  exp: unknown,
  sig: unknown,
  now: Date,
): boolean {
  if (typeof exp !== 'string' || typeof sig !== 'string' || !/^\d{1,12}$/.test(exp)) return false;
  const e = Number(exp);
  if (e * 1000 < now.getTime()) return false;
  const given = Buffer.from(sig, 'base64url');
  const expected = signatureOf(key, name, e);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
