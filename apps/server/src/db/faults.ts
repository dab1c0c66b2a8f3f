import type { FastifyBaseLogger } from 'fastify';
import { errorBody, type ErrorBody } from '@lintel/core';

/** Seconds a client is told to wait (Retry-After) before trying again after a database fault. */
export const RETRY_AFTER_S = 1;

/**
 * The database cannot serve this request now, for a reason that is not the request's: the embedded
 * database is saturated (`busy`), or it failed outside SQL (a file error, the engine closed).
 */
export class DatabaseUnavailable extends Error {
  constructor(
    readonly reason: 'busy' | 'failed',
    options?: { cause?: unknown },
  ) {
    super(reason === 'busy' ? 'the embedded database is saturated' : 'the embedded database failed', options);
    this.name = 'DatabaseUnavailable';
  }
}

/** pg's own messages for a connection that is gone or never came (they carry no SQLSTATE). */
const LOST_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
];
/** socket errors of a connection that dropped or cannot be opened */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether an error means the database connection was lost or cannot be had: SQLSTATE 57P01–57P03 (the
 * server shut down or ended the backend), class 08 (connection exception), class 53 (insufficient
 * resources: too many connections, disk full), a socket error, or pg's own "terminated" messages.
 */
export function isConnectionLoss(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code.startsWith('08') ||
    code.startsWith('53')
  )
    return true;
  if (SOCKET_CODES.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return LOST_MESSAGES.some((m) => message.startsWith(m));
}

/**
 * The reply for a database fault — a 503 `service_unavailable` with Retry-After, logged as a warning — or
 * null when the error is something else. The request is never retried: it may have written before the
 * connection died, and the caller decides. The next request gets a healthy connection.
 */
export function databaseFaultReply(
  err: unknown,
  log: FastifyBaseLogger,
): { status: number; body: ErrorBody; headers: Record<string, string> } | null {
  const unavailable = err instanceof DatabaseUnavailable;
  if (!unavailable && !isConnectionLoss(err)) return null;
  const reason = unavailable ? err.reason : 'connection lost';
  const cause = unavailable ? err.cause : err;
  if (reason === 'failed') log.error({ err: cause }, 'database failed; answered 503');
  else
    log.warn(
      { reason, err: cause instanceof Error ? cause.message : String(cause) },
      'database unavailable; answered 503',
    );
  return {
    status: 503,
    body: errorBody('service_unavailable', { seconds: RETRY_AFTER_S }),
    headers: { 'retry-after': String(RETRY_AFTER_S) },
  };
}
