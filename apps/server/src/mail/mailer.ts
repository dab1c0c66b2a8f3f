import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { Clock } from '../clock';
import { z } from 'zod';
import type { JobQueue } from '../jobs/queue';
import { defineJob } from '../jobs/define';
import { qrPng } from '../access/qr-image';

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
  /** QR codes shown in the mail (an HTML part beside the text, each image inline by its content id) */
  inline?: InlineQr[];
}

/** A QR code drawn into a mail when it is sent (the guest pass), by the payload it encodes. */
export const InlineQr = z.object({
  cid: z.string().max(100),
  qr: z.string().max(2000),
  alt: z.string().max(200),
});
export type InlineQr = z.infer<typeof InlineQr>;

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * What nodemailer sends for a message: the text alone, or with inline QR codes the text as HTML too (the
 * same words, kept as written) followed by the images, each a PNG attachment named by its content id.
 */
export async function mailBody(
  text: string,
  inline: InlineQr[] | undefined,
): Promise<{
  text: string;
  html?: string;
  attachments?: {
    filename: string;
    content: Buffer;
    contentType: string;
    cid: string;
    contentDisposition: 'inline';
  }[];
}> {
  if (!inline?.length) return { text };
  const images = await Promise.all(inline.map(async (i) => ({ ...i, png: await qrPng(i.qr, 320) })));
  const html =
    `<div style="white-space:pre-wrap;font-family:sans-serif">${escapeHtml(text)}</div>` +
    images
      .map(
        (i) =>
          `<p><img src="cid:${escapeHtml(i.cid)}" alt="${escapeHtml(i.alt)}" width="320" height="320"></p>`,
      )
      .join('');
  return {
    text,
    html,
    attachments: images.map((i, n) => ({
      filename: `qr-${n + 1}.png`,
      content: i.png,
      contentType: 'image/png',
      cid: i.cid,
      contentDisposition: 'inline' as const,
    })),
  };
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
      // the inline QR codes travel with the job (the outbox keeps the text) and are drawn when it is sent
      payload: z.object({ outboxId: z.number().int(), inline: z.array(InlineQr).max(4).optional() }),
      maxAttempts: 8,
      async run(_ctx, { outboxId: id, inline }, job) {
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
            ...(await mailBody(message.body, inline)),
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
      await opts.jobs.enqueue(
        db,
        MAIL_JOB,
        { outboxId: row.id, ...(message.inline?.length ? { inline: message.inline } : {}) },
        { idempotencyKey: `mail:${row.id}` },
      );
      return { id: row.id, status: 'queued' };
    },
  };
}
