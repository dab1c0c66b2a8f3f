import { ResourcesMeta, ServerInfo, ServerSettings } from '@lintel/core';
import { defineCommand, NoArgs } from '../command';

/** Answers without a session, so scripts can wait for the server. */
export const serverInfo = defineCommand({
  id: 'server.info',
  http: { method: 'GET', path: '/server-info' },
  args: NoArgs,
  result: ServerInfo,
  access: 'public',
});

export const serverSettings = defineCommand({
  id: 'server.settings',
  http: { method: 'GET', path: '/server-settings' },
  args: NoArgs,
  result: ServerSettings,
});

export const resourcesMeta = defineCommand({
  id: 'resources.meta',
  http: { method: 'GET', path: '/resources/meta' },
  args: NoArgs,
  result: ResourcesMeta,
  developer: true,
});
