import type { Command } from '@lintel/commands';
import { evaluateGate, type GateDecision, type GateFacts } from '@lintel/core';
import type { AuthInfo, CallerInfo, ServerContext } from '../context';
import { audit } from '../audit/audit';
import { licenceFacts, throwGateDecision } from './licence';

/**
 * The server's decision from its facts: core's `evaluateGate`, the very function the web and the CLI call
 * (tests/unit gates-agree.test.ts holds the three to the same answers).
 */
export const decideGates = (gates: Command['gates'], facts: GateFacts): GateDecision =>
  evaluateGate(gates, facts);

/**
 * The gates of a command for a signed-in caller: loads the facts (the caller's permissions; for licence
 * gates the server licence and the groups' licence settings of the caller's groups), decides, and throws
 * the catalogue error when denied (a permission denial is audited first).
 */
export async function checkGates(
  context: ServerContext,
  auth: AuthInfo,
  cmd: Pick<Command, 'id' | 'gates'>,
  caller: CallerInfo,
): Promise<void> {
  const flags = cmd.gates.licence ?? [];
  let facts: GateFacts = { permissions: auth.permissions, licence: {} };
  const byPermission = decideGates({ anyPermission: cmd.gates.anyPermission }, facts);
  if (!byPermission.can) {
    await audit(context.db, {
      projectId: auth.projectId,
      userId: auth.userId,
      action: 'permission_denied',
      entity: cmd.id,
      ip: caller.ip,
    });
    throwGateDecision(byPermission);
  }
  if (!flags.length) return;
  const own = await context.db
    .selectFrom('user_domains')
    .select('domain_id')
    .where('user_id', '=', auth.userId)
    .execute();
  const licence = await licenceFacts(
    context.db,
    auth.projectId,
    own.map((d) => d.domain_id),
    flags,
    context.clock.now(),
  );
  facts = { ...facts, ...licence };
  throwGateDecision(decideGates(cmd.gates, facts));
}
