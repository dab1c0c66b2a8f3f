import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  featureWindows,
  LicenceAreas,
  limitKeysKnown,
  windowDays,
  windowOutside,
  type GroupLicenceFacts,
  type Window,
} from '@lintel/core';
import type { Caller } from '../engine/caller';
import { AppError } from '../errors';
import { limitLockKey, lockCount, usedInGroup } from './limits';

/**
 * The rules of a group's licence settings and maximums (spec part 2 §8 "Licences and limits"), checked in
 * the transaction that writes them, after the write (so every rule reads the tree as it will be) and under
 * one lock per project (`group-licences:<project>`): two changes of groups' licences never check against
 * each other's half-written state, so two sibling updates cannot together pass their parent's maximum.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Q = Kysely<any>;

interface Row {
  id: number;
  name: string;
  license_settings: { is_enabled?: boolean; licenses?: GroupLicenceFacts['licenses'] };
  license_limits: Record<string, unknown>;
}

const enabled = (r: Row) => r.license_settings.is_enabled === true;
const maxOf = (r: Row, key: string): number | null =>
  typeof r.license_limits[key] === 'number' ? (r.license_limits[key] as number) : null;
const facts = (r: Row): GroupLicenceFacts => ({
  licenses: Array.isArray(r.license_settings.licenses) ? r.license_settings.licenses : [],
});

/** The one lock of a project's group licence changes (held to the end of the transaction). */
export const lockGroupLicences = (q: Q, projectId: number) => lockCount(q, `group-licences:${projectId}`);

/**
 * Changing a group's licence settings or maximums needs the licence permission that reaches it (spec part 2
 * §6 "edit counts (self, descendant, all)"): all — any group; descendant — a group below the caller's own;
 * self — one of the caller's own groups. A new group is below its parent: descendant reaches it when the
 * parent is in the caller's subtree.
 */
export async function assertMayEditLicences(
  caller: Caller,
  target: { id: number } | { parentId: number | null },
): Promise<void> {
  if (caller.has('licenses.edit_count_all')) return;
  const own = await caller.domains();
  const subtree = await caller.subtree();
  if ('id' in target) {
    if (own.includes(target.id) && caller.has('licenses.edit_count_self')) return;
    if (
      !own.includes(target.id) &&
      subtree.includes(target.id) &&
      caller.has('licenses.edit_count_descendant')
    )
      return;
  } else if (
    target.parentId !== null &&
    subtree.includes(target.parentId) &&
    caller.has('licenses.edit_count_descendant')
  )
    return;
  throw new AppError('method_prohibited', { reason: 'licence_settings' });
}

async function rowOf(q: Q, id: number): Promise<Row> {
  const r = await sql<Row>`
    select id, name, license_settings, license_limits from domains where id = ${id}`.execute(q);
  return r.rows[0]!;
}

/** The groups above one, nearest first. */
async function ancestorsOf(q: Q, id: number): Promise<Row[]> {
  const r = await sql<Row & { depth: number }>`
    with recursive up(id, depth) as (
      select parent_id, 1 from domains where id = ${id} and parent_id is not null
      union all
      select d.parent_id, up.depth + 1 from up join domains d on d.id = up.id
        where d.parent_id is not null and up.depth < 64
    )
    select d.id, d.name, d.license_settings, d.license_limits, up.depth
    from up join domains d on d.id = up.id order by up.depth`.execute(q);
  return r.rows;
}

/**
 * The nearest groups below one that match (`capped` for a feature, or with settings switched on): the
 * walk down stops at each, as they answer for what is below them.
 */
async function frontier(q: Q, id: number, match: RawBuilder<boolean>): Promise<Row[]> {
  const r = await sql<Row>`
    with recursive down(id, hit) as (
      select d.id, coalesce(${match}, false) from domains d where d.parent_id = ${id}
      union all
      select d.id, coalesce(${match}, false) from domains d join down on d.parent_id = down.id where not down.hit
    )
    select d.id, d.name, d.license_settings, d.license_limits from down join domains d on d.id = down.id
    where down.hit order by d.id`.execute(q);
  return r.rows;
}

const cappedFor = (key: string) => sql<boolean>`jsonb_typeof(d.license_limits->${key}) = 'number'`;
const switchedOn = sql<boolean>`d.license_settings->>'is_enabled' = 'true'`;

async function frontierSum(q: Q, id: number, key: string): Promise<number> {
  return (await frontier(q, id, cappedFor(key))).reduce((s, r) => s + (maxOf(r, key) ?? 0), 0);
}

const period = (w: Window) => {
  const d = windowDays(w);
  return `${d.from ?? '…'} – ${d.to ?? '…'}`;
};
/** The span of windows for a message (they are merged, so their envelope reads right for one or several). */
const span = (ws: readonly Window[]): Window => [ws[0]![0], ws[ws.length - 1]![1]];

/** A group's licences against those of the group above it that has settings switched on. */
function periodConflict(
  outer: Row,
  inner: Row,
  code: 'license_period_child_conflict' | 'license_period_parent_conflict',
): AppError | null {
  for (const area of LicenceAreas) {
    const o = featureWindows(facts(outer), area);
    // a feature the group above does not grant is off below it whatever the child says (the gate's rule)
    if (!o.length) continue;
    const w = windowOutside(o, featureWindows(facts(inner), area));
    if (w)
      return new AppError(code, {
        feature: area,
        period: period(w),
        parent: outer.name,
        parent_period: period(span(o)),
        child: inner.name,
        field: 'license_settings.licenses',
      });
  }
  return null;
}

export interface LicenceChange {
  /** maximums given a value or a new one (`license_limits` keys) */
  limits: readonly string[];
  /** the licence settings changed (switch, licences, periods) */
  settings: boolean;
  /** the group moved under another parent (or was just created under one) */
  moved: boolean;
}

/**
 * The catalogue's conflicts of a group's licences, read from the tree as written (call after the write, in
 * the same transaction, under `lockGroupLicences`); throws the first found, which rolls the write back:
 *
 * 1. a maximum below what the group's subtree already uses — `license_used_exceeds_limit {feature, used, max}`
 *    (counted under the exclusive lock of that maximum, so adds in flight are counted and later ones see it);
 * 2. the maximums of the nearest capped groups below it summing past its own — `children_license_sum_exceeded`;
 * 3. its own maximum with those of the other nearest capped groups under the nearest capped group above it
 *    summing past that group's — `children_license_sum_exceeded` naming that group;
 * 4. moved with what it holds under capped groups that cannot take it — `limit_exceeded {used, max}`;
 * 5. its licence periods going beyond those of the nearest group above with settings on —
 *    `license_period_child_conflict`;
 * 6. the licences of the nearest groups below with settings on going beyond its own —
 *    `license_period_parent_conflict`.
 */
export async function checkGroupLicences(q: Q, groupId: number, change: LicenceChange): Promise<void> {
  const g = await rowOf(q, groupId);
  const above = change.moved || change.settings || change.limits.length ? await ancestorsOf(q, groupId) : [];

  for (const key of change.limits) {
    const max = maxOf(g, key);
    if (max === null) continue;
    await lockCount(q, limitLockKey(key, g.id));
    const used = await usedInGroup(q, key, g.id);
    if (used > max)
      throw new AppError('license_used_exceeds_limit', {
        feature: key,
        used,
        max,
        group: g.name,
        field: `license_limits.${key}`,
      });
    const sum = await frontierSum(q, g.id, key);
    if (sum > max)
      throw new AppError('children_license_sum_exceeded', {
        feature: key,
        sum,
        max,
        group: g.name,
        field: `license_limits.${key}`,
      });
  }

  // as a child: its maximum (set, raised, or brought along by a move) under the nearest capped group above
  const asChild = change.moved ? limitKeysKnown() : change.limits;
  for (const key of asChild) {
    const parent = above.find((a) => maxOf(a, key) !== null);
    if (!parent) continue;
    const max = maxOf(parent, key)!;
    const sum = await frontierSum(q, parent.id, key);
    if (sum > max)
      throw new AppError('children_license_sum_exceeded', {
        feature: key,
        sum,
        max,
        group: parent.name,
        field: `license_limits.${key}`,
      });
  }

  if (change.moved)
    for (const key of limitKeysKnown()) {
      const capped = above.filter((a) => maxOf(a, key) !== null).sort((a, b) => a.id - b.id);
      if (!capped.length || (await usedInGroup(q, key, g.id)) === 0) continue;
      for (const a of capped) {
        await lockCount(q, limitLockKey(key, a.id));
        const used = await usedInGroup(q, key, a.id);
        if (used > maxOf(a, key)!)
          throw new AppError('limit_exceeded', {
            used,
            max: maxOf(a, key),
            group: a.name,
            feature: key,
            field: 'parent_id',
          });
      }
    }

  if (!change.settings && !change.moved) return;
  const parent = above.find(enabled);
  if (enabled(g) && parent) {
    const e = periodConflict(parent, g, 'license_period_child_conflict');
    if (e) throw e;
  }
  // the groups below answer to this one when its settings are on, else to the nearest one above that has them
  const outer = enabled(g) ? g : parent;
  if (outer)
    for (const child of await frontier(q, g.id, switchedOn)) {
      const e = periodConflict(outer, child, 'license_period_parent_conflict');
      if (e) throw e;
    }
}
