import type { ServerContext } from '../context';
import { defaultAccessSync, type AccessSyncConfig } from '../config';

/** The access sync's settings: the configuration's, else the defaults (config.ts `AccessSyncConfig`). */
export function accessSyncConfig(app: Pick<ServerContext, 'config'>): AccessSyncConfig {
  return { ...defaultAccessSync, ...app.config.accessSync };
}
