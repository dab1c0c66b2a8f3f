import { sql } from 'kysely';
import { domainTypeResource } from '@lintel/commands';
import { tableStore } from '../../engine/table-store';

/** Domain types: the declaration's store; a type that groups still use stays, and says how many. */
export const domainTypeStore = tableStore(domainTypeResource, {
  table: 'domain_types',
  computed: { domains_count: sql`(select count(*)::int from domains d where d.domain_type_id = t.id)` },
  dependents: { domains: { table: 'domains', column: 'domain_type_id' } },
});
