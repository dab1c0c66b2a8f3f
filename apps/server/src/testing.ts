import { registerFixtureResource, type PlainResource } from '@lintel/commands';
import { plainFamilyHandlers } from './engine/plain-families';
import { handlers } from './handlers';

/**
 * Test-only: a throwaway family declared in a test fixture gets its seven commands in the registry and their
 * handlers over its declared table — exactly what a shipped plain family gets from its declaration. Call it before
 * `createServer`, which makes one route per registry command; the fixture creates its table itself.
 */
export function registerFixtureFamily(resource: PlainResource): void {
  registerFixtureResource(resource);
  // the same call that gives a plain family of the registry its handlers (engine/plain-families.ts)
  Object.assign(handlers, plainFamilyHandlers(resource));
}
