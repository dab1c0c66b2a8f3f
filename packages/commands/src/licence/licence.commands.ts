import { z } from 'zod';
import { LicenceList, LicenceNotifySettings, LicenceUsage } from '@lintel/core';
import { defineCommand, NoArgs } from '../command';
import { IdParam, OkReply } from '../resource';
import { fileArg } from '../upload';

/**
 * Licences (spec part 2 §7 "Licences", part 1 §2.1 /licenses: "manage or view licenses"). Keygen and
 * issue are not commands: they run on the installer's machine with the vendor's private key (apps/cli).
 */
const view = { anyPermission: ['licenses.view', 'licenses.manage'] } as const;
const manage = { anyPermission: ['licenses.manage'] } as const;

export const licenceList = defineCommand({
  id: 'licence.list',
  http: { method: 'GET', path: '/licenses' },
  args: NoArgs,
  result: LicenceList,
  gates: view,
});

export const licenceDelete = defineCommand({
  id: 'licence.delete',
  http: { method: 'DELETE', path: '/licenses/:id' },
  args: IdParam,
  result: OkReply,
  gates: manage,
});

/** Feature usage state: sip_numbers_used, mobile_app_used, ukey2_used against the licences' counts. */
export const licenceUsage = defineCommand({
  id: 'licence.usage',
  http: { method: 'GET', path: '/licenses/usage' },
  args: NoArgs,
  result: LicenceUsage,
  gates: view,
});

const Added = z.object({ id: z.number().int(), licence_id: z.string().nullable() });

/** Adds a signed licence file (multipart). */
export const licenceAddFile = defineCommand({
  id: 'licence.add_file',
  http: { method: 'POST', path: '/licenses/file' },
  args: z.object({ file: fileArg('licence_file') }),
  result: Added,
  gates: manage,
});

/** Fetches this project's licence from the configured licence server (LINTEL_LICENCE_CLOUD_URL). */
export const licenceAddCloud = defineCommand({
  id: 'licence.add_cloud',
  http: { method: 'POST', path: '/licenses/cloud' },
  args: NoArgs,
  result: Added,
  gates: manage,
});

export const licenceNotifyGet = defineCommand({
  id: 'licence.notify_get',
  http: { method: 'GET', path: '/licenses/notify-settings' },
  args: NoArgs,
  result: LicenceNotifySettings,
  gates: view,
});

export const licenceNotifyUpdate = defineCommand({
  id: 'licence.notify_update',
  http: { method: 'PATCH', path: '/licenses/notify-settings' },
  args: LicenceNotifySettings.partial().strict(),
  result: LicenceNotifySettings,
  gates: manage,
});
