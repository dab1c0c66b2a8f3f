import { sql } from 'kysely';
import { sipNumberResource } from '@lintel/commands';
import { familyHandlers } from '../../engine/family';
import { tableStore } from '../../engine/table-store';

/** Virtual numbers: the declaration's store, with the group's name beside its id. */
export const sipNumberStore = tableStore(sipNumberResource, {
  table: 'sip_numbers',
  computed: {
    domain: sql`(select json_build_object('id', d.id, 'name', d.name) from domains d where d.id = t.domain_id)`,
  },
});

export const sipNumberHandlers = familyHandlers(sipNumberStore);
