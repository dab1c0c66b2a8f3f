/**
 * Sending an `entities` device task: its batch of identifier-API requests, or the reading of the device's
 * lists (a full resync), through the gateway (MQTT or HTTP alike). Each request of a batch has its own request
 * id, `task-{id}-{n}`, the same at every attempt of the task: a device applies an id once, and every request
 * names its item by uid, so a batch sent twice (the server killed mid-batch, a lost reply) leaves the device
 * as sent once. The requests of one kind go `window` at a time; the kinds go in the batch's order (profiles
 * before the identifiers naming them, deletions before additions).
 */
import { facePhotoUri, type DeviceIdentifierItem, type DeviceTimeProfile } from '@lintel/core';
import type { ServerContext } from '../context';
import { AppError } from '../errors';
import type { DeviceAddress, DeviceReply } from '../devices/gateway';
import type { BatchItem, ItemOutcome } from './ledger';
import { accessSyncConfig } from './config';
import { readFacePhoto } from '../storage/files';

const ok = (status: number) => status >= 200 && status < 300;

const reasonOf = (reply: DeviceReply): string => {
  const b = reply.body as { message?: unknown; error?: unknown } | null;
  const text = typeof b?.message === 'string' ? b.message : typeof b?.error === 'string' ? b.error : '';
  return text ? `${reply.status}: ${text}` : String(reply.status);
};

/** Sends a batch; each item's outcome. A 5xx or no answer fails the whole task (retried by the job queue). */
export async function sendBatch(
  app: ServerContext,
  device: DeviceAddress,
  taskId: number,
  items: readonly BatchItem[],
): Promise<ItemOutcome[]> {
  const window = Math.max(1, accessSyncConfig(app).window);
  const out: ItemOutcome[] = new Array<ItemOutcome>(items.length);
  let start = 0;
  while (start < items.length) {
    const phase = `${items[start]!.method}:${items[start]!.kind}`;
    let end = start;
    while (end < items.length && `${items[end]!.method}:${items[end]!.kind}` === phase) end++;
    let next = start;
    const worker = async () => {
      while (next < end) {
        const n = next++;
        const item = items[n]!;
        const reply = await app.devices.request(device, {
          method: item.method,
          uri: item.uri,
          ...(item.body === undefined ? {} : { body: item.body }),
          requestId: `task-${taskId}-${n}`,
        });
        if (reply.status >= 500)
          throw new AppError('device_not_available', { serial: device.serial_number, status: reply.status });
        // removing what it does not hold is done
        const applied = ok(reply.status) || (item.method === 'DELETE' && reply.status === 404);
        out[n] = applied ? { item, ok: true } : { item, ok: false, error: reasonOf(reply) };
        if (applied) out[n] = await sendFacePhoto(app, device, `task-${taskId}-${n}`, item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(window, end - start) }, worker));
    start = end;
  }
  return out;
}

/**
 * A face identifier's item names its photo (`face_sha256`): once the device took the item, the photo follows
 * it (`PUT …/item/{uid}/face`, `{photo, sha256}`; docs/decisions.md "Face photos"), with a request id of its
 * own, so the item and its photo are applied or refused together and sent again together.
 */
async function sendFacePhoto(
  app: ServerContext,
  device: DeviceAddress,
  requestId: string,
  item: BatchItem,
): Promise<ItemOutcome> {
  const sha256 = (item.body as { face_sha256?: unknown } | undefined)?.face_sha256;
  if (item.kind !== 'identifier' || item.method !== 'PUT' || typeof sha256 !== 'string')
    return { item, ok: true };
  const photo = await readFacePhoto(app.config, sha256);
  // replaced since the plan: the task carrying the new photo follows
  if (!photo) return { item, ok: false, error: 'face photo no longer stored' };
  const reply = await app.devices.request(device, {
    method: 'PUT',
    uri: facePhotoUri(item.uri),
    body: { photo: photo.toString('base64'), sha256 },
    requestId: `${requestId}-face`,
  });
  if (reply.status >= 500)
    throw new AppError('device_not_available', { serial: device.serial_number, status: reply.status });
  return ok(reply.status) ? { item, ok: true } : { item, ok: false, error: reasonOf(reply) };
}

const PAGE = 500;

/** Reads a paged list of the device; null: it has no such list (404); `refused`: it answered otherwise. */
async function readList<T>(
  app: ServerContext,
  device: DeviceAddress,
  uri: string,
  requestId: string,
): Promise<T[] | null | { refused: number }> {
  const all: T[] = [];
  for (let page = 1; page <= 10_000; page++) {
    const reply = await app.devices.request(device, {
      method: 'GET',
      uri: `${uri}?page=${page}&limit=${PAGE}`,
      requestId: `${requestId}-${page}`,
    });
    if (reply.status === 404 && page === 1) return null;
    if (reply.status >= 500)
      throw new AppError('device_not_available', { serial: device.serial_number, status: reply.status });
    if (!ok(reply.status)) return { refused: reply.status };
    const body = reply.body as { items?: unknown; total?: unknown } | null;
    const items = Array.isArray(body?.items) ? (body.items as T[]) : [];
    all.push(...items);
    const total = typeof body?.total === 'number' ? body.total : null;
    if (items.length < PAGE || (total !== null && all.length >= total)) break;
  }
  return all;
}

/** The device's own lists of identifiers and time profiles (a full resync reads them). */
export async function readInventory(
  app: ServerContext,
  device: DeviceAddress,
  taskId: number,
): Promise<
  { identifiers: DeviceIdentifierItem[]; time_profiles: DeviceTimeProfile[] | null } | { refused: number }
> {
  const ids = await readList<DeviceIdentifierItem>(
    app,
    device,
    '/api/v1/access/identifier/items',
    `task-${taskId}-items`,
  );
  if (ids === null) return { refused: 404 };
  if ('refused' in ids) return ids;
  const profiles = await readList<DeviceTimeProfile>(
    app,
    device,
    '/api/v1/access/identifier/time_profiles',
    `task-${taskId}-profiles`,
  );
  if (profiles !== null && 'refused' in profiles) return profiles;
  return { identifiers: ids, time_profiles: profiles };
}
