import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { SipStatus } from '../sip/sip.commands';

/**
 * The platform itself (issue 24 items 3 and 6; spec part 2 §7 "metrics", "system info"): the API document,
 * the metrics, the system information. Workers are `worker.*` (system/worker.commands.ts).
 */

/**
 * The OpenAPI 3.1 document of the API, made from this registry (`openapi.ts`). Public: it tells the API's
 * shape, which the sources tell anyway, and a client generator reads it before anyone has a session.
 */
export const systemOpenapi = defineCommand({
  id: 'system.openapi',
  http: { method: 'GET', path: '/openapi.json' },
  args: NoArgs,
  result: z.record(z.string(), z.unknown()),
  access: 'public',
});

/**
 * The instance's metrics in the Prometheus text format (version 0.0.4): requests by route and status with
 * latency histograms, jobs by kind and state, device messages, websocket clients, the database pool, the
 * process. A session with `system_info.view`, or Prometheus with the operator's metrics token
 * (LINTEL_METRICS_TOKEN, docs/decisions.md "Administration").
 */
export const systemMetrics = defineCommand({
  id: 'system.metrics',
  http: { method: 'GET', path: '/metrics' },
  args: NoArgs,
  /** text, not JSON (the clients read a reply that is not JSON as its text) */
  result: z.unknown(),
  gates: { anyPermission: ['system_info.view'] },
});

const Pool = z.object({
  total: z.number().int(),
  idle: z.number().int(),
  waiting: z.number().int(),
  max: z.number().int(),
});

/** What the system information page shows (spec part 1 §2.1 /system-info; issue 24 item 2). */
export const SystemInfo = z.object({
  versions: z.object({
    server: z.string(),
    api: z.string(),
    node: z.string(),
    /** the database server's own version string */
    database: z.string(),
  }),
  /** the instance that answered (host name and process) */
  instance: z.string(),
  started_at: z.string(),
  uptime_s: z.number().int(),
  database: z.object({
    kind: z.enum(['pglite', 'postgres']),
    size_bytes: z.number().int(),
    pool: Pool,
  }),
  broker: z.object({
    /** the embedded broker of `npm start`, or MQTT_URL's */
    kind: z.enum(['embedded', 'external']),
    /** the address devices are told (never a password) */
    url: z.string(),
    running: z.boolean(),
    connected: z.boolean(),
    messages_handled: z.number().int(),
    messages_refused: z.number().int(),
  }),
  sip: SipStatus,
  jobs: z.object({
    /** the installation's jobs by state */
    by_state: z.record(z.string(), z.number().int()),
    /** this instance takes jobs (its module `jobs` runs) */
    running: z.boolean(),
    /** job kinds an operator stopped */
    stopped_kinds: z.array(z.string()),
  }),
  websocket_clients: z.number().int(),
  modules: z.array(z.object({ name: z.string(), running: z.boolean() })),
});
export type SystemInfo = z.infer<typeof SystemInfo>;

export const systemInfo = defineCommand({
  id: 'system.info',
  http: { method: 'GET', path: '/system-info' },
  args: NoArgs,
  result: SystemInfo,
  gates: { anyPermission: ['system_info.view'] },
});
