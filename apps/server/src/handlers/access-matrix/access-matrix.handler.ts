import { sql } from 'kysely';
import type { z } from 'zod';
import type { AccessMatrixFilters, AccessMatrixRow } from '@lintel/commands';
import type { ServerContext } from '../../context';
import { signedIn, type AllHandlers, type HandlerContext } from '../../pipeline/handler';
import { fileReply, type Cell } from '../../engine/file-writers';
import { serverT } from '../../i18n';
import { identifierDecisionColumns, loadProjectAccess, type IdentifierRow } from '../../access/data';
import { lastPassages } from '../../access/passback';

type Filters = z.output<typeof AccessMatrixFilters>;
const BATCH = 500;

/**
 * The matrix's cells in order (identifier id, then device id), from just after `after`: for each identifier
 * of the filters, each device some rule names both of, decided by the project's index at `at` — with each
 * identifier's last passages in the anti-passback areas up to `at` (its ACS events), so a card inside an area
 * shows refused at its entries.
 */
async function* matrixRows(
  app: ServerContext,
  projectId: number,
  f: Filters,
  at: number,
  after: [number, number] = [0, 0],
): AsyncGenerator<AccessMatrixRow & { key: [number, number] }> {
  const db = app.db;
  const access = await loadProjectAccess(db, projectId);
  const devices = f.device !== undefined ? access.devices.filter((d) => d === f.device) : access.devices;
  if (!devices.length) return;
  const names = async (table: string, ids: readonly number[]) =>
    new Map(
      ids.length
        ? (
            await sql<{
              id: number;
              name: string;
            }>`select id, name from ${sql.table(table)} where project_id = ${projectId} and id in (${sql.join(ids)})`.execute(
              db,
            )
          ).rows.map((r) => [r.id, r.name])
        : [],
    );
  const deviceNames = await names('devices', devices);
  const ruleNames = await names(
    'access_rules',
    access.rules.map((r) => r.id),
  );
  let [fromId, fromDevice] = after;
  for (;;) {
    const batch = (
      await sql<
        IdentifierRow & { owner_name: string | null }
      >`select ${identifierDecisionColumns}, u.name as owner_name
        from identifiers i left join users u on u.id = i.owner
        where i.project_id = ${projectId} and i.id >= ${fromId}
        ${f.type !== undefined ? sql`and i.type = ${f.type}` : sql``}
        ${f.user !== undefined ? sql`and i.owner = ${f.user}` : sql``}
        order by i.id limit ${BATCH}`.execute(db)
    ).rows;
    const passages = await lastPassages(
      db,
      projectId,
      batch.map((i) => i.id),
      access.areas,
      new Date(at),
    );
    for (const i of batch) {
      const groups = access.groupsOf(i.owner);
      if (f.group !== undefined && !groups.includes(f.group)) continue;
      for (const d of devices) {
        if (i.id === fromId && d <= fromDevice) continue;
        if (!deviceNames.has(d) || !access.index.matching(i, d, groups).length) continue;
        const decision = access.index.decide(i, d, at, {
          ...access.contextFor(i.owner, d),
          lastPassages: passages.get(i.id),
        });
        if (f.allowed !== undefined && decision.allowed !== f.allowed) continue;
        yield {
          key: [i.id, d],
          identifier: { id: i.id, name: i.name, type: i.type, value: i.value },
          owner: i.owner === null ? null : { id: i.owner, name: i.owner_name ?? '' },
          device: { id: d, name: deviceNames.get(d)! },
          allowed: decision.allowed,
          rule:
            decision.rule === null ? null : { id: decision.rule, name: ruleNames.get(decision.rule) ?? '' },
          reason: decision.reason,
        };
      }
    }
    if (batch.length < BATCH) return;
    fromId = batch[batch.length - 1]!.id + 1;
    fromDevice = 0;
  }
}

const instantOf = (ctx: HandlerContext, at: string | undefined) =>
  at !== undefined ? Date.parse(at) : ctx.app.clock.now().getTime();

export const accessMatrixHandlers = {
  'access_matrix.list': async (ctx, args) => {
    const at = instantOf(ctx, args.at);
    const after = args.cursor
      ? (args.cursor.split('.').map(Number) as [number, number])
      : ([0, 0] as [number, number]);
    const data: AccessMatrixRow[] = [];
    let last = '';
    let more = false;
    for await (const { key, ...row } of matrixRows(ctx.app, signedIn(ctx).projectId, args, at, after)) {
      // a next page only when a row is left after the last one taken
      if (data.length === args.limit) {
        more = true;
        break;
      }
      data.push(row);
      last = key.join('.');
    }
    return { data, meta: { next: more ? last : null, at: new Date(at).toISOString() } };
  },

  'access_matrix.export': async (ctx, args) => {
    const at = instantOf(ctx, args.at);
    const t = serverT(ctx.caller.locale);
    const col = (k: string) => t(`commands:fields.access_matrix.${k}`);
    const header = ['identifier', 'type', 'value', 'owner', 'device', 'allowed', 'rule', 'reason'].map(col);
    const projectId = signedIn(ctx).projectId;
    async function* rows(): AsyncIterable<Cell[]> {
      for await (const r of matrixRows(ctx.app, projectId, args, at))
        yield [
          r.identifier.name,
          r.identifier.type,
          r.identifier.value,
          r.owner?.name ?? null,
          r.device.name,
          r.allowed,
          r.rule?.name ?? null,
          r.reason === null ? null : t(`errors:http.${r.reason}`),
        ];
    }
    const filename = `access-matrix-${new Date(at).toISOString().slice(0, 10)}.${args.format}`;
    return fileReply(args.format, filename, t('commands:pages.access_matrix.title'), header, rows());
  },
} satisfies Partial<AllHandlers>;
