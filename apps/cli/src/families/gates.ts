import type { Command } from '@lintel/commands';
import { evaluateGate, type Profile } from '@lintel/core';

/** What the palette and the CLI ask before offering a command: may this user run it, and if not, why. */
export type GateResult =
  | { can: true }
  | { can: false; reason: 'permission'; permissions: readonly string[] }
  | { can: false; reason: 'licence'; licence: string };

/**
 * The gates of a command against the signed-in user's profile: core's `evaluateGate` (the function the
 * server and the web call) over the role's permissions and `license_info`. The server checks the same (and
 * scope) on every call.
 */
export function evaluateGates(
  cmd: Pick<Command, 'gates'>,
  profile: Pick<Profile, 'role' | 'license_info'>,
): GateResult {
  const d = evaluateGate(cmd.gates, { permissions: profile.role.permissions, licence: profile.license_info });
  if (d.can) return d;
  if (d.reason === 'permission') return { can: false, reason: 'permission', permissions: d.anyOf };
  return { can: false, reason: 'licence', licence: d.flag };
}
