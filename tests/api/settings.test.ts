/**
 * Project settings (issue 24 item 2): general settings; the mail server — saved, shown with its password as
 * the placeholder, used by the mailer for the project's mail, and a test e-mail received by a real SMTP
 * receiver (or the mail server's refusal, in its words); the audit log's retention per project, applied by
 * the retention job to that project's rows only.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand, PASSWORD_PLACEHOLDER } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import { startTestServer, type TestServer } from '../support/server';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';
import { admin, failure, secondProject } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let smtp: SmtpReceiver;
const clock = new ManualClock();

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  ts = await startTestServer({ config: { clock, accessTtlS: 30 * 86400 } });
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
  await smtp?.close();
});

const smtpPort = () => Number(new URL(smtp.url).port);
const storedMail = async () =>
  (
    await sql<{
      m: Record<string, unknown> | null;
    }>`select settings->'mail_settings' as m from projects where id = 1`.execute(ts.server.context.db)
  ).rows[0]!.m;

describe('general settings', () => {
  it('reads and changes the project name and description', async () => {
    const before = await getCommand('settings.general_get').run({ api }, {});
    expect(before.data.uid).toBe('default');
    const after = await getCommand('settings.general_update').run(
      { api },
      { name: 'Riverside towers', description: 'Three buildings' },
    );
    expect(after.data).toMatchObject({ name: 'Riverside towers', description: 'Three buildings' });
    expect((await getCommand('settings.general_get').run({ api }, {})).data.name).toBe('Riverside towers');
  });
});

describe('the mail server', () => {
  // no user: the receiver takes no authentication over plain SMTP (the password is kept all the same)
  it('is saved, shown without its password, and carries the project mail', async () => {
    expect((await getCommand('settings.mail_get').run({ api }, {})).source).toBe('none');
    const saved = await getCommand('settings.mail_update').run(
      { api },
      {
        host: '127.0.0.1',
        port: smtpPort(),
        secure: false,
        user: '',
        password: 's3cret',
        from: 'Towers <desk@towers.test>',
      },
    );
    expect(saved.source).toBe('project');
    expect(saved.data).toMatchObject({
      host: '127.0.0.1',
      port: smtpPort(),
      user: '',
      password: PASSWORD_PLACEHOLDER,
    });
    expect(JSON.stringify(await getCommand('settings.mail_get').run({ api }, {}))).not.toContain('s3cret');
    expect(await storedMail()).toMatchObject({ password: 's3cret' });
    // the placeholder sent back keeps the stored password
    await getCommand('settings.mail_update').run(
      { api },
      { password: PASSWORD_PLACEHOLDER, from: 'desk@towers.test' },
    );
    expect(await storedMail()).toMatchObject({ password: 's3cret', from: 'desk@towers.test' });

    // the mailer sends the project's mail through it (projects.settings.mail_settings, written at last)
    const { mailer, jobs } = ts.server.context;
    const waiting = smtp.next('resident@towers.test');
    expect(
      (await mailer.send({ projectId: 1, to: 'resident@towers.test', subject: 'Hello', text: 'Body' }))
        .status,
    ).toBe('queued');
    await jobs.drain();
    expect((await waiting).subject).toBe('Hello');
  });

  it('sends a test e-mail through the settings of the form, saved or not', async () => {
    const waiting = smtp.next('admin@towers.test');
    await getCommand('settings.mail_test').run(
      { api },
      {
        email: 'admin@towers.test',
        mail_settings: { host: '127.0.0.1', port: smtpPort(), password: PASSWORD_PLACEHOLDER },
      },
    );
    const mail = await waiting;
    expect(mail.subject).toBe('Lintel test e-mail');
    expect(mail.text).toContain(`127.0.0.1:${smtpPort()}`);
  });

  it('reports the mail server refusing, in its words', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const e = await failure(
      getCommand('settings.mail_test').run(
        { api },
        { email: 'admin@towers.test', mail_settings: { host: '127.0.0.1', port: closed } },
      ),
    );
    expect(e.code).toBe('cant_perform_action');
    expect(e.data).toMatchObject({ reason: 'mail_server', error: expect.stringMatching(/ECONNREFUSED/) });
    // an empty host: the project's own server is removed
    const removed = await getCommand('settings.mail_update').run({ api }, { host: '' });
    expect(removed.source).toBe('none');
    expect(await storedMail()).toBeNull();
  });
});

describe('audit retention', () => {
  it("keeps the project's audit rows its own number of days, the others the installation's", async () => {
    const r = await getCommand('settings.retention_get').run({ api }, {});
    expect(r.data).toEqual({ audit_event: 365, audit_event_default: 365 });
    const set = await getCommand('settings.retention_update').run({ api }, { audit_event: 30 });
    expect(set.data.audit_event).toBe(30);

    const other = await secondProject(ts);
    const otherProject = (await getCommand('settings.general_get').run({ api: other.api }, {})).data.uid;
    const { db, jobs } = ts.server.context;
    const old = new Date(clock.now().getTime() - 60 * 86_400_000);
    const p2 = (await sql<{ id: number }>`select id from projects where uid = ${otherProject}`.execute(db))
      .rows[0]!.id;
    for (const projectId of [1, p2])
      await sql`insert into audit_events (project_id, action, created_at, data) values (${projectId}, 'old_event', ${old}, '{}')`.execute(
        db,
      );
    await jobs.enqueue(db, 'audit_event.retention', {}, { idempotencyKey: 'settings-test-retention' });
    await jobs.drain();
    const left = await sql<{
      project_id: number;
    }>`select project_id from audit_events where action = 'old_event'`.execute(db);
    expect(left.rows.map((x) => x.project_id)).toEqual([p2]);

    // back to the default
    expect(
      (await getCommand('settings.retention_update').run({ api }, { audit_event: null })).data.audit_event,
    ).toBe(365);
  });
});
