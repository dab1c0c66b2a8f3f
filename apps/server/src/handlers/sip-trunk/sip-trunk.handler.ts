import { sql } from 'kysely';
import { DUMMY_PASSWORD } from '@lintel/core';
import { sipTrunkResource } from '@lintel/commands';
import { familyHandlers } from '../../engine/family';
import { tableStore } from '../../engine/table-store';
import { SipTrunkChangedEvent } from '../../events/define';

/**
 * SIP trunks: the declaration's store, with the password never read back (the placeholder says one is set)
 * and the placeholder sent back keeping the stored one. The declaration cannot say either.
 */
const base = tableStore(sipTrunkResource, {
  table: 'sip_trunks',
  computed: {
    password: sql`(case when t.password is not null and t.password <> '' then ${DUMMY_PASSWORD}::text end)`,
  },
  prepare: (values) => {
    const { password, ...rest } = values;
    return password === undefined || password === DUMMY_PASSWORD ? rest : { ...rest, password };
  },
});

/**
 * Each change told to the SIP service once it commits (SipTrunkChangedEvent): calls in from a provider are
 * known by the address its termination URI names, which Kamailio holds.
 */
export const sipTrunkStore: typeof base = {
  ...base,
  async create(trx, args, ctx) {
    const id = await base.create(trx, args, ctx);
    await ctx.app.outbox.emit(trx, SipTrunkChangedEvent, { projectId: ctx.caller.projectId });
    return id;
  },
  async update(trx, id, args, ctx, before) {
    await base.update(trx, id, args, ctx, before);
    await ctx.app.outbox.emit(trx, SipTrunkChangedEvent, { projectId: ctx.caller.projectId });
  },
  async remove(trx, id, ctx, options) {
    const kept = await base.remove(trx, id, ctx, options);
    await ctx.app.outbox.emit(trx, SipTrunkChangedEvent, { projectId: ctx.caller.projectId });
    return kept;
  },
};

export const sipTrunkHandlers = familyHandlers(sipTrunkStore);
