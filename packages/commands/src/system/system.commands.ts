import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';

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
