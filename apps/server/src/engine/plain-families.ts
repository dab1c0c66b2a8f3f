import { resources, type AnyResource, type PlainResource } from '@lintel/commands';
import type { AllHandlers } from '../pipeline/handler';
import { familyHandlers, type FamilyIds } from './family';
import { tableStore } from './table-store';

/** The families of the registry declared with their table (`defineResource({table, ...})`). */
type Plain = Extract<(typeof resources)[number], PlainResource>;

const isPlain = (r: AnyResource): r is PlainResource => typeof r.table === 'string';

/** The handlers of one family declared with its table: its generic store over that table. */
export function plainFamilyHandlers<R extends PlainResource>(resource: R): Pick<AllHandlers, FamilyIds<R>> {
  return familyHandlers(tableStore(resource, { table: resource.table })) as Pick<AllHandlers, FamilyIds<R>>;
}

/**
 * The handlers of every plain family of the registry: a family declared with `table` needs no line in
 * handlers/index.ts. The type names each of their commands, so the handler map's completeness check still
 * holds (a family without `table` and without its own handlers fails the build there).
 */
export function plainFamiliesHandlers(): Pick<AllHandlers, FamilyIds<Plain>> {
  const all = (resources as readonly AnyResource[]).filter(isPlain).map((r) => plainFamilyHandlers(r));
  return Object.assign({}, ...all) as Pick<AllHandlers, FamilyIds<Plain>>;
}
