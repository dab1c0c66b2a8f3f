import { LoginBody, LoginReply, OkReply, RefreshBody, RefreshReply, Timeouts } from '@lintel/core';
import { defineCommand, NoArgs } from '../command';

export const sessionLogin = defineCommand({
  id: 'session.login',
  http: { method: 'POST', path: '/login' },
  args: LoginBody,
  result: LoginReply,
  access: 'public',
  timeoutMs: Timeouts.login,
});

export const sessionRefresh = defineCommand({
  id: 'session.refresh',
  http: { method: 'POST', path: '/refresh' },
  args: RefreshBody,
  result: RefreshReply,
  access: 'public',
  hidden: true,
});

export const sessionLogout = defineCommand({
  id: 'session.logout',
  http: { method: 'POST', path: '/logout' },
  args: NoArgs,
  result: OkReply,
});
