import type { AllHandlers } from '../pipeline/handler';
import { plainFamiliesHandlers } from '../engine/plain-families';
import { auditEventHandlers } from './audit-event/audit-event.handler';
import { domainTypeHandlers } from './domain-type/domain-type.handler';
import { identifierHandlers } from './identifier/identifier.handler';
import { accessMatrixHandlers } from './access-matrix/access-matrix.handler';
import { guestAccessHandlers } from './guest-access/guest-access.handler';
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
import { licenceHandlers } from './licence/licence.handler';
import { deviceHandlers } from './device/device.handler';
import { deviceRemoteHandlers } from './device/device.remote';
import { deviceEventHandlers } from './device-event/device-event.handler';
import { acsEventHandlers } from './acs-event/acs-event.handler';
import { sipNumberHandlers } from './sip-number/sip-number.handler';
import { reportsHandlers } from './reports/reports.handler';
import { notificationHandlers } from './notification/notification.handler';
import { callHandlers } from './call/call.handler';
import { doorHandlers } from './door/door.handler';
import { sipTrunkHandlers } from './sip-trunk/sip-trunk.handler';
import { sipHandlers } from './sip/sip.handler';
import { backupHandlers } from './backup/backup.handler';
import { webhookHandlers } from './webhook/webhook.handler';
import { systemHandlers, workerHandlers } from './system/system.handler';
import { logHandlers } from './system/log.handler';
import { ipBlockingHandlers } from './ip-blocking/ip-blocking.handler';
import { settingsHandlers } from './settings/settings.handler';
import { sipSettingsHandlers } from './settings/sip-settings.handler';
import { whiteLabelSettingsHandlers } from './settings/whitelabel.handler';
import { brokerHandlers } from './broker/broker.handler';
import { mailTemplateHandlers } from './mail-template/mail-template.handler';
import { integrationHandlers } from './integration/integration.handler';

/** One handler per registered command: a command without one fails the build here. */
export const handlers = {
  // the families declared with their table: stored as declared, no handler code (engine/plain-families.ts)
  ...plainFamiliesHandlers(),
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
  ...identifierHandlers,
  ...accessMatrixHandlers,
  ...guestAccessHandlers,
  ...auditEventHandlers,
  ...seedHandlers,
  ...licenceHandlers,
  ...deviceHandlers,
  ...deviceRemoteHandlers,
  ...deviceEventHandlers,
  ...acsEventHandlers,
  ...sipNumberHandlers,
  ...reportsHandlers,
  ...notificationHandlers,
  ...sipHandlers,
  ...backupHandlers,
  ...webhookHandlers,
  ...systemHandlers,
  ...workerHandlers,
  ...logHandlers,
  ...ipBlockingHandlers,
  ...settingsHandlers,
  ...sipSettingsHandlers,
  ...whiteLabelSettingsHandlers,
  ...brokerHandlers,
  ...mailTemplateHandlers,
  ...integrationHandlers,
  ...callHandlers,
  ...doorHandlers,
  ...sipTrunkHandlers,
} satisfies AllHandlers;
