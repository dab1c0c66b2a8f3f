import { sql } from 'kysely';
import { markerResource } from '@lintel/commands';
import { tableStore } from '../../engine/table-store';

/** Markers: the declaration's store; only the count of users and the lower-case colour are said here. */
export const markerStore = tableStore(markerResource, {
  table: 'markers',
  computed: { users_count: sql`(select count(*)::int from user_markers um where um.marker_id = t.id)` },
  prepare: (v) => (typeof v.color === 'string' ? { ...v, color: v.color.toLowerCase() } : v),
});
