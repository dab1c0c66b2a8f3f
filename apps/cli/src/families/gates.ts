import type { Command } from '@lintel/commands';
import type { Profile } from '@lintel/core';

/** What the palette and the CLI ask before offering a command: may this user run it, and if not, why. */
export type GateResult =
  | { can: true }
  | { can: false; reason: 'permission'; permissions: readonly string[] }
  | { can: false; reason: 'licence'; licence: string };

function licenceOn(info: unknown, flag: string): boolean {
  let cur: unknown = info;
  for (const key of flag.split('.')) {
    if (typeof cur !== 'object' || cur === null) return false;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur === true;
}

/**
 * The gates of a command against the signed-in user's profile: one of `gates.anyPermission` in the role,
 * and every licence flag on in `license_info`. The server checks the same (and scope) on every call.
 */
export function evaluateGates(
  cmd: Pick<Command, 'gates'>,
  profile: Pick<Profile, 'role' | 'license_info'>,
): GateResult {
  const any = cmd.gates.anyPermission;
  if (any?.length && !any.some((p) => profile.role.permissions.includes(p)))
    return { can: false, reason: 'permission', permissions: any };
  for (const flag of cmd.gates.licence ?? []) {
    if (!licenceOn(profile.license_info, flag)) return { can: false, reason: 'licence', licence: flag };
  }
  return { can: true };
}
