import { describe, expect, it } from 'vitest';
import {
  evaluateGate,
  licenceFlagOn,
  type Gate,
  type GateDecision,
  type GateFacts,
  type GroupChains,
  type GroupLicenceFacts,
  type LicenceFeatures,
} from './gates';
import { LicenceFlags } from './permissions';

const none = { permissions: [] as string[] };
const sip = (s: Record<string, boolean>) => ({ sip: s });
const on = { is_enabled: true };
const allSip = sip({ is_enabled: true, is_web_dialer_enabled: true, is_sip_trunks_enabled: true });
/** one group licence with these features (active, no period unless given) */
const lic = (
  features: LicenceFeatures,
  o: { active?: boolean; from?: string | null; to?: string | null } = {},
): GroupLicenceFacts => ({
  licenses: [
    {
      is_active: o.active ?? true,
      features,
      restrict_period:
        o.from !== undefined || o.to !== undefined
          ? { is_active: true, from: o.from ?? null, to: o.to ?? null }
          : { is_active: false, from: null, to: null },
    },
  ],
});
const chains = (list: GroupLicenceFacts[][], at = '2025-03-01T12:00:00Z'): GroupChains => ({
  chains: list,
  now: Date.parse(at),
});

describe('evaluateGate', () => {
  const table: [string, Gate, GateFacts, GateDecision][] = [
    ['empty gate, no permissions', {}, { ...none, licence: {} }, { can: true }],
    [
      'any one permission is enough',
      { anyPermission: ['users.view', 'users.view_all'] },
      { permissions: ['users.view_all'], licence: {} },
      { can: true },
    ],
    [
      'a set of permissions (the server) reads like a list',
      { anyPermission: ['users.view'] },
      { permissions: new Set(['users.view']), licence: {} },
      { can: true },
    ],
    [
      'no listed permission',
      { anyPermission: ['users.view', 'users.view_all'] },
      { permissions: ['roles.view'], licence: { sip: { is_enabled: true } } },
      { can: false, reason: 'permission', anyOf: ['users.view', 'users.view_all'] },
    ],
    [
      'permission is asked before the licence',
      { anyPermission: ['users.view'], licence: ['sip'] },
      { ...none, licence: {} },
      { can: false, reason: 'permission', anyOf: ['users.view'] },
    ],
    // the first disagreement: the CLI read `amenity` as the object `license_info.amenity`
    [
      'a feature alone is its switch: on',
      { licence: ['amenity'] },
      { ...none, licence: { amenity: { is_enabled: true } } },
      { can: true },
    ],
    [
      'a feature alone is its switch: off',
      { licence: ['amenity'] },
      { ...none, licence: { amenity: { is_enabled: false } } },
      { can: false, reason: 'licence', flag: 'amenity' },
    ],
    // the second: the CLI read the dialer flag alone, with SIP off
    [
      'a sub-flag of a feature switched off is off',
      { licence: ['sip.is_web_dialer_enabled'] },
      { ...none, licence: sip({ is_enabled: false, is_web_dialer_enabled: true }) },
      { can: false, reason: 'licence', flag: 'sip.is_web_dialer_enabled' },
    ],
    [
      'a sub-flag of a feature whose switch is missing (the server licence drops false values) is off',
      { licence: ['sip.is_web_dialer_enabled'] },
      { ...none, licence: sip({ is_web_dialer_enabled: true }) },
      { can: false, reason: 'licence', flag: 'sip.is_web_dialer_enabled' },
    ],
    [
      'sub-flag with its feature on',
      { licence: ['sip.is_web_dialer_enabled'] },
      { ...none, licence: sip({ is_enabled: true, is_web_dialer_enabled: true }) },
      { can: true },
    ],
    [
      'face id has no switch: its flag stands alone',
      { licence: ['face_id.is_enabled_for_guests'] },
      { ...none, licence: { face_id: { is_enabled_for_guests: true } } },
      { can: true },
    ],
    [
      'no licence at all',
      { licence: ['sip'] },
      { ...none, licence: { error: 'feature_not_licensed' } },
      { can: false, reason: 'licence', flag: 'sip' },
    ],
    [
      'the licence ran out',
      { licence: ['sip'] },
      { ...none, licence: { error: 'license_expired' } },
      { can: false, reason: 'licence_expired', flag: 'sip' },
    ],
    [
      'the groups switch the feature off',
      { licence: ['sip'] },
      { ...none, licence: sip({ is_enabled: true }), groups: chains([[lic({ elevator: on })]]) },
      { can: false, reason: 'group_licence', flag: 'sip' },
    ],
    [
      "a group's licence keeps a sub-flag off though its feature is on",
      { licence: ['sip.is_web_dialer_enabled'] },
      { ...none, licence: allSip, groups: chains([[lic({ sip: on })]]) },
      { can: false, reason: 'group_licence', flag: 'sip.is_web_dialer_enabled' },
    ],
    [
      'the group allows what the server licence allows',
      { licence: ['sip.is_web_dialer_enabled'] },
      { ...none, licence: allSip, groups: chains([[lic({ sip: { ...on, is_web_dialer_enabled: true } })]]) },
      { can: true },
    ],
    [
      'a child cannot switch on what a group above it keeps off: every group of the chain must allow it',
      { licence: ['elevator'] },
      {
        ...none,
        licence: { elevator: on },
        groups: chains([[lic({ elevator: on, sip: on }), lic({ sip: on })]]),
      },
      { can: false, reason: 'group_licence', flag: 'elevator' },
    ],
    [
      "one of the caller's groups allowing it is enough",
      { licence: ['elevator'] },
      { ...none, licence: { elevator: on }, groups: chains([[lic({ sip: on })], [lic({ elevator: on })]]) },
      { can: true },
    ],
    [
      'a group with its settings off restricts nothing (its chain is empty)',
      { licence: ['elevator'] },
      { ...none, licence: { elevator: on }, groups: chains([[]]) },
      { can: true },
    ],
    [
      'an inactive licence grants nothing',
      { licence: ['elevator'] },
      { ...none, licence: { elevator: on }, groups: chains([[lic({ elevator: on }, { active: false })]]) },
      { can: false, reason: 'group_licence', flag: 'elevator' },
    ],
    [
      'a licence within its period grants (its last day included)',
      { licence: ['elevator'] },
      {
        ...none,
        licence: { elevator: on },
        groups: chains(
          [[lic({ elevator: on }, { from: '2025-01-01', to: '2025-06-30' })]],
          '2025-06-30T23:59:59Z',
        ),
      },
      { can: true },
    ],
    [
      'a licence past its period grants nothing',
      { licence: ['elevator'] },
      {
        ...none,
        licence: { elevator: on },
        groups: chains(
          [[lic({ elevator: on }, { from: '2025-01-01', to: '2025-06-30' })]],
          '2025-07-01T00:00:00Z',
        ),
      },
      { can: false, reason: 'group_licence', flag: 'elevator' },
    ],
    [
      'a licence before its period grants nothing',
      { licence: ['elevator'] },
      {
        ...none,
        licence: { elevator: on },
        groups: chains([[lic({ elevator: on }, { from: '2025-01-01', to: null })]], '2024-12-31T23:00:00Z'),
      },
      { can: false, reason: 'group_licence', flag: 'elevator' },
    ],
    [
      'the server licence is asked first: a group cannot switch on what it has off',
      { licence: ['elevator'] },
      { ...none, licence: {}, groups: chains([[lic({ elevator: on })]]) },
      { can: false, reason: 'licence', flag: 'elevator' },
    ],
    [
      'every flag must be on: the first one off is named',
      { licence: ['sip', 'elevator'] },
      { ...none, licence: { sip: { is_enabled: true } } },
      { can: false, reason: 'licence', flag: 'elevator' },
    ],
  ];
  it.each(table)('%s', (_, gate, facts, decision) => {
    expect(evaluateGate(gate, facts)).toEqual(decision);
  });

  it('reads every licence flag of the spec off a licence with everything on, and none off an empty one', () => {
    const all: Record<string, Record<string, boolean>> = {};
    for (const flag of LicenceFlags) {
      const [area, key] = flag.split('.') as [string, string | undefined];
      all[area] = { ...all[area], [key ?? 'is_enabled']: true };
      if (['sip', 'mobile_app'].includes(area)) all[area]!.is_enabled = true;
    }
    for (const flag of LicenceFlags) {
      expect(licenceFlagOn(all, flag), flag).toBe(true);
      expect(licenceFlagOn({}, flag), flag).toBe(false);
    }
  });
});
