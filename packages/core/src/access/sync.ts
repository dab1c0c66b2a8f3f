/**
 * The device sync's difference (issue 21 item 4): from what a device must hold — its identifiers with their
 * periods and pass limits, its schedules as time profiles — and what it holds, the fewest requests of the
 * device's identifier API (../shared/DEVICES.md `/api/v1/access/identifier/item…`) that make the second the
 * first, in batches (one device task each). Pure; the server's sync calls it, the tests and the bench too.
 *
 * - Every request names its item by uid (`PUT …/item/{uid}`, `DELETE …/item/{uid}`): applying a batch twice
 *   leaves the device as applying it once.
 * - An item the device holds as it should be is not sent (nothing it would count twice: a pass counter is
 *   the device's, and a PUT of an unchanged identifier is never made).
 * - Nothing is ever a `replace`: the device's other identifiers are only removed one by one, by name, when the
 *   platform knows them and they are not wanted; an empty wanted list with an unknown holding is no request.
 * - Order: the time profiles an identifier will name go first, then deletions, then identifiers, then the
 *   profiles no longer named — so the device never holds an identifier naming a profile it lacks.
 */
import type { DeviceIdentifierType } from './identifiers';

/** An identifier as a device holds it (DEVICES.md create body, with our `uid` and time profile keys). */
export interface DeviceIdentifierItem {
  uid: string;
  identifier_owner: { name: string; type: 'owner' | 'guest' };
  identifier_type: DeviceIdentifierType;
  identifier_number: string;
  lock: 'first' | 'second' | 'all';
  valid: {
    time: { is_permanent: boolean; from?: string | null; to?: string | null };
    passes: { is_permanent: boolean; max_passes?: number | null };
  };
  /** the keys of the time profiles in which it opens; empty: at all times */
  time_profiles: string[];
}

/** A schedule as a device keeps it (`timeProfileOf`), named by `key`. */
export interface DeviceTimeProfile {
  key: string;
  [field: string]: unknown;
}

export interface DeviceHolding {
  identifiers: readonly DeviceIdentifierItem[];
  time_profiles: readonly DeviceTimeProfile[];
}

export interface DeviceRequest {
  method: 'PUT' | 'DELETE';
  uri: string;
  body?: unknown;
}

export const IDENTIFIER_ITEM_URI = '/api/v1/access/identifier/item';
export const TIME_PROFILE_URI = '/api/v1/access/identifier/time_profile';
/** Requests in one batch (one device task) unless told otherwise. */
export const SYNC_BATCH_SIZE = 500;

export interface SyncPlan {
  requests: DeviceRequest[];
  batches: DeviceRequest[][];
  counts: {
    identifiers: { put: number; delete: number; kept: number };
    time_profiles: { put: number; delete: number; kept: number };
  };
}

/** A value with its object keys sorted, so two equal items compare equal as text. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

/** What of an identifier item the platform sends (and so compares): not the device's own counters. */
function identifierBody(i: DeviceIdentifierItem): Omit<DeviceIdentifierItem, 'uid'> {
  return {
    identifier_owner: { name: i.identifier_owner.name, type: i.identifier_owner.type },
    identifier_type: i.identifier_type,
    identifier_number: i.identifier_number,
    lock: i.lock,
    valid: {
      time: i.valid.time.is_permanent
        ? { is_permanent: true }
        : { is_permanent: false, from: i.valid.time.from ?? null, to: i.valid.time.to ?? null },
      passes: i.valid.passes.is_permanent
        ? { is_permanent: true }
        : { is_permanent: false, max_passes: i.valid.passes.max_passes ?? 0 },
    },
    time_profiles: [...(i.time_profiles ?? [])].sort(),
  };
}

const same = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
const path = (base: string, key: string) => `${base}/${encodeURIComponent(key)}`;

/**
 * The requests that take a device from what it holds to what it must hold, batched by `batchSize`. `held`
 * null: the holding is unknown (never read, or lost) — only what must be there is sent, nothing is removed;
 * read the device's list (`inventoryRequest`) and diff again to remove the rest.
 */
export function diffDeviceAccess(
  want: DeviceHolding,
  held: DeviceHolding | null,
  batchSize = SYNC_BATCH_SIZE,
): SyncPlan {
  const heldIds = new Map((held?.identifiers ?? []).map((i) => [i.uid, i]));
  const heldProfiles = new Map((held?.time_profiles ?? []).map((p) => [p.key, p]));
  const wantIds = new Map(want.identifiers.map((i) => [i.uid, i]));
  const wantProfiles = new Map(want.time_profiles.map((p) => [p.key, p]));
  const counts: SyncPlan['counts'] = {
    identifiers: { put: 0, delete: 0, kept: 0 },
    time_profiles: { put: 0, delete: 0, kept: 0 },
  };
  const profilePuts: DeviceRequest[] = [];
  for (const [key, p] of [...wantProfiles].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const h = heldProfiles.get(key);
    // only what the platform sends is compared (a device may add fields of its own)
    if (h && same(Object.fromEntries(Object.keys(p).map((k) => [k, h[k]])), p)) counts.time_profiles.kept++;
    else {
      profilePuts.push({ method: 'PUT', uri: path(TIME_PROFILE_URI, key), body: canonical(p) });
      counts.time_profiles.put++;
    }
  }
  const idDeletes: DeviceRequest[] = [];
  const idPuts: DeviceRequest[] = [];
  if (held)
    for (const uid of [...heldIds.keys()].sort())
      if (!wantIds.has(uid)) {
        idDeletes.push({ method: 'DELETE', uri: path(IDENTIFIER_ITEM_URI, uid) });
        counts.identifiers.delete++;
      }
  for (const uid of [...wantIds.keys()].sort()) {
    const w = identifierBody(wantIds.get(uid)!);
    const h = heldIds.get(uid);
    if (h && same(identifierBody(h), w)) counts.identifiers.kept++;
    else {
      idPuts.push({ method: 'PUT', uri: path(IDENTIFIER_ITEM_URI, uid), body: canonical({ uid, ...w }) });
      counts.identifiers.put++;
    }
  }
  const profileDeletes: DeviceRequest[] = [];
  if (held)
    for (const key of [...heldProfiles.keys()].sort())
      if (!wantProfiles.has(key)) {
        profileDeletes.push({ method: 'DELETE', uri: path(TIME_PROFILE_URI, key) });
        counts.time_profiles.delete++;
      }
  const requests = [...profilePuts, ...idDeletes, ...idPuts, ...profileDeletes];
  const size = Math.max(1, Math.floor(batchSize));
  const batches: DeviceRequest[][] = [];
  for (let i = 0; i < requests.length; i += size) batches.push(requests.slice(i, i + size));
  return { requests, batches, counts };
}

/** The request reading one page of what a device holds (`GET …/identifier/items?page&limit`). */
export function inventoryRequest(page: number, limit = 500): { method: 'GET'; uri: string } {
  return { method: 'GET', uri: `/api/v1/access/identifier/items?page=${page}&limit=${limit}` };
}

/**
 * An identifier as the device item it becomes: its owner's name (or "Guest identifier"), its type in the
 * device's words, the lock, the period (`_u` instants) and the pass limit, and the keys of the time
 * profiles in which it opens at this device (none: at all times). The uid is stable per identifier
 * (`identifier-{id}`), so a resend names the same item.
 */
export function deviceIdentifierItem(
  i: {
    id: number;
    type: DeviceIdentifierType;
    value: string;
    owner_name: string;
    owner_type: 'owner' | 'guest';
    period_restrict_active: boolean;
    period_restrict_from_u: string | null;
    period_restrict_to_u: string | null;
    passes_restrict_active: boolean;
    passes_restrict_max_count: number;
  },
  timeProfiles: readonly string[] = [],
  lock: DeviceIdentifierItem['lock'] = 'all',
): DeviceIdentifierItem {
  return {
    uid: `identifier-${i.id}`,
    identifier_owner: { name: i.owner_name, type: i.owner_type },
    identifier_type: i.type,
    identifier_number: i.value,
    lock,
    valid: {
      time: i.period_restrict_active
        ? { is_permanent: false, from: i.period_restrict_from_u, to: i.period_restrict_to_u }
        : { is_permanent: true },
      passes: i.passes_restrict_active
        ? { is_permanent: false, max_passes: i.passes_restrict_max_count }
        : { is_permanent: true },
    },
    time_profiles: [...timeProfiles].sort(),
  };
}
