import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { fileArg } from '../upload';
import { WhiteLabelInput, WhiteLabelSettings } from '../group/group.resource';

/**
 * The project's white-label (spec part 2 §7 "Project settings: … white-label GET, PATCH, logo POST and
 * DELETE"; issue 24 item 2): the name, address, contacts and logo a project shows as its own — the console's
 * header, and the brand a group without its own inherits (`group.whitelabel_get`'s `effective`). Stored in
 * the project's settings document; the logo is a stored file (storage/logos/), carried by backups.
 */
const VIEW = { anyPermission: ['project_settings.view', 'project_settings.change'] } as const;
const CHANGE = { anyPermission: ['project_settings.change'] } as const;

const Reply = z.object({ data: WhiteLabelSettings });

export const settingsWhitelabelGet = defineCommand({
  id: 'settings.whitelabel_get',
  http: { method: 'GET', path: '/settings/whitelabel' },
  args: NoArgs,
  result: Reply,
  gates: VIEW,
});

export const settingsWhitelabelUpdate = defineCommand({
  id: 'settings.whitelabel_update',
  http: { method: 'PATCH', path: '/settings/whitelabel' },
  args: WhiteLabelInput.partial().strict(),
  result: Reply,
  gates: CHANGE,
});

/** A PNG, JPEG or GIF, stored again as PNG of at most 512 px; it replaces the logo stored before. */
export const settingsWhitelabelLogoUpload = defineCommand({
  id: 'settings.whitelabel_logo_upload',
  http: { method: 'POST', path: '/settings/whitelabel/logo' },
  args: z.object({ image: fileArg('logo') }),
  result: Reply,
  gates: CHANGE,
});

export const settingsWhitelabelLogoDelete = defineCommand({
  id: 'settings.whitelabel_logo_delete',
  http: { method: 'DELETE', path: '/settings/whitelabel/logo' },
  args: NoArgs,
  result: Reply,
  gates: CHANGE,
});
