/**
 * Issue 12, "done when": the cases of authority over the target and of limits under concurrency, derived
 * for every family of the registry from its declaration (tests/support/family-authority.ts): each family
 * that declares scopes gets the authority cases, each counted limit a family declares its concurrency case.
 * A row of a family is made by its example maker (tests/support/family-examples.ts, derived from the
 * declaration), so a family added to the registry inherits the cases with no line here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, resources, type AnyResource } from '@lintel/commands';
import { startTestServer } from '../support/server';
import { admin, everyFeatureOn, group, licence, uid } from '../support/fixtures';
import { familySuite, type SuiteWorld } from '../support/family-authority';
import { exampleMaker } from '../support/family-examples';

const w = {} as SuiteWorld;
const families = resources as readonly AnyResource[];
const makers = Object.fromEntries(
  families.map((r) => [r.noun, exampleMaker(r, { api: () => w.api }, families)]),
);

const covered = (resources as readonly AnyResource[]).filter((r) => r.scopes || r.limits.length);

beforeAll(async () => {
  w.ts = await startTestServer();
  w.api = await admin(w.ts);
  // every feature licensed: a family behind a licence (virtual numbers: SIP) is reached, not refused for it
  await licence(w.ts, everyFeatureOn());
  const full = await getCommand('group.full').run({ api: w.api }, {});
  w.root = full.data.find((g) => g.parent_id === null)!.id;
  w.A = await group(w.api, `A${uid()}`, w.root);
  w.A1 = await group(w.api, `A1${uid()}`, w.A);
  w.B = await group(w.api, `B${uid()}`, w.root);
});
afterAll(async () => {
  await w.ts?.close();
});

describe('coverage', () => {
  it('every family that declares scopes or counted limits gets its cases, from a valid example of it', async () => {
    expect(covered.map((r) => r.noun)).toContain('marker');
    for (const r of covered) await expect(makers[r.noun]!.createArgs(w.A), r.noun).resolves.toBeTruthy();
  });
});

for (const resource of covered) familySuite(resource, makers[resource.noun]!, () => w);
