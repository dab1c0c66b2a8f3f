import { z } from 'zod';
import {
  CodeInfo,
  InviteAttemptBody,
  InviteInfo,
  LoginReply,
  OkReply,
  RecoveryBody,
  RegistrationBody,
  ResetBody,
  SelfRegistrationBody,
  TokenBody,
} from '@lintel/core';
import { defineCommand } from '../command';

const TokenParam = z.object({ token: z.string().trim().min(1).max(256) });

/** Open registration, when the server allows it (server-info `registration_open`). */
export const registrationRegister = defineCommand({
  id: 'registration.register',
  http: { method: 'POST', path: '/registration' },
  args: RegistrationBody,
  result: LoginReply,
  access: 'public',
});

/** The invitation behind /registration/{token}. */
export const registrationInviteInfo = defineCommand({
  id: 'registration.invite_info',
  http: { method: 'GET', path: '/registration/invite/:token' },
  args: TokenParam,
  result: InviteInfo,
  access: 'public',
});

export const registrationInviteAttempt = defineCommand({
  id: 'registration.invite_attempt',
  http: { method: 'POST', path: '/registration/invite' },
  args: InviteAttemptBody,
  result: LoginReply,
  access: 'public',
});

/** /registration/confirm/{token}: confirms the e-mail of an account that already has a password. */
export const registrationConfirm = defineCommand({
  id: 'registration.confirm',
  http: { method: 'POST', path: '/registration/confirm' },
  args: TokenBody,
  result: OkReply,
  access: 'public',
});

export const SelfRegistrationStarted = z.object({ token: z.string(), resend_in: z.number().int() });

export const selfRegistrationCreate = defineCommand({
  id: 'self_registration.create',
  http: { method: 'POST', path: '/self-registration' },
  args: SelfRegistrationBody,
  result: SelfRegistrationStarted,
  access: 'public',
});

export const selfRegistrationInfo = defineCommand({
  id: 'self_registration.info',
  http: { method: 'GET', path: '/self-registration/:token' },
  args: TokenParam,
  result: CodeInfo,
  access: 'public',
});

export const selfRegistrationResend = defineCommand({
  id: 'self_registration.resend',
  http: { method: 'POST', path: '/self-registration/:token/resend' },
  args: TokenParam,
  result: SelfRegistrationStarted,
  access: 'public',
});

export const selfRegistrationConfirm = defineCommand({
  id: 'self_registration.confirm',
  http: { method: 'POST', path: '/self-registration/confirm' },
  args: z.object({ token: z.string().trim().min(1).max(256), code: z.string().trim().min(1).max(64) }),
  result: LoginReply,
  access: 'public',
});

export const passwordRecovery = defineCommand({
  id: 'password.recovery',
  http: { method: 'POST', path: '/password/recovery' },
  args: RecoveryBody,
  result: OkReply,
  access: 'public',
});

export const passwordReset = defineCommand({
  id: 'password.reset',
  http: { method: 'POST', path: '/password/reset' },
  args: ResetBody,
  result: OkReply,
  access: 'public',
});
