import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { Clock } from '../clock';
import { z } from 'zod';
import type { JobQueue } from '../jobs/queue';
import { defineJob } from '../jobs/define';

export interface MailSettings {
  host: string;
  port: number;
  secure?: boolean;
  user?: string;
  password?: string;
  from?: string;
}

export interface MailMessage {
  projectId: number | null;
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** writes the message to the outbox and queues its sending (`queued`), or keeps it when no SMTP is set */
  send(message: MailMessage): Promise<{ id: number; status: 'queued' | 'kept' }>;
}

export const MAIL_JOB = 'mail.send';

/** Reads the SMTP URL form `smtp://user:pass@host:port` (smtps:// for TLS). */
export function parseSmtpUrl(url: string): MailSettings {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || (u.protocol === 'smtps:' ? 465 : 25)),
    secure: u.protocol === 'smtps:',
    user: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
  };
}

/** A transport to a mail server as the settings say (the outbox's jobs and the test e-mail use it). */
export function transportFor(settings: MailSettings) {
  return nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure ?? false,
    auth: settings.user ? { user: settings.user, pass: settings.password ?? '' } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
    tls: { rejectUnauthorized: false },
  });
}

/**
 * Every message is written to the outbox first. With SMTP settings (the project's mail settings, else
 * LINTEL_SMTP_URL) a `mail.send` job sends it, outside the request, retried with back-off while the mail
 * server fails; it is marked sent, or failed once the attempts are used up. With none, it stays `kept`
 * and its text goes to the server log, so a first user can still confirm an account on a machine with no
 * mail server.
 */
export function createMailer(opts: {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  smtpUrl?: string;
  from: string;
  jobs: JobQueue;
  clock: Clock;
}): Mailer {
  const { db, log } = opts;
  async function settingsFor(projectId: number | null): Promise<MailSettings | null> {
    if (projectId !== null) {
      const project = await db
        .selectFrom('projects')
        .select('settings')
        .where('id', '=', projectId)
        .executeTakeFirst();
      const ms = (project?.settings as { mail_settings?: MailSettings } | undefined)?.mail_settings;
      if (ms?.host) return ms;
    }
    return opts.smtpUrl ? parseSmtpUrl(opts.smtpUrl) : null;
  }
  opts.jobs.define(
    defineJob({
      kind: MAIL_JOB,
      payload: z.object({ outboxId: z.number().int() }),
      maxAttempts: 8,
      async run(_ctx, { outboxId: id }, job) {
        const message = await db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
        if (!message || message.status === 'sent') return;
        const settings = await settingsFor(message.project_id);
        if (!settings) {
          await db.updateTable('outbox').set({ status: 'kept' }).where('id', '=', id).execute();
          return;
        }
        try {
          const transport = transportFor(settings);
          await transport.sendMail({
            from: settings.from || opts.from,
            to: message.to_address,
            subject: message.subject,
            text: message.body,
          });
          await db
            .updateTable('outbox')
            .set({ status: 'sent', sent_at: opts.clock.now(), error: null })
            .where('id', '=', id)
            .execute();
        } catch (err) {
          const error = String((err as Error)?.message ?? err).slice(0, 500);
          const last = job.attempts >= job.max_attempts;
          await db
            .updateTable('outbox')
            .set({ status: last ? 'failed' : 'queued', error })
            .where('id', '=', id)
            .execute();
          log.error(
            { outbox: id, to: message.to_address, attempt: job.attempts, err: error },
            last ? 'mail could not be sent' : 'mail not sent yet; retrying',
          );
          throw err;
        }
      },
    }),
  );
  return {
    async send(message) {
      const settings = await settingsFor(message.projectId);
      const row = await db
        .insertInto('outbox')
        .values({
          project_id: message.projectId,
          to_address: message.to,
          subject: message.subject,
          body: message.text,
          status: settings ? 'queued' : 'kept',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (!settings) {
        // the text goes to the operator's console (stdout), never into the log file people read through the
        // API (`log.get`): it may hold another account's code or reset link (logs/log-files.ts, `file_msg`)
        log.info(
          {
            outbox: row.id,
            to: message.to,
            file_msg: 'no mail server configured; mail kept in the outbox (its text is not in this log)',
          },
          `no mail server configured; mail kept in the outbox:\n--- ${message.subject} ---\n${message.text}\n---`,
        );
        return { id: row.id, status: 'kept' };
      }
      await opts.jobs.enqueue(db, MAIL_JOB, { outboxId: row.id }, { idempotencyKey: `mail:${row.id}` });
      return { id: row.id, status: 'queued' };
    },
  };
}
