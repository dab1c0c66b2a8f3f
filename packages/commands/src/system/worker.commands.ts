import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';

/**
 * Workers (spec part 2 §7 "workers list, start, stop, restart"; issue 24 item 3): the server's real
 * long-lived parts, not a table of names. A `module` is a part of the instance that answered
 * (modules/lifecycle.ts: events, jobs, devices, sip, http, websocket); a `job` is a kind of durable job
 * (jobs/define.ts), stopped and started for the whole installation (every instance skips a stopped kind).
 */
export const WorkerTypes = ['module', 'job'] as const;
export const WorkerStates = ['running', 'stopped'] as const;

export const Worker = z.object({
  /** `module:<name>` or `job:<kind>`: what start, stop and restart take */
  name: z.string(),
  type: z.enum(WorkerTypes),
  state: z.enum(WorkerStates),
  /** a module: the instance it runs in (the one that answered); a job kind: null (every instance) */
  instance: z.string().nullable(),
  /** what a person may do with it: false for the HTTP module that serves the request itself */
  controllable: z.boolean(),
  /** a module: the modules it needs */
  needs: z.array(z.string()),
  /** a job kind: its jobs by state (waiting, running, done, failed, cancelled) */
  jobs: z.record(z.string(), z.number().int()),
  /** a job kind: the last error of its latest failed job */
  last_error: z.string().nullable(),
  /** a stopped job kind: when and by whom */
  stopped_at: z.string().nullable(),
});
export type Worker = z.infer<typeof Worker>;

const WorkerName = z.object({ name: z.string().trim().min(1).max(200) });
const WorkerReply = z.object({ data: Worker });

export const workerList = defineCommand({
  id: 'worker.list',
  http: { method: 'GET', path: '/workers' },
  args: NoArgs,
  result: z.object({ data: z.array(Worker), instance: z.string() }),
  gates: { anyPermission: ['system_info.view'] },
});

export const workerStart = defineCommand({
  id: 'worker.start',
  http: { method: 'POST', path: '/workers/start' },
  args: WorkerName,
  result: WorkerReply,
  gates: { anyPermission: ['project_settings.change'] },
});

export const workerStop = defineCommand({
  id: 'worker.stop',
  http: { method: 'POST', path: '/workers/stop' },
  args: WorkerName,
  result: WorkerReply,
  gates: { anyPermission: ['project_settings.change'] },
});

/** A module: stopped and started again (a websocket restart closes every socket with 1001, and they reconnect). */
export const workerRestart = defineCommand({
  id: 'worker.restart',
  http: { method: 'POST', path: '/workers/restart' },
  args: WorkerName,
  result: WorkerReply,
  gates: { anyPermission: ['project_settings.change'] },
});
