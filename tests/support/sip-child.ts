/**
 * A Lintel with its SIP service in a process of its own, on the data folder CHILD_DATA_DIR and the SIP ports
 * of CHILD_SIP (JSON, a SipConfig's fields): the instance tests/sip/catch-up kills with SIGKILL under a call
 * and starts again on the same folder. CHILD_LICENCE grants every feature on its first start. Prints
 * `ready <its address>` once it listens; its log goes to standard output.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createServer, defaultDeviceLimits, loadConfig, loadSipConfig } from '../../apps/server/src/index';
import { everyFeatureOn } from './fixtures';

const dataDir = process.env.CHILD_DATA_DIR!;
const storageDir = path.join(dataDir, 'storage-test');
fs.mkdirSync(storageDir, { recursive: true });
const config = loadConfig(
  {},
  {
    port: Number(process.env.CHILD_PORT ?? 0),
    host: '127.0.0.1',
    dataDir,
    storageDir,
    adminPassword: 'Child-instance-password-1',
    logLevel: 'info',
    licences: { publicKeys: [], cloudTimeoutMs: 10_000, evaluationDays: 0 },
    mqtt: { port: 0, host: '127.0.0.1', shared: false, requestTimeoutMs: 5_000, sweepMs: 0 },
    devices: { ...defaultDeviceLimits, allowLoopback: true },
    sip: { ...loadSipConfig({}), ...(JSON.parse(process.env.CHILD_SIP!) as object) },
  },
);
const server = await createServer(config);
if (process.env.CHILD_LICENCE) {
  const p = await server.context.db
    .selectFrom('projects')
    .select('id')
    .where('uid', '=', 'default')
    .executeTakeFirstOrThrow();
  await server.context.db
    .insertInto('licenses')
    .values({ project_id: p.id, issuer: 'test', features: JSON.stringify(everyFeatureOn()) })
    .execute();
}
const address = await server.listen();
process.stdout.write(`ready ${address.replace('0.0.0.0', '127.0.0.1')}\n`);
