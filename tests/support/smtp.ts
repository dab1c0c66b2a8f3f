import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  /** the HTML part, when the mail has one */
  html: string | null;
  /** its attachments, inline images among them (by their content id) */
  attachments: { contentType: string; cid: string | null; disposition: string | null; content: Buffer }[];
}

/** A real SMTP receiver on loopback that keeps what it receives. */
export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  /** the next mail to this address, waiting up to `ms` */
  next(to: string, ms?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** `port`: a fixed port (a mail server that comes up after the server first tried it); default any free one. */
export async function startSmtpReceiver(port = 0): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const waiters: Array<{ to: string; resolve: (m: ReceivedMail) => void }> = [];
  const seen = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream, { keepCidLinks: true })
        .then((parsed) => {
          const to = (Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : []).flatMap((a) =>
            a.value.map((v) => (v.address ?? '').toLowerCase()),
          );
          const mail: ReceivedMail = {
            to,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : null,
            attachments: parsed.attachments.map((a) => ({
              contentType: a.contentType,
              cid: a.cid ?? null,
              disposition: a.contentDisposition ?? null,
              content: a.content,
            })),
          };
          mails.push(mail);
          for (const w of [...waiters]) {
            if (to.includes(w.to)) {
              waiters.splice(waiters.indexOf(w), 1);
              seen.set(w.to, (seen.get(w.to) ?? 0) + 1);
              w.resolve(mail);
            }
          }
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${bound}`,
    mails,
    next(to, ms = 10_000) {
      const address = to.toLowerCase();
      const already = mails.filter((m) => m.to.includes(address));
      const taken = seen.get(address) ?? 0;
      if (already.length > taken) {
        seen.set(address, taken + 1);
        return Promise.resolve(already[taken]!);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no mail to ${to} within ${ms} ms`)), ms);
        waiters.push({ to: address, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
