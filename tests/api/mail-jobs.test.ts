/**
 * Mail leaves the request: sending is the durable job `mail.send`. A mail server that refuses is retried
 * with back-off (moved by the clock), and the message arrives once it is up. And a server closing finishes
 * the jobs it is running before it lets the database go.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import { ManualClock, backoffS, defineJob, type JobRow } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

describe('mail through the job queue', () => {
  const clock = new ManualClock();
  let ts: TestServer;
  let smtp: SmtpReceiver | null = null;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    ts = await startTestServer({
      config: { clock, modules: ['events', 'http'], smtpUrl: `smtp://127.0.0.1:${port}` },
    });
  });
  afterAll(async () => {
    await ts?.close();
    await smtp?.close();
  });

  it('retries a refused message with back-off and delivers it when the mail server is up', async () => {
    const { mailer, jobs, db } = ts.server.context;
    const sent = await mailer.send({
      projectId: null,
      to: 'retry@example.test',
      subject: 'Hello',
      text: 'Once the server is up',
    });
    expect(sent.status).toBe('queued');

    // nothing listens yet: the attempt fails, the message waits in the outbox
    expect(await jobs.drain()).toBe(1);
    const outbox = () =>
      db.selectFrom('outbox').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
    expect(await outbox()).toMatchObject({ status: 'queued', sent_at: null });
    expect((await outbox()).error).toMatch(/ECONNREFUSED/);
    const job = (
      await sql<JobRow>`select * from jobs where kind = 'mail.send' and payload->>'outboxId' = ${String(sent.id)}`.execute(
        db,
      )
    ).rows[0]!;
    expect(job).toMatchObject({ state: 'waiting', attempts: 1 });

    smtp = await startSmtpReceiver(port);
    // not before its time
    expect(await jobs.drain()).toBe(0);
    clock.advance(backoffS(jobs.settings, 1) * 1000);
    expect(await jobs.drain()).toBe(1);
    const mail = await smtp.next('retry@example.test');
    expect(mail.subject).toBe('Hello');
    expect(await outbox()).toMatchObject({ status: 'sent', error: null, sent_at: clock.now() });
    expect(smtp.mails.filter((m) => m.to.includes('retry@example.test'))).toHaveLength(1);
  });
});

describe('closing the server', () => {
  it('lets a running job finish, with the database still open, before it closes', async () => {
    const ts = await startTestServer({
      config: { jobs: { pollMs: 50, leaseS: 60, concurrency: 1, backoffBaseS: 1, backoffCapS: 10 } },
    });
    const { jobs, db } = ts.server.context;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let finishedWithDatabase = false;
    jobs.define(
      defineJob({
        kind: 'test.slow',
        payload: z.object({}),
        async run() {
          started();
          await gate;
          await sql`select 1`.execute(db);
          finishedWithDatabase = true;
        },
      }),
    );
    await jobs.enqueue(db, 'test.slow', {});
    await running;
    let closed = false;
    const closing = ts.close().then(() => (closed = true));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(finishedWithDatabase).toBe(true);
  });
});
