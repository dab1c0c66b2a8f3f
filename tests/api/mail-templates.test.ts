/**
 * Mail templates (issue 24 item 5): types with their placeholders; a template must hold its type's required
 * placeholders; one per type per group (and one for the project); the mail is written with the template of
 * the nearest group up the chain, else the project's, else the built-in text — seen by a real SMTP receiver;
 * preview and send preview; who may change which template (project settings, or the group's edit rights).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';
import { admin, failure, group, raw, rootGroup, userWith } from '../support/fixtures';
import { composeMail } from '../../apps/server/src/mail/templates';

let ts: TestServer;
let api: ApiClient;
let smtp: SmtpReceiver;
let root: number;
let A: number;
let A1: number;
let B: number;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  ts = await startTestServer({ config: { smtpUrl: smtp.url } });
  api = await admin(ts);
  root = await rootGroup(api);
  A = await group(api, 'Tower A', root);
  A1 = await group(api, 'Tower A, entrance 1', A);
  B = await group(api, 'Tower B', root);
});
afterAll(async () => {
  await ts?.close();
  await smtp?.close();
});

const create = (
  client: ApiClient,
  args: { domain_id: number | null; subject: string; body?: string; mail_type_id?: 'invitation' | 'confirm' },
) =>
  getCommand('mail_template.create').run(
    { api: client },
    { mail_type_id: 'invitation', body: 'Hello {{name}}, open {{link}}', ...args },
  );
const compose = (groupId: number | null) =>
  composeMail(ts.server.context, {
    projectId: 1,
    type: 'invitation',
    locale: 'en',
    params: { name: 'Anna', link: 'https://x/1' },
    groupId,
  });

describe('mail templates', () => {
  it('lists the types with the placeholders each offers and requires', async () => {
    const { data } = await getCommand('mail_template.types').run({ api }, {});
    expect(data.find((t) => t.id === 'invitation')).toEqual({
      id: 'invitation',
      offered: ['name', 'login', 'project', 'link', 'hours'],
      required: ['link'],
    });
  });

  it('refuses a template without its required placeholders, and a second one of a type for a group', async () => {
    const r = await raw(ts, api, 'PUT', '/mail-templates', {
      body: { mail_type_id: 'invitation', domain_id: null, subject: 'Welcome', body: 'No link here' },
    });
    expect(r.status).toBe(422);
    expect(r.body.data.fields).toEqual([
      expect.objectContaining({ field: 'body', rule: 'required_placeholders' }),
    ]);
    await create(api, { domain_id: null, subject: 'Project welcome' });
    expect((await failure(create(api, { domain_id: null, subject: 'Again' }))).code).toBe(
      'template_type_exists',
    );
  });

  it('writes the mail with the nearest group up the chain, else the project, else the built-in text', async () => {
    const a = await create(api, { domain_id: A, subject: 'Tower A welcomes {{name}}' });
    expect((await compose(A1)).subject).toBe('Tower A welcomes Anna');
    expect((await compose(A1)).text).toBe('Hello Anna, open https://x/1');
    expect((await compose(B)).subject).toBe('Project welcome');
    const own = await create(api, { domain_id: A1, subject: 'Entrance 1' });
    expect((await compose(A1)).subject).toBe('Entrance 1');

    // the invitation a person in A1 gets, as the mail server receives it
    const { roleId } = await userWith(ts, api, { permissions: ['users.view'], domains: [A1] });
    const waiting = smtp.next('invited@towers.test');
    await getCommand('user.create').run(
      { api },
      { login: 'invited', name: 'Invited person', role: roleId, domains: [A1], email: 'invited@towers.test' },
    );
    await ts.server.context.jobs.drain();
    const mail = await waiting;
    expect(mail.subject).toBe('Entrance 1');
    expect(mail.text).toMatch(/^Hello Invited person, open http.*\/registration\//);

    await getCommand('mail_template.update').run({ api }, { id: own.data.id, subject: 'Entrance 1, again' });
    expect((await compose(A1)).subject).toBe('Entrance 1, again');
    // an update must keep the required placeholders too
    const bad = await failure(
      getCommand('mail_template.update').run({ api }, { id: own.data.id, body: 'no link' }),
    );
    expect(bad.code).toBe('check_fields_data');
    await getCommand('mail_template.delete').run({ api }, { id: own.data.id });
    await getCommand('mail_template.delete').run({ api }, { id: a.data.id });
    expect((await compose(A1)).subject).toBe('Project welcome');
    const list = await getCommand('mail_template.list').run({ api }, {});
    await getCommand('mail_template.delete').run({ api }, { id: list.data[0]!.id });
    expect((await compose(A1)).subject).toBe('You are invited to Lintel');
  });

  it('previews a draft with example values, and sends the preview', async () => {
    const draft = {
      mail_type_id: 'self_registration' as const,
      subject: 'Code for {{name}}',
      body: 'Your code: {{code}}',
    };
    const p = await getCommand('mail_template.preview').run({ api }, draft);
    expect(p).toEqual({ subject: 'Code for Anna Petrova', text: 'Your code: 123456' });
    const waiting = smtp.next('preview@towers.test');
    await getCommand('mail_template.send_preview').run({ api }, { ...draft, email: 'preview@towers.test' });
    await ts.server.context.jobs.drain();
    expect((await waiting).subject).toBe('Code for Anna Petrova');
  });

  it("lets a group's administrator change its own group's templates only", async () => {
    const manager = await (
      await userWith(ts, api, { permissions: ['domains.own_mail_templates'], domains: [B] })
    ).client();
    const mine = await create(manager, { domain_id: B, subject: 'Tower B', mail_type_id: 'confirm' });
    expect(mine.data.domain).toEqual({ id: B, name: 'Tower B' });
    expect((await failure(create(manager, { domain_id: A, subject: 'Not mine' }))).code).toBe(
      'method_prohibited',
    );
    expect((await failure(create(manager, { domain_id: null, subject: 'Project' }))).code).toBe(
      'method_prohibited',
    );
    const seen = await getCommand('mail_template.list').run({ api: manager }, {});
    expect(seen.data.map((t) => t.domain_id)).toEqual([B]);
    // descendants: edit_descendant over A reaches A1, not B
    const tower = await (
      await userWith(ts, api, { permissions: ['domains.edit_descendant'], domains: [A] })
    ).client();
    await create(tower, { domain_id: A1, subject: 'Below A', mail_type_id: 'confirm' });
    expect((await failure(create(tower, { domain_id: B, subject: 'Beside A' }))).code).toBe(
      'method_prohibited',
    );
  });
});
