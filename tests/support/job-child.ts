/**
 * A server instance in a process of its own, running only the jobs module on the database CHILD_DATABASE_URL,
 * with a job kind `test.block` that never finishes: the instance a test kills with SIGKILL while it holds a job.
 * Prints `ready`, then `claimed <job id> <worker id>` for each job it takes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { createServer, defineJob, loadConfig } from '../../apps/server/src/index';

const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-child-'));
const config = loadConfig(
  {},
  {
    port: 0,
    host: '127.0.0.1',
    dataDir: 'memory://',
    storageDir,
    databaseUrl: process.env.CHILD_DATABASE_URL,
    adminPassword: 'Child-instance-password-1',
    modules: ['events', 'jobs'],
    logLevel: 'warn',
  },
);
const server = await createServer(config);
server.context.jobs.define(
  defineJob({
    kind: 'test.block',
    payload: z.object({}),
    run(_ctx, _payload, job) {
      process.stdout.write(`claimed ${job.id} ${server.context.jobs.workerId}\n`);
      return new Promise<void>(() => undefined);
    },
  }),
);
await server.listen();
process.stdout.write('ready\n');
