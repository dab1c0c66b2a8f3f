// The server, the web console and the CLI decide gates with one function (core's `evaluateGate`); this
// table holds their three entry points to the same answer for every case it lists. The server decides from
// its own facts (permissions, the server licence in force, the groups' licence settings); the web and the
// CLI from the profile, whose `license_info` the server derives from the same facts (`licenceInfoFrom`).
import { describe, expect, it } from 'vitest';
import { registry, type Gates } from '@lintel/commands';
import { AllPermissions, LicenceFlags, type GroupChains, type LicenceFeatures } from '@lintel/core';
import { decideGates } from '../apps/server/src/licensing/gates';
import { licenceInfoFrom, type Features } from '../apps/server/src/licensing/licence';
import { evaluateGates as webGates } from '../apps/web/src/access/gates';
import { evaluateGates as cliGates } from '../apps/cli/src/families/gates';

type Verdict = { can: true } | { can: false; reason: 'permission' | 'licence'; detail: string };

const everything: Features = {
  sip: { is_enabled: true, license_count: 10, is_sip_trunks_enabled: true, is_web_dialer_enabled: true },
  mobile_app: {
    is_enabled: true,
    is_domain_forward_rule_enabled: true,
    is_white_label_enabled: true,
    is_remote_open_enabled: true,
    is_siri_enabled: true,
    is_apple_watch_enabled: true,
    is_family_events_enabled: true,
  },
  elevator: { is_enabled: true },
  license_plate: { is_enabled: true },
  face_id: { is_enabled_for_guests: true },
  amenity: { is_enabled: true },
  ukey2: { is_enabled: true, license_count: 5 },
  identifier: { is_guest_enabled: true },
};

const licences: [string, { features: Features } | { error: 'feature_not_licensed' | 'license_expired' }][] = [
  ['no licence', { error: 'feature_not_licensed' }],
  ['expired licence', { error: 'license_expired' }],
  ['everything on', { features: everything }],
  ['empty licence', { features: {} }],
  // the cases: SIP off with the web dialer on (as stored, and as the server reads it: false dropped)
  [
    'SIP off, web dialer on',
    { features: { ...everything, sip: { is_enabled: false, is_web_dialer_enabled: true } } },
  ],
  [
    'SIP switch missing, web dialer on',
    { features: { ...everything, sip: { is_web_dialer_enabled: true } } },
  ],
  ['amenity only', { features: { amenity: { is_enabled: true } } }],
  ['amenity off', { features: { ...everything, amenity: { is_enabled: false } } }],
  [
    'mobile app off, white label on',
    { features: { ...everything, mobile_app: { is_white_label_enabled: true } } },
  ],
  ['face id for guests only', { features: { face_id: { is_enabled_for_guests: true } } }],
];

// the groups' side: chains of switched-on group licence settings, nearest first, read at `now`
const NOW = Date.parse('2025-03-01T12:00:00Z');
const licence = (
  features: Features,
  period: { is_active: boolean; from: string | null; to: string | null } = {
    is_active: false,
    from: null,
    to: null,
  },
  is_active = true,
) => ({ is_active, features: features as LicenceFeatures, restrict_period: period });
const without = (...areas: string[]): Features =>
  Object.fromEntries(Object.entries(everything).filter(([a]) => !areas.includes(a)));
const groups: [string, GroupChains | undefined][] = [
  ['no group restricts', undefined],
  ["the caller's groups have their settings off", { chains: [[], []], now: NOW }],
  ['groups switch SIP off', { chains: [[{ licenses: [licence(without('sip'))] }]], now: NOW }],
  [
    'groups switch amenity and mobile app off',
    { chains: [[{ licenses: [licence(without('amenity', 'mobile_app'))] }]], now: NOW },
  ],
  [
    'the child allows the web dialer, the group above keeps it off',
    {
      chains: [
        [
          { licenses: [licence(everything)] },
          { licenses: [licence({ ...everything, sip: { is_enabled: true } })] },
        ],
      ],
      now: NOW,
    },
  ],
  [
    'the group licence ended',
    {
      chains: [[{ licenses: [licence(everything, { is_active: true, from: null, to: '2025-02-28' })] }]],
      now: NOW,
    },
  ],
  [
    'the group licence is inactive, a second one grants only elevators',
    {
      chains: [
        [{ licenses: [licence(everything, undefined, false), licence({ elevator: { is_enabled: true } })] }],
      ],
      now: NOW,
    },
  ],
  [
    'two groups: one keeps only the mobile app, the other only SIP',
    {
      chains: [
        [{ licenses: [licence({ mobile_app: everything.mobile_app })] }],
        [{ licenses: [licence({ sip: everything.sip })] }],
      ],
      now: NOW,
    },
  ],
];

const permissionSets: [string, string[]][] = [
  ['no permissions', []],
  ['users.view only', ['users.view']],
  ['amenities at own scope', ['amenities.view_own', 'amenity_reservations.view_own']],
  ['every permission', [...AllPermissions]],
];

// every gate the registry declares, plus one gate per licence flag of the spec, alone and behind a permission
const gates = new Map<string, Gates>();
for (const cmd of registry.values()) gates.set(JSON.stringify(cmd.gates), cmd.gates);
for (const flag of LicenceFlags) {
  gates.set(`licence ${flag}`, { licence: [flag] });
  gates.set(`amenities scope + ${flag}`, {
    anyPermission: [
      'amenities.view_all',
      'amenities.view_descendants',
      'amenities.view_domain',
      'amenities.view_own',
    ],
    licence: [flag],
  });
}

function server(
  gate: Gates,
  permissions: string[],
  lic: (typeof licences)[number][1],
  group: GroupChains | undefined,
): Verdict {
  const d = decideGates(gate, {
    permissions: new Set(permissions),
    licence: 'error' in lic ? lic : lic.features,
    groups: group,
  });
  if (d.can) return d;
  return d.reason === 'permission'
    ? { can: false, reason: 'permission', detail: d.anyOf.join() }
    : { can: false, reason: 'licence', detail: d.flag };
}

function profileOf(permissions: string[], lic: (typeof licences)[number][1], group: GroupChains | undefined) {
  const license_info = licenceInfoFrom(lic, group);
  return { role: { id: 1, name: 'r', permissions }, license_info };
}

function web(gate: Gates, profile: ReturnType<typeof profileOf>): Verdict {
  const v = webGates(gate, { permissions: profile.role.permissions, license: profile.license_info });
  if (v.can) return { can: true };
  if (v.reason?.kind === 'permission')
    return { can: false, reason: 'permission', detail: v.reason.anyOf.join() };
  if (v.reason?.kind === 'licence') return { can: false, reason: 'licence', detail: v.reason.flag };
  throw new Error(`unexpected web verdict ${JSON.stringify(v)}`);
}

function cli(gate: Gates, profile: ReturnType<typeof profileOf>): Verdict {
  const v = cliGates({ gates: gate }, profile);
  if (v.can) return v;
  return v.reason === 'permission'
    ? { can: false, reason: 'permission', detail: v.permissions.join() }
    : { can: false, reason: 'licence', detail: v.licence };
}

const cases = [...gates].flatMap(([gateName, gate]) =>
  permissionSets.flatMap(([pName, perms]) =>
    licences.flatMap(([lName, lic]) =>
      groups.map(([gName, group]) => ({
        name: `${gateName} | ${pName} | ${lName} | ${gName}`,
        gate,
        perms,
        lic,
        group,
      })),
    ),
  ),
);

describe('server, web and CLI gates agree', () => {
  it(`on each of ${cases.length} (gate, permissions, licence, groups) cases`, () => {
    const disagreements: string[] = [];
    let open = 0;
    for (const c of cases) {
      const s = server(c.gate, c.perms, c.lic, c.group);
      const profile = profileOf(c.perms, c.lic, c.group);
      const w = web(c.gate, profile);
      const l = cli(c.gate, profile);
      if (s.can) open++;
      if (JSON.stringify(s) !== JSON.stringify(w) || JSON.stringify(s) !== JSON.stringify(l))
        disagreements.push(
          `${c.name}: server ${JSON.stringify(s)}, web ${JSON.stringify(w)}, cli ${JSON.stringify(l)}`,
        );
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    // the table exercises both answers, not only one
    expect(open).toBeGreaterThan(0);
    expect(open).toBeLessThan(cases.length);
  });

  it("settles the issue's two cases: `amenity` open, and the web dialer locked with SIP off", () => {
    const amenity = profileOf([], { features: { amenity: { is_enabled: true } } }, undefined);
    expect(cli({ licence: ['amenity'] }, amenity)).toEqual({ can: true });
    expect(web({ licence: ['amenity'] }, amenity)).toEqual({ can: true });
    const dialer = { features: { sip: { is_enabled: false, is_web_dialer_enabled: true } } };
    const locked = { can: false, reason: 'licence', detail: 'sip.is_web_dialer_enabled' };
    expect(server({ licence: ['sip.is_web_dialer_enabled'] }, [], dialer, undefined)).toEqual(locked);
    expect(cli({ licence: ['sip.is_web_dialer_enabled'] }, profileOf([], dialer, undefined))).toEqual(locked);
  });
});
