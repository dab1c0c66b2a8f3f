import type { z, ZodType } from 'zod';
import type { Gate } from '@lintel/core';
import type { HandlerContext } from '../pipeline/handler';
import type { JobRow } from './queue';

/**
 * A kind of durable job, declared like a command: its payload's schema (checked when it is queued, and
 * parsed when it runs: a handler reads typed values, never `Number(job.payload.x)`), the user it acts for
 * and the gates that user must pass when it runs, and its handler. A job runs through `dispatch` as the
 * `job` principal (pipeline/dispatch.ts `dispatchJob`): the user's role is read afresh, so a user who lost
 * the permission meanwhile has the job refused (`failed` at once: a refusal does not pass by retrying).
 */
export interface JobKind<P extends ZodType = ZodType> {
  /** the name in the `jobs` table: `<noun>.<verb>` */
  kind: string;
  payload: P;
  /** the user the job acts for, from its payload; without it the job is the platform's own work (no user) */
  actor?: (payload: z.output<P>) => number | null;
  /** what the actor must be allowed when the job runs (the same gate a command declares) */
  gates?: Gate;
  /** attempts before it is `failed` (default 5) */
  maxAttempts?: number;
  run(ctx: HandlerContext, payload: z.output<P>, job: JobRow): Promise<void>;
}

/** Declares a job kind; the queue runs it once `jobs.define(kind)` registered it. */
export function defineJob<P extends ZodType>(def: JobKind<P>): JobKind<P> {
  return def;
}

/**
 * The pipeline refused a job before its handler ran (its payload does not match, its user is gone or lost
 * the permission): the queue fails it at once, since trying again would be refused again.
 */
export class JobRefused extends Error {
  constructor(readonly reason: unknown) {
    super(`refused: ${(reason as Error)?.message ?? String(reason)}`);
  }
}
