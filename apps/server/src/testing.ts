import { registerFixtureResource, type PlainResource } from '@lintel/commands';
import { plainFamilyHandlers } from './engine/plain-families';
import { handlers } from './handlers';
import { topicDefs, type TopicDef } from './realtime/topics';

/**
 * Test-only: a throwaway family declared in a test fixture gets its seven commands in the registry and their
 * handlers over its declared table — exactly what a shipped plain family gets from its declaration. Call it before
 * `createServer`, which makes one route per registry command; the fixture creates its table itself.
 */
export function registerFixtureFamily(resource: PlainResource): () => void {
  const unregister = registerFixtureResource(resource);
  // the same call that gives a plain family of the registry its handlers (engine/plain-families.ts)
  const own = plainFamilyHandlers(resource);
  Object.assign(handlers, own);
  // what a test file's afterAll calls: the next file in the same fork finds the registry as shipped
  return () => {
    unregister();
    for (const id of Object.keys(own)) delete (handlers as Record<string, unknown>)[id];
  };
}

/** Test-only: a topic declared in a test fixture joins the websocket's topics, as a shipped one in `topicDefs`. */
export function registerFixtureTopic(def: TopicDef): () => void {
  topicDefs.push(def);
  return () => {
    const at = topicDefs.indexOf(def);
    if (at >= 0) topicDefs.splice(at, 1);
  };
}
