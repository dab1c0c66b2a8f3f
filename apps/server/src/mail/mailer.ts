import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';

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
  send(message: MailMessage): Promise<{ id: number; status: 'sent' | 'kept' | 'failed' }>;
}

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

/**
 * Every message is written to the outbox first. With SMTP settings (the project's mail settings, else
 * LINTEL_SMTP_URL) it is sent and marked sent or failed. With none, it stays `kept` and its text goes to
 * the server log, so a first user can still confirm an account on a machine with no mail server.
 */
export function createMailer(opts: {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  smtpUrl?: string;
  from: string;
}): Mailer {
  const { db, log } = opts;
  async function settingsFor(projectId: number | null): Promise<MailSettings | null> {
    if (projectId !== null) {
      const project = await db.selectFrom('projects').select('settings').where('id', '=', projectId).executeTakeFirst();
      const ms = (project?.settings as { mail_settings?: MailSettings } | undefined)?.mail_settings;
      if (ms?.host) return ms;
    }
    return opts.smtpUrl ? parseSmtpUrl(opts.smtpUrl) : null;
  }
  return {
    async send(message) {
      const row = await db
        .insertInto('outbox')
        .values({
          project_id: message.projectId,
          to_address: message.to,
          subject: message.subject,
          body: message.text,
          status: 'kept',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const settings = await settingsFor(message.projectId);
      if (!settings) {
        log.info(
          { outbox: row.id, to: message.to },
          `no mail server configured; mail kept in the outbox:\n--- ${message.subject} ---\n${message.text}\n---`,
        );
        return { id: row.id, status: 'kept' };
      }
      try {
        const transport = nodemailer.createTransport({
          host: settings.host,
          port: settings.port,
          secure: settings.secure ?? false,
          auth: settings.user ? { user: settings.user, pass: settings.password ?? '' } : undefined,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 20_000,
          tls: { rejectUnauthorized: false },
        });
        await transport.sendMail({ from: settings.from || opts.from, to: message.to, subject: message.subject, text: message.text });
        await db.updateTable('outbox').set({ status: 'sent', sent_at: new Date() }).where('id', '=', row.id).execute();
        return { id: row.id, status: 'sent' };
      } catch (err) {
        const error = String((err as Error)?.message ?? err).slice(0, 500);
        await db.updateTable('outbox').set({ status: 'failed', error }).where('id', '=', row.id).execute();
        log.error({ outbox: row.id, to: message.to, err: error }, 'mail could not be sent');
        return { id: row.id, status: 'failed' };
      }
    },
  };
}
