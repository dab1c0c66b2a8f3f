import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config';
import type { Database } from './db/database';
import type { DB } from './db/schema';
import type { Mailer } from './mail/mailer';
import type { EventBus } from './realtime/bus';

/** What every handler and service of the server shares. */
export interface ServerContext {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  mailer: Mailer;
  events: EventBus;
}

/** Who is calling, once the bearer token is checked. */
export interface AuthInfo {
  sessionId: number;
  userId: number;
  accountId: number;
  projectId: number;
  roleId: number;
  permissions: ReadonlySet<string>;
}

export interface CallerInfo {
  ip: string;
  userAgent: string | null;
  /** from Accept-Language: the language of e-mails sent before the person has a profile */
  locale: 'en' | 'ru';
}
