import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config';
import type { Database } from './db/database';
import type { DB } from './db/schema';
import type { Mailer } from './mail/mailer';
import type { EventBus } from './realtime/bus';
import type { Clock } from './clock';
import type { JobQueue } from './jobs/queue';
import type { EventOutbox } from './events/outbox';
import type { DeviceGateway } from './devices/gateway';
import type { RealtimeSockets } from './realtime/websocket';
import type { RequestCache } from './engine/request-cache';
import type { AllHandlers } from './pipeline/handler';
import type { SipService } from './sip/service';
import type { WebhookService } from './webhooks/service';
import type { Metrics } from './metrics/metrics';
import type { Workers } from './modules/workers';
import type { LogFiles } from './logs/log-files';
import type { AccessSync } from './access-sync/planner';

/** What every handler and service of the server shares. */
export interface ServerContext {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  mailer: Mailer;
  events: EventBus;
  /** the server's one source of time (clock.ts) */
  clock: Clock;
  /** durable jobs (jobs/queue.ts) */
  jobs: JobQueue;
  /** typed events written in a transaction, delivered after it commits (events/outbox.ts) */
  outbox: EventOutbox;
  /** the callers of requests, remembered between them (engine/request-cache.ts) */
  authCache: RequestCache;
  /**
   * what the routing of calls reads (numbers, owners, forward rules, trunks), remembered between calls and
   * forgotten on any change that may touch it (sip/calls.ts, engine/request-cache.ts)
   */
  routeCache: RequestCache;
  /** the planner's estimates of list sizes, kept a while (engine/request-cache.ts) */
  estimates: RequestCache;
  /** the devices' one interface, MQTT and HTTP alike (devices/gateway.ts) */
  devices: DeviceGateway;
  /** the SIP service: Kamailio, supervised and driven over JSON-RPC (sip/service.ts) */
  sip: SipService;
  /** the events sent to the projects' webhooks (webhooks/service.ts) */
  webhooks: WebhookService;
  /** the websocket's open sockets on this instance (realtime/websocket.ts) */
  sockets: RealtimeSockets;
  /** the planner of the access sync to the devices (access-sync/planner.ts) */
  accessSync: AccessSync;
  /** every command's handler (handlers/index.ts), which `dispatch` runs */
  handlers: AllHandlers;
  /** the instance's metrics, in the Prometheus text format (metrics/metrics.ts) */
  metrics: Metrics;
  /** the workers: this instance's modules and the job kinds, started and stopped by people (modules/workers.ts) */
  workers: Workers;
  /** the instance's log files, read back by `log.*` (logs/log-files.ts) */
  logFiles: LogFiles;
}

/** Who is calling, once the bearer token is checked. */
export interface AuthInfo {
  sessionId: number;
  userId: number;
  accountId: number;
  projectId: number;
  roleId: number;
  permissions: ReadonlySet<string>;
  /**
   * The caller's groups (own) and those with every group below them (subtree), read by the websocket for
   * the sockets subscribed to a topic whose events are scoped by group (`scope` audiences); absent elsewhere.
   */
  groups?: { own: ReadonlySet<number>; subtree: ReadonlySet<number> };
}

export interface CallerInfo {
  ip: string;
  userAgent: string | null;
  /** from Accept-Language: the language of e-mails sent before the person has a profile */
  locale: 'en' | 'ru';
}
