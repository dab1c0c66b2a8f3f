/**
 * Issue 12, "done when": the cases of authority over the target and of limits under concurrency, derived
 * for every family of the registry from its declaration (tests/support/family-authority.ts): each family
 * that declares scopes gets the authority cases, each counted limit a family declares its concurrency case.
 * A family gives only how to make a valid row in a group; a family with scopes or limits and no maker here
 * fails the coverage test, so devices, identifiers and numbers inherit the cases when they are declared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, resources, type AnyResource } from '@lintel/commands';
import { startTestServer } from '../support/server';
import { admin, everyFeatureOn, group, licence, uid } from '../support/fixtures';
import { familySuite, type FamilyMaker, type SuiteWorld } from '../support/family-authority';

const w = {} as SuiteWorld & { role: number };
let numbers = 0;

const makers: Record<string, FamilyMaker> = {
  device: {
    create: (g) => ({ name: `Device ${uid()}`, type: 'panel', serial_number: `FA-${uid()}`, domain_id: g }),
    change: () => ({ name: `Changed ${uid()}` }),
    move: (g) => ({ domain_id: g }),
  },
  marker: {
    create: () => ({ name: `Marker ${uid()}`, color: '#102030' }),
    change: () => ({ name: `Changed ${uid()}` }),
  },
  sip_number: {
    create: (g) => ({ number: String(100_000 + numbers++), name: 'Desk', domain_id: g }),
    change: () => ({ name: `Changed ${uid()}` }),
    move: (g) => ({ domain_id: g }),
  },
  user: {
    create: (g) => ({
      login: `fa${uid()}`,
      name: 'Counted',
      role: w.role,
      domains: [g],
      send_registration_link: false,
    }),
    change: () => ({ name: 'Changed' }),
    move: (g) => ({ domains: [g] }),
  },
};

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
  w.role = (
    await getCommand('role.create').run({ api: w.api }, { name: `Plain ${uid()}`, permissions: [] })
  ).data.id;
});
afterAll(async () => {
  await w.ts?.close();
});

describe('coverage', () => {
  it('every family that declares scopes or counted limits has a maker, so its cases run', () => {
    expect(covered.map((r) => r.noun)).toContain('marker');
    expect(covered.map((r) => r.noun).filter((n) => !makers[n])).toEqual([]);
  });
});

for (const resource of covered)
  if (makers[resource.noun]) familySuite(resource, makers[resource.noun]!, () => w);
