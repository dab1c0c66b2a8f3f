import {
  DeleteAccountBody,
  MobilePopupBody,
  OkReply,
  PasswordChangeBody,
  Profile,
  ProfilePatch,
} from '@lintel/core';
import { defineCommand, NoArgs } from '../command';

export const profileGet = defineCommand({
  id: 'profile.get',
  http: { method: 'GET', path: '/profile' },
  args: NoArgs,
  result: Profile,
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
