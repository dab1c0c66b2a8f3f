import type { Gates } from '@lintel/commands';
import type { LicenseInfo } from '@lintel/core';

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

/**
 * One licence flag: `sip` (the feature's `is_enabled`), or `sip.is_web_dialer_enabled` (that flag, and the
 * feature on too where the feature has an on/off switch).
 */
export function licenceFlagOn(license: LicenseInfo, flag: string): boolean {
  const [area, key] = flag.split('.') as [string, string | undefined];
  const section = (license as unknown as Record<string, Record<string, unknown> | undefined>)[area];
  if (!section) return false;
  const featureOn = !('is_enabled' in section) || section.is_enabled === true;
  if (key === undefined) return featureOn;
  return section[key] === true && featureOn;
}

/**
 * The gate evaluator of the console: the menu, the palette, routes and buttons all ask it. A command or page
 * passes when the role holds any one of its permissions (none listed: every signed-in user) and every licence
 * flag it names is on. The server checks the same gates on every call, whatever the console showed.
 */
export function evaluateGates(gates: Gates | undefined, holder: Holder | null): Verdict {
  if (!holder) return { can: false, reason: { kind: 'signed_out' } };
  const any = gates?.anyPermission ?? [];
  if (any.length && !any.some((p) => holder.permissions.includes(p)))
    return { can: false, reason: { kind: 'permission', anyOf: any } };
  for (const flag of gates?.licence ?? [])
    if (!licenceFlagOn(holder.license, flag)) return { can: false, reason: { kind: 'licence', flag } };
  return ALLOWED;
}
