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
import {
  devicePassLimit,
  type AccessData,
  type AccessIndex,
  type AccessRuleSpec,
  type DecisionIdentifier,
} from './decide';
import { DeviceIdentifierTypes, type DeviceIdentifierType, type IdentifierType } from './identifiers';
import { holidayDays, timeProfileOf, type ScheduleSpec, type TimeProfile } from './schedules';

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
  /** the keys of the time profiles in which it must not open (a prohibition with schedules) */
  deny_time_profiles: string[];
  /**
   * a face identifier's photo, by its SHA-256 (hex): `PUT …/item/{uid}/face` follows the item's PUT with the
   * picture. In the body, so a new photo is a difference of the item; absent while it has none.
   */
  face_sha256?: string;
}

/** The path of an identifier item's face photo (`PUT` with `{photo: base64, sha256}`; docs/decisions.md). */
export const facePhotoUri = (itemUri: string) => `${itemUri}/face`;

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
export function canonical(v: unknown): unknown {
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
export function identifierBody(i: DeviceIdentifierItem): Omit<DeviceIdentifierItem, 'uid'> {
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
    deny_time_profiles: [...(i.deny_time_profiles ?? [])].sort(),
    ...(typeof i.face_sha256 === 'string' ? { face_sha256: i.face_sha256 } : {}),
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
    /** a face identifier's photo (SHA-256, hex), if it has one */
    photo_sha256?: string | null;
  },
  timeProfiles: readonly string[] = [],
  lock: DeviceIdentifierItem['lock'] = 'all',
  denyProfiles: readonly string[] = [],
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
    deny_time_profiles: [...denyProfiles].sort(),
    ...(i.type === 'face_id' && i.photo_sha256 ? { face_sha256: i.photo_sha256 } : {}),
  };
}

// ----- what a device must hold, from the rules; and back, for the simulator ------------------------------

/** An identifier as the sync reads it: the decision's fields, its type and value, its owner's name and groups. */
export interface SyncIdentifier extends DecisionIdentifier {
  type: IdentifierType;
  value: string;
  owner_name: string;
  owner_type: 'owner' | 'guest';
  /** the owner's groups with the groups above them */
  groups?: readonly number[];
  /**
   * the passes each device counted itself, by device id (none: no pass there); read for a pass limit, whose
   * device holds the limit less the passes counted elsewhere (`devicePassLimit`)
   */
  passes_at?: ReadonlyMap<number, number>;
  /** a face identifier's photo (SHA-256, hex), if it has one */
  photo_sha256?: string | null;
}

/**
 * What a device must hold, derived from the rules: each active identifier a device can take that a
 * permitting rule naming the device reaches — with the time profiles of those rules (none when one of them
 * is in force at all times) and, as deny profiles, those of the prohibitions reaching it — and the time
 * profiles named. An identifier prohibited at all times there, or whose permitting rules all name only
 * schedules that do not exist, is not held (the device refuses it as unknown; the platform names why).
 * A pass limit is held as what is left of it once the passes counted elsewhere are taken (`devicePassLimit`).
 */
export function wantedAt(
  device: number,
  index: AccessIndex,
  identifiers: Iterable<SyncIdentifier>,
  schedules: ReadonlyMap<number, ScheduleSpec & { name?: string }>,
  tz: string,
  holidays: readonly string[] = [],
): DeviceHolding {
  const items: DeviceIdentifierItem[] = [];
  const named = new Set<number>();
  for (const i of identifiers) {
    const type = DeviceIdentifierTypes[i.type];
    if (!i.is_active || type === null) continue;
    const rules = index.matching(i, device, i.groups ?? []);
    let always = false;
    let banned = false;
    const allow = new Set<number>();
    const deny = new Set<number>();
    for (const r of rules) {
      if (r.prohibition) {
        if (r.time_rules === null) banned = true;
        else for (const s of r.time_rules) deny.add(s);
      } else if (r.time_rules === null) always = true;
      else for (const s of r.time_rules) allow.add(s);
    }
    if (banned || (!always && allow.size === 0)) continue;
    const allowed = always ? [] : [...allow];
    for (const s of [...allowed, ...deny]) named.add(s);
    items.push(
      deviceIdentifierItem(
        {
          ...i,
          type,
          passes_restrict_max_count: i.passes_restrict_active
            ? devicePassLimit(i.passes_restrict_max_count, i.passes_count, i.passes_at?.get(device) ?? 0)
            : i.passes_restrict_max_count,
        },
        allowed.map((s) => `schedule-${s}`),
        'all',
        [...deny].map((s) => `schedule-${s}`),
      ),
    );
  }
  const profiles: TimeProfile[] = [];
  for (const id of [...named].sort((a, b) => a - b)) {
    const s = schedules.get(id);
    if (s) profiles.push(timeProfileOf({ ...s, id, name: s.name ?? `schedule ${id}` }, tz, holidays));
  }
  return { identifiers: items, time_profiles: profiles as unknown as DeviceTimeProfile[] };
}

/**
 * What a device holds, read back as the decision's data, so a device (the simulator) decides with the one
 * function from what it was sent alone: one rule per held identifier (its profiles, or at all times), one
 * prohibition for its deny profiles, the profiles as schedules, their holidays as the calendar. `lookup`
 * finds an identifier by device type and number.
 */
export function accessDataFromHolding(
  device: number,
  holding: {
    identifiers: ReadonlyArray<DeviceIdentifierItem & { passes_used?: number }>;
    time_profiles: readonly DeviceTimeProfile[];
  },
): {
  data: AccessData;
  holidays: ReadonlySet<number>;
  lookup: (type: DeviceIdentifierType, number: string) => DecisionIdentifier | undefined;
} {
  const profileIds = new Map<string, number>();
  const schedules = new Map<number, ScheduleSpec>();
  const holidays: string[] = [];
  holding.time_profiles.forEach((raw, k) => {
    const p = raw as unknown as TimeProfile;
    profileIds.set(p.key, k + 1);
    schedules.set(k + 1, {
      valid_from: p.valid_from,
      valid_to: p.valid_to,
      is_all_day: false,
      repeat_mode: p.repeat_mode,
      repeat_days: p.days,
      time_from: p.from,
      time_to: p.to,
    });
    holidays.push(...(p.holidays ?? []));
  });
  const rules: AccessRuleSpec[] = [];
  const byNumber = new Map<string, DecisionIdentifier>();
  const known = (keys: readonly string[]) =>
    keys.map((key) => profileIds.get(key)).filter((id): id is number => id !== undefined);
  holding.identifiers.forEach((item, k) => {
    const id = k + 1;
    const time = item.valid?.time;
    const passes = item.valid?.passes;
    byNumber.set(`${item.identifier_type}:${item.identifier_number}`, {
      id,
      is_active: true,
      owner: null,
      period_restrict_active: time ? !time.is_permanent : false,
      period_restrict_from_u: time && !time.is_permanent ? (time.from ?? null) : null,
      period_restrict_to_u: time && !time.is_permanent ? (time.to ?? null) : null,
      passes_restrict_active: passes ? !passes.is_permanent : false,
      passes_restrict_max_count: passes && !passes.is_permanent ? (passes.max_passes ?? 0) : 0,
      passes_count: item.passes_used ?? 0,
    });
    const allow = item.time_profiles ?? [];
    const base = { devices: [device], users: [], identifiers: [id], domains: [] };
    // a profile it names but does not hold never opens (as a rule naming only missing schedules)
    rules.push({
      ...base,
      id: 2 * id,
      prohibition: false,
      time_rules: allow.length ? [...known(allow), 0] : [],
    });
    const deny = known(item.deny_time_profiles ?? []);
    if (deny.length) rules.push({ ...base, id: 2 * id - 1, prohibition: true, time_rules: deny });
  });
  return {
    data: { rules, schedules },
    holidays: holidayDays(holidays),
    lookup: (type, number) => byNumber.get(`${type}:${number}`),
  };
}
