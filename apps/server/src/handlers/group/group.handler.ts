import { sql } from 'kysely';
import type { z } from 'zod';
import type { GenerateGroups, GroupTreeNode } from '@lintel/commands';
import { AppError } from '../../errors';
import { naturalSortKey } from '../../engine/list';
import { audit } from '../../audit/audit';
import { familyCtx, familyHandlers, visibleSql, type FamilyCtx } from '../../engine/family';
import type { SomeHandlers } from '../../pipeline/handler';
import {
  assertMayPlaceUnder,
  DefaultGuestLimits,
  DefaultLicenseSettings,
  DefaultWhiteLabel,
  groupStore,
} from './group.store';
import { groupWhiteLabelHandlers } from './group.whitelabel';

interface Node {
  id: number;
  name: string;
  parent_id: number | null;
  logic_address: string | null;
  type: string | null;
}

async function visibleNodes(c: FamilyCtx, extra = sql<boolean>`true`): Promise<Node[]> {
  const r =
    await sql<Node>`select t.id, t.name, t.parent_id, t.logic_address, dt.name as type from ${groupStore.from}
    where ${await visibleSql(groupStore, c.caller, 'view')} and ${extra} order by ${naturalSortKey(sql`t.name`)}, t.name, t.id`.execute(
      c.app.db,
    );
  return r.rows;
}

/** The numbers and names a generation would make, and which of them are taken already. */
async function plan(c: FamilyCtx, args: z.output<typeof GenerateGroups>) {
  const parent = await c.app.db
    .selectFrom('domains')
    .select(['id', 'name', 'logic_address'])
    .where('id', '=', args.id)
    .where('project_id', '=', c.caller.projectId)
    .executeTakeFirst();
  if (!parent) throw new AppError('item_not_found');
  const siblings = await c.app.db
    .selectFrom('domains')
    .select(['name', 'logic_address'])
    .where('parent_id', '=', args.id)
    .execute();
  const names = new Set(siblings.map((s) => s.name.toLowerCase()));
  const addresses = new Set(siblings.map((s) => s.logic_address).filter(Boolean));
  const { numeration } = args;
  let next = numeration.from;
  if (numeration.is_start_youngest_num) {
    // carry on after the highest number already used by the parent's children with this prefix
    const used = siblings
      .map((s) => (s.name.startsWith(args.prefix) ? Number(s.name.slice(args.prefix.length).trim()) : NaN))
      .filter((n) => Number.isInteger(n));
    if (used.length) next = Math.max(...used) + 1;
  }
  const except = new Set(numeration.except);
  const items: Array<{ name: string; logic_address: string | null; number: number; exists: boolean }> = [];
  for (let i = 0; items.length < args.count && i < args.count + except.size + 1000; i++, next++) {
    if (except.has(next)) continue;
    const name = `${args.prefix}${next}`;
    const logic_address = numeration.is_in_youngest_num
      ? `${parent.logic_address ? `${parent.logic_address}.` : ''}${next}`
      : args.logic_number !== null
        ? String(args.logic_number + items.length)
        : null;
    items.push({
      name,
      logic_address,
      number: next,
      exists: names.has(name.toLowerCase()) || (!!logic_address && addresses.has(logic_address)),
    });
  }
  // a logic address is unique per group type in the whole project (domains_type_logic_address), not only among siblings
  const wanted = items.flatMap((i) => (i.logic_address ? [i.logic_address] : []));
  if (wanted.length) {
    const taken = await c.app.db
      .selectFrom('domains')
      .select('logic_address')
      .where('project_id', '=', c.caller.projectId)
      .where(sql`coalesce(domain_type_id, 0)`, '=', args.domain_type_id ?? 0)
      .where('logic_address', 'in', wanted)
      .execute();
    const takenSet = new Set(taken.map((t) => t.logic_address));
    for (const i of items) if (i.logic_address && takenSet.has(i.logic_address)) i.exists = true;
  }
  return { parent: { id: parent.id, name: parent.name }, items };
}

function toTree(nodes: Node[]): GroupTreeNode[] {
  const byId = new Map<number, GroupTreeNode>(nodes.map((n) => [n.id, { ...n, children: [] }]));
  const roots: GroupTreeNode[] = [];
  for (const n of byId.values()) {
    const parent = n.parent_id !== null ? byId.get(n.parent_id) : undefined;
    // a visible group whose parent is not visible is a root of what the caller sees
    (parent ? parent.children : roots).push(n);
  }
  return roots;
}

export const groupHandlers = {
  ...familyHandlers(groupStore),
  ...groupWhiteLabelHandlers,

  'group.full': async (ctx) => ({ data: await visibleNodes(await familyCtx(ctx)) }),

  'group.children': async (ctx, args) => {
    const c = await familyCtx(ctx);
    const parent = await visibleNodes(c, sql<boolean>`t.id = ${args.id}`);
    if (!parent.length) throw new AppError('item_not_found');
    return { data: await visibleNodes(c, sql<boolean>`t.parent_id = ${args.id}`) };
  },

  'group.tree': async (ctx) => ({ data: toTree(await visibleNodes(await familyCtx(ctx))) }),

  'group.generate': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMayPlaceUnder(c.app.db, c.caller, args.id);
    return plan(c, args);
  },

  /** Creates the planned groups that do not exist yet, all or none. */
  'group.save_generated': async (ctx, args) => {
    const c = await familyCtx(ctx);
    await assertMayPlaceUnder(c.app.db, c.caller, args.id);
    const { items } = await plan(c, args);
    const fresh = items.filter((i) => !i.exists);
    const data = await c.app.db.transaction().execute(async (trx) => {
      const created: Node[] = [];
      for (const item of fresh) {
        const row = await trx
          .insertInto('domains')
          .values({
            project_id: c.caller.projectId,
            parent_id: args.id,
            name: item.name,
            logic_address: item.logic_address,
            domain_type_id: args.domain_type_id ?? null,
            whitelabel_settings: JSON.stringify(DefaultWhiteLabel),
            guest_identifier_limits: JSON.stringify(DefaultGuestLimits),
            license_settings: JSON.stringify(DefaultLicenseSettings),
            created_by: c.caller.userId,
          })
          .returning(['id', 'name', 'parent_id', 'logic_address'])
          .executeTakeFirstOrThrow()
          .catch((err: { code?: string }) => {
            throw err.code === '23505' ? new AppError('domain_exists', { name: item.name }) : err;
          });
        created.push({ ...row, type: null });
      }
      await audit(trx, {
        projectId: c.caller.projectId,
        userId: c.caller.userId,
        action: 'generate',
        entity: 'group',
        entityId: args.id,
        ip: c.ip,
        data: { created: created.map((g) => g.id), skipped: items.length - fresh.length },
      });
      return created;
    });
    return { data };
  },
} satisfies SomeHandlers;
