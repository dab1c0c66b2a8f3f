import {
  DeleteAccountBody,
  MobilePopupBody,
  OkReply,
  PasswordChangeBody,
  Profile,
  ProfilePatch,
} from '@lintel/core';
import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';

export const profileGet = defineCommand({
  id: 'profile.get',
  http: { method: 'GET', path: '/profile' },
  args: NoArgs,
  result: Profile,
});

/**
 * The brand the signed-in user's console shows in its header (issue 24 item 2, white-label): the white-label
 * of his first group that has one enabled (its own, or its nearest ancestor's; only with the white-label
 * licence on for his groups, as changing it needs), else the project's when enabled — its name and logo;
 * none: the product's own. Any signed-in user may read his own.
 */
export const ProfileBrand = z.object({
  source: z.enum(['group', 'project']),
  name: z.string(),
  logo: z.string().nullable(),
});
export type ProfileBrand = z.infer<typeof ProfileBrand>;

export const profileWhitelabel = defineCommand({
  id: 'profile.whitelabel',
  http: { method: 'GET', path: '/profile/whitelabel' },
  args: NoArgs,
  result: z.object({ data: ProfileBrand.nullable() }),
  hidden: true,
});

export const profileUpdate = defineCommand({
  id: 'profile.update',
  http: { method: 'PATCH', path: '/profile' },
  args: ProfilePatch,
  result: Profile,
});

export const profilePassword = defineCommand({
  id: 'profile.password',
  http: { method: 'POST', path: '/profile/password' },
  args: PasswordChangeBody,
  result: OkReply,
});

export const profileMobilePopup = defineCommand({
  id: 'profile.mobile_popup',
  http: { method: 'PATCH', path: '/profile/mobile-client-popup' },
  args: MobilePopupBody,
  result: Profile,
});

export const profileDelete = defineCommand({
  id: 'profile.delete',
  http: { method: 'DELETE', path: '/profile' },
  argsIn: 'body',
  args: DeleteAccountBody,
  result: OkReply,
});
