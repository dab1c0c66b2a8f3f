import type { Gates } from '@lintel/commands';
import { evaluateGate, licenceFlagOn as coreLicenceFlagOn, type LicenseInfo } from '@lintel/core';

/** Why an action is locked: a permission the role lacks, or a licence flag that is off. */
export type LockReason =
  | { kind: 'signed_out' }
  | { kind: 'permission'; anyOf: readonly string[] }
  | { kind: 'licence'; flag: string };

export interface Verdict {
  can: boolean;
  reason: LockReason | null;
}

export interface Holder {
  permissions: readonly string[];
  /** the profile's licence info: each flag is on only where both the server and the group licence allow it */
  license: LicenseInfo;
}

const ALLOWED: Verdict = { can: true, reason: null };

/** One licence flag of the profile's licence info (core's `licenceFlagOn`, the server's own reading). */
export const licenceFlagOn = (license: LicenseInfo, flag: string): boolean =>
  coreLicenceFlagOn(license, flag);

/**
 * The gates as the console shows them: the menu, the palette, routes and buttons all ask. The decision is
 * core's `evaluateGate`, the function the server and the CLI call, over the facts of the profile (its role's
 * permissions and its licence info, which already is the server licence narrowed by the groups).
 */
export function evaluateGates(gates: Gates | undefined, holder: Holder | null): Verdict {
  if (!holder) return { can: false, reason: { kind: 'signed_out' } };
  const d = evaluateGate(gates, { permissions: holder.permissions, licence: holder.license });
  if (d.can) return ALLOWED;
  if (d.reason === 'permission') return { can: false, reason: { kind: 'permission', anyOf: d.anyOf } };
  return { can: false, reason: { kind: 'licence', flag: d.flag } };
}
