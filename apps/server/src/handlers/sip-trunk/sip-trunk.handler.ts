import { sql } from 'kysely';
import { DUMMY_PASSWORD } from '@lintel/core';
import { sipTrunkResource } from '@lintel/commands';
import { familyHandlers } from '../../engine/family';
import { tableStore } from '../../engine/table-store';

/**
 * SIP trunks: the declaration's store, with the password never read back (the placeholder says one is set)
 * and the placeholder sent back keeping the stored one. The declaration cannot say either.
 */
export const sipTrunkStore = tableStore(sipTrunkResource, {
  table: 'sip_trunks',
  computed: {
    password: sql`(case when t.password is not null and t.password <> '' then ${DUMMY_PASSWORD}::text end)`,
  },
  prepare: (values) => {
    const { password, ...rest } = values;
    return password === undefined || password === DUMMY_PASSWORD ? rest : { ...rest, password };
  },
});

export const sipTrunkHandlers = familyHandlers(sipTrunkStore);
