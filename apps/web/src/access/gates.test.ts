import { describe, expect, it } from 'vitest';
import type { Gates } from '@lintel/commands';
import type { LicenseInfo } from '@lintel/core';
import { evaluateGates, licenceFlagOn } from './gates';

const off: LicenseInfo = {
  sip: { is_enabled: false, license_count: null, is_sip_trunks_enabled: false, is_web_dialer_enabled: false },
  mobile_app: {
    is_enabled: false,
    license_count: null,
    is_domain_forward_rule_enabled: false,
    is_white_label_enabled: false,
    is_remote_open_enabled: false,
    is_siri_enabled: false,
    is_apple_watch_enabled: false,
    is_family_events_enabled: false,
  },
  elevator: { is_enabled: false },
  license_plate: { is_enabled: false },
  face_id: { is_enabled_for_guests: false },
  amenity: { is_enabled: false },
  ukey2: { is_enabled: false, license_count: null },
  identifier: { is_guest_enabled: false },
};
const sipOn: LicenseInfo = { ...off, sip: { ...off.sip, is_enabled: true, is_web_dialer_enabled: true } };

describe('the gate evaluator', () => {
  it('lets anyone signed in through an empty gate, nobody signed out', () => {
    expect(evaluateGates({}, { permissions: [], license: off })).toEqual({ can: true, reason: null });
    expect(evaluateGates({}, null)).toEqual({ can: false, reason: { kind: 'signed_out' } });
  });

  it('needs any one of the permissions and says which when none is held', () => {
    const gates: Gates = { anyPermission: ['users.view', 'users.view_all'] };
    expect(evaluateGates(gates, { permissions: ['users.view_all'], license: off }).can).toBe(true);
    expect(evaluateGates(gates, { permissions: ['roles.view'], license: off })).toEqual({
      can: false,
      reason: { kind: 'permission', anyOf: ['users.view', 'users.view_all'] },
    });
  });

  it('needs every licence flag, and the feature switch under a sub-flag', () => {
    const holder = { permissions: ['audit.view'], license: sipOn };
    expect(evaluateGates({ anyPermission: ['audit.view'], licence: ['sip'] }, holder).can).toBe(true);
    expect(evaluateGates({ licence: ['sip', 'elevator'] }, holder)).toEqual({
      can: false,
      reason: { kind: 'licence', flag: 'elevator' },
    });
    expect(licenceFlagOn(sipOn, 'sip.is_web_dialer_enabled')).toBe(true);
    expect(licenceFlagOn(sipOn, 'sip.is_sip_trunks_enabled')).toBe(false);
    const dialerWithoutSip = { ...off, sip: { ...off.sip, is_web_dialer_enabled: true } };
    expect(licenceFlagOn(dialerWithoutSip, 'sip.is_web_dialer_enabled')).toBe(false);
    expect(licenceFlagOn(off, 'no_such_area')).toBe(false);
  });
});
