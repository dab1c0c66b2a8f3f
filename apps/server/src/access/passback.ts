/**
 * Anti-passback areas (issue 21 item 8; docs/decisions.md "Anti-passback areas") as the one decision reads
 * them: each area's entry and exit devices (`AntiPassbackArea`), and an identifier's last passage in each area
 * — its last granted ACS event at one of the area's devices, `in` at an entry device, `out` at an exit one
 * (`DecisionContext.lastPassages`). Global anti-passback: the server enforces it where it decides.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AntiPassbackArea, Passage } from '@lintel/core';
import type { DB } from '../db/schema';

type Q = Kysely<DB> | Transaction<DB>;

/** The project's areas; a device both entry and exit of an area is its entry. */
export async function loadAreas(q: Q, projectId: number): Promise<AntiPassbackArea[]> {
  const rows = await sql<{
    id: number;
    reset_after_min: number | null;
    device_id: number | null;
    entry: boolean;
  }>`
    select a.id, a.reset_after_min, d.device_id, d.entry
    from access_areas a
    left join (
      select access_area_id, device_id, true as entry from access_area_entry_devices
      union all
      select access_area_id, device_id, false as entry from access_area_exit_devices
    ) d on d.access_area_id = a.id
    where a.project_id = ${projectId}
    order by a.id`.execute(q);
  const areas = new Map<
    number,
    { id: number; entry: number[]; exit: number[]; reset_after_s: number | null }
  >();
  for (const r of rows.rows) {
    const id = Number(r.id);
    let a = areas.get(id);
    if (!a)
      areas.set(
        id,
        (a = {
          id,
          entry: [],
          exit: [],
          reset_after_s: r.reset_after_min === null ? null : Number(r.reset_after_min) * 60,
        }),
      );
    if (r.device_id !== null) (r.entry ? a.entry : a.exit).push(Number(r.device_id));
  }
  return [...areas.values()].map((a) => ({ ...a, exit: a.exit.filter((d) => !a.entry.includes(d)) }));
}

/** The areas a device is an entry or exit of. */
export const areasAt = (areas: readonly AntiPassbackArea[], device: number) =>
  areas.filter((a) => a.entry.includes(device) || a.exit.includes(device));

/**
 * The identifiers' last passages, at `at` or before, in each of `areas` (by identifier, then area): a lookup
 * of the newest granted event per identifier and area, by the ACS log's (project, identifier, time) index.
 */
export async function lastPassages(
  q: Q,
  projectId: number,
  identifiers: readonly number[],
  areas: readonly AntiPassbackArea[],
  at: Date,
): Promise<Map<number, Map<number, Passage>>> {
  const out = new Map<number, Map<number, Passage>>();
  const used = areas.filter((a) => a.entry.length + a.exit.length > 0);
  if (!identifiers.length || !used.length) return out;
  const rows = await sql<{ identifier_id: number; area_id: number; device_id: number; created_at: Date }>`
    select i.id as identifier_id, a.id as area_id, l.device_id, l.created_at
    from (values ${sql.join(identifiers.map((id) => sql`(${id}::int)`))}) as i(id)
    cross join (values ${sql.join(
      used.map((a) => sql`(${a.id}::int, array[${sql.join([...a.entry, ...a.exit])}]::int[])`),
    )}) as a(id, devices)
    cross join lateral (
      select e.device_id, e.created_at from acs_events e
      where e.project_id = ${projectId} and e.identifier_id = i.id and e.decision = 'granted'
        and e.device_id = any(a.devices) and e.created_at <= ${at}
      order by e.created_at desc, e.id desc limit 1
    ) l`.execute(q);
  const byId = new Map(used.map((a) => [a.id, a]));
  for (const r of rows.rows) {
    const area = byId.get(Number(r.area_id))!;
    const id = Number(r.identifier_id);
    let m = out.get(id);
    if (!m) out.set(id, (m = new Map()));
    m.set(area.id, {
      direction: area.entry.includes(Number(r.device_id)) ? 'in' : 'out',
      at: new Date(r.created_at).getTime(),
    });
  }
  return out;
}

/** A passage just made (a granted decision at `device`), added to an identifier's last passages. */
export function passed(
  last: Map<number, Passage>,
  areas: readonly AntiPassbackArea[],
  device: number,
  at: number,
): void {
  for (const a of areasAt(areas, device))
    last.set(a.id, { direction: a.entry.includes(device) ? 'in' : 'out', at });
}
