import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';

/** The counted features of a licence (spec part 1 §3: sip, mobile_app and ukey2 carry a `license_count`). */
export type CountedFeature = 'sip' | 'mobile_app' | 'ukey2';

type Counter = (db: Kysely<DB>, projectId: number) => Promise<number>;

/**
 * How much of each counted feature a project uses: virtual numbers count against SIP. The families that
 * hold the other counted things (mobile clients, ukey2 keys) register their counter here when they arrive;
 * until then a feature with no counter uses 0 — nothing of it exists yet.
 */
const counters = new Map<CountedFeature, Counter>([
  // virtual numbers use the SIP licences
  [
    'sip',
    async (db, projectId) =>
      Number(
        (
          await db
            .selectFrom('sip_numbers')
            .select((e) => e.fn.countAll<number>().as('n'))
            .where('project_id', '=', projectId)
            .executeTakeFirstOrThrow()
        ).n,
      ),
  ],
]);

export function registerUsageCounter(feature: CountedFeature, count: Counter): void {
  counters.set(feature, count);
}

export async function licenceUsageCounts(
  db: Kysely<DB>,
  projectId: number,
): Promise<Record<CountedFeature, number>> {
  const out: Record<CountedFeature, number> = { sip: 0, mobile_app: 0, ukey2: 0 };
  for (const [feature, count] of counters) out[feature] = await count(db, projectId);
  return out;
}
