import { sql } from 'kysely';
import { DUMMY_PASSWORD } from '@lintel/core';
import { sipNumberResource } from '@lintel/commands';
import { AppError } from '../../errors';
import { familyHandlers, type FamilyCtx } from '../../engine/family';
import { tableStore } from '../../engine/table-store';
import { SipNumberChangedEvent } from '../../events/define';
import { sipHa1 } from '../../sip/config';

const base = tableStore(sipNumberResource, {
  table: 'sip_numbers',
  computed: {
    domain: sql`(select json_build_object('id', d.id, 'name', d.name) from domains d where d.id = t.domain_id)`,
    // never the password: the placeholder says one is set
    password: sql`(case when t.password_ha1 is not null then ${DUMMY_PASSWORD}::text end)`,
  },
});

/**
 * The password as Kamailio checks it: its HA1 for the number and the installation's realm, never the password
 * (docs/decisions.md "Telephony: the SIP service"). The placeholder keeps the stored one.
 */
async function credentials(
  trx: Parameters<typeof base.create>[0],
  values: Record<string, unknown>,
  number: string,
  ctx: FamilyCtx,
) {
  const { password, ...rest } = values;
  if (password === undefined || password === DUMMY_PASSWORD) return rest;
  // the realm in force: the SIP settings' (settings.sip_update), else LINTEL_SIP_REALM; read in the
  // request's transaction (PGlite has one connection: a read beside it waited for it, which waited for this)
  const realm = (await ctx.app.sip.currentConfig(trx)).realm;
  return { ...rest, password_ha1: sipHa1(number, realm, String(password)), ha1_realm: realm };
}

/**
 * Virtual numbers: the declaration's store, with the group's name beside its id, the password kept as its
 * HA1, and each change told to the SIP service once it commits (SipNumberChangedEvent).
 */
export const sipNumberStore: typeof base = {
  ...base,
  async create(trx, args, ctx) {
    const id = await base.create(trx, (await credentials(trx, args, args.number, ctx)) as typeof args, ctx);
    await ctx.app.outbox.emit(trx, SipNumberChangedEvent, {
      projectId: ctx.caller.projectId,
      numbers: [args.number],
    });
    return id;
  },
  async update(trx, id, args, ctx, before) {
    // activating and deactivating is a permission of its own (spec part 2 §6 "activate")
    if (
      args.is_active !== undefined &&
      args.is_active !== before.is_active &&
      !ctx.caller.auth.permissions.has('sip_numbers.activate')
    )
      throw new AppError('method_prohibited');
    const number = args.number ?? before.number;
    // the HA1 is made with the number: a new number needs its password again
    if (
      number !== before.number &&
      before.password !== null &&
      (args.password ?? DUMMY_PASSWORD) === DUMMY_PASSWORD
    )
      throw new AppError('check_fields_data', {
        fields: [{ field: 'password', rule: 'required' }],
      });
    await base.update(trx, id, (await credentials(trx, args, number, ctx)) as typeof args, ctx, before);
    await ctx.app.outbox.emit(trx, SipNumberChangedEvent, {
      projectId: ctx.caller.projectId,
      numbers: [...new Set([before.number, number])],
    });
  },
  async remove(trx, id, ctx, options) {
    const row = await trx.selectFrom('sip_numbers').select('number').where('id', '=', id).executeTakeFirst();
    const kept = await base.remove(trx, id, ctx, options);
    if (!kept && row)
      await ctx.app.outbox.emit(trx, SipNumberChangedEvent, {
        projectId: ctx.caller.projectId,
        numbers: [row.number],
      });
    return kept;
  },
};

export const sipNumberHandlers = familyHandlers(sipNumberStore);
