import { defineCommand } from '../command';
import { IdParam, savedReply } from '../resource';
import { Identifier } from './identifier.resource';

/**
 * Revokes an identifier (spec part 1 §4: active → revoked): the devices refuse it from then on, and the
 * decision says `identifier_revoked`. Revoking a revoked identifier changes nothing.
 */
export const identifierRevoke = defineCommand({
  id: 'identifier.revoke',
  http: { method: 'POST', path: '/identifiers/:id/revoke' },
  args: IdParam,
  result: savedReply(Identifier),
  gates: { anyPermission: ['identifiers.edit'] },
});
