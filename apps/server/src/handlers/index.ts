import type { AllHandlers } from '../http/handler';
import { auditEventHandlers } from './audit-event/audit-event.handler';
import { domainTypeHandlers } from './domain-type/domain-type.handler';
import { groupHandlers } from './group/group.handler';
import { markerHandlers } from './marker/marker.handler';
import { profileHandlers } from './profile/profile.handler';
import { registrationHandlers } from './registration/registration.handler';
import { roleHandlers } from './role/role.handler';
import { serverHandlers } from './server/server.handler';
import { sessionHandlers } from './session/session.handler';
import { userHandlers } from './user/user.handler';
import { userImportHandlers } from './user-import/user-import.handler';
import { seedHandlers } from './seed/seed.handler';

/** One handler per registered command: a command without one fails the build here. */
export const handlers = {
  ...sessionHandlers,
  ...profileHandlers,
  ...registrationHandlers,
  ...serverHandlers,
  ...groupHandlers,
  ...userHandlers,
  ...userImportHandlers,
  ...roleHandlers,
  ...markerHandlers,
  ...domainTypeHandlers,
  ...auditEventHandlers,
  ...seedHandlers,
} satisfies AllHandlers;
