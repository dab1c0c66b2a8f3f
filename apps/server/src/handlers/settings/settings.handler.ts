import type { AuditAction } from '@lintel/core';
import crypto from 'node:crypto';
import { sql } from 'kysely';
import {
  PASSWORD_PLACEHOLDER,
  type MailServerSettings,
  type PushSettings,
  type WalletSettings as ShownWalletSettings,
} from '@lintel/commands';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import { parseSmtpUrl, transportFor, type MailSettings } from '../../mail/mailer';
import { composeMail } from '../../mail/templates';
import { retentionDays } from '../../engine/journal';
import { journals } from '../journals';
import { walletEnabled, walletSettingsProblem, type WalletSettings } from '../../access/wallet-pass';

/**
 * Project settings (issue 24 item 2): `projects.name`, `description` and the `settings` document — its
 * `mail_settings` (read by the mailer for every message of the project) and `retention_days` (read by the
 * journals' retention jobs, jobs/journal-retention.ts). Each change is an audit event without the password.
 */
interface ProjectRow {
  uid: string;
  name: string;
  description: string;
  settings: { mail_settings?: MailSettings; retention_days?: Record<string, number> } & Record<
    string,
    unknown
  >;
}

async function project(ctx: HandlerContext): Promise<ProjectRow> {
  return (await ctx.app.db
    .selectFrom('projects')
    .select(['uid', 'name', 'description', 'settings'])
    .where('id', '=', signedIn(ctx).projectId)
    .executeTakeFirstOrThrow()) as ProjectRow;
}

/** Sets one key of the project's settings document, leaving the others as they are. */
async function setSetting(ctx: HandlerContext, key: string, value: unknown): Promise<void> {
  await sql`update projects set settings = jsonb_set(settings, ${sql.lit(`{${key}}`)}, ${JSON.stringify(value ?? null)}::jsonb)
    where id = ${signedIn(ctx).projectId}`.execute(ctx.app.db);
}

const shown = (m: MailSettings | undefined): MailServerSettings => ({
  host: m?.host ?? '',
  port: m?.port ?? 587,
  secure: m?.secure ?? false,
  user: m?.user ?? '',
  password: m?.password ? PASSWORD_PLACEHOLDER : '',
  from: m?.from ?? '',
});

function mailReply(ctx: HandlerContext, m: MailSettings | undefined) {
  const source = m?.host ? 'project' : ctx.app.config.smtpUrl ? 'installation' : 'none';
  return { data: shown(m), source } as const;
}

/** The settings as given, the placeholder password (or none given) replaced by the stored one. */
function merged(stored: MailSettings | undefined, given: Partial<MailServerSettings>): MailSettings {
  const password =
    given.password === undefined || given.password === PASSWORD_PLACEHOLDER
      ? stored?.password
      : given.password;
  return {
    host: given.host ?? stored?.host ?? '',
    port: given.port ?? stored?.port ?? 587,
    secure: given.secure ?? stored?.secure ?? false,
    user: given.user ?? stored?.user ?? '',
    password: password || undefined,
    from: given.from ?? stored?.from ?? '',
  };
}

const walletSecrets = ['certificate', 'key', 'wwdr_certificate'] as const;

function walletReply(w: WalletSettings | undefined) {
  const data: ShownWalletSettings = {
    pass_type_id: w?.pass_type_id ?? '',
    team_id: w?.team_id ?? '',
    organization_name: w?.organization_name ?? '',
    certificate: w?.certificate ? PASSWORD_PLACEHOLDER : '',
    key: w?.key ? PASSWORD_PLACEHOLDER : '',
    wwdr_certificate: w?.wwdr_certificate ? PASSWORD_PLACEHOLDER : '',
  };
  return { data, enabled: walletEnabled(w) };
}

const pushSecrets = ['fcm_service_account', 'apns_key', 'api_key'] as const;
const PUSH_DEFAULTS: PushSettings = {
  provider: 'none',
  endpoint_url: '',
  fcm_project_id: '',
  fcm_service_account: '',
  apns_team_id: '',
  apns_key_id: '',
  apns_topic: '',
  apns_key: '',
  apns_production: true,
  api_key: '',
};

function pushReply(p: Partial<PushSettings> | undefined) {
  const data = { ...PUSH_DEFAULTS, ...(p ?? {}) };
  for (const k of pushSecrets) data[k] = data[k] ? PASSWORD_PLACEHOLDER : '';
  return { data, ready: data.provider !== 'none' && !pushProblems({ ...PUSH_DEFAULTS, ...p }).length };
}

/** A private key that Node reads, of this type (an APNs `.p8` is EC; a service account's is RSA). */
function keyOfType(pem: string, type: 'ec' | 'rsa'): boolean {
  try {
    return crypto.createPrivateKey(pem).asymmetricKeyType === type;
  } catch {
    return false;
  }
}

/** What the provider lacks or cannot use, as field errors (empty: it can send). */
function pushProblems(p: PushSettings): { field: string; rule: string }[] {
  const out: { field: string; rule: string }[] = [];
  const need = (field: keyof PushSettings) => !p[field] && out.push({ field, rule: 'required' });
  if (p.provider === 'fcm') {
    need('fcm_project_id');
    need('fcm_service_account');
    if (p.fcm_service_account) {
      let account: { type?: unknown; client_email?: unknown; private_key?: unknown } = {};
      try {
        account = JSON.parse(p.fcm_service_account) as typeof account;
      } catch {
        // not JSON: refused below
      }
      const ok =
        account.type === 'service_account' &&
        typeof account.client_email === 'string' &&
        typeof account.private_key === 'string' &&
        keyOfType(account.private_key, 'rsa');
      if (!ok) out.push({ field: 'fcm_service_account', rule: 'invalid_value' });
    }
  } else if (p.provider === 'apns') {
    need('apns_team_id');
    need('apns_key_id');
    need('apns_topic');
    need('apns_key');
    if (p.apns_key && !keyOfType(p.apns_key, 'ec')) out.push({ field: 'apns_key', rule: 'invalid_value' });
  } else if (p.provider === 'gateway') {
    need('endpoint_url');
  }
  return out;
}

const auditStore = journals.find((j) => j.noun === 'audit_event')!;

function retention(ctx: HandlerContext, p: ProjectRow) {
  const def = retentionDays(auditStore, ctx.app.config.retentionDays);
  return { data: { audit_event: p.settings.retention_days?.audit_event ?? def, audit_event_default: def } };
}

const changed = (ctx: HandlerContext, action: AuditAction, data: Record<string, unknown>) =>
  audit(ctx.app.db, {
    projectId: signedIn(ctx).projectId,
    userId: signedIn(ctx).userId,
    action,
    ip: ctx.caller.ip,
    data,
  });

export const settingsHandlers = {
  'settings.general_get': async (ctx) => {
    const p = await project(ctx);
    return { data: { uid: p.uid, name: p.name, description: p.description } };
  },

  'settings.general_update': async (ctx, args) => {
    const before = await project(ctx);
    if (args.name !== undefined || args.description !== undefined)
      await ctx.app.db
        .updateTable('projects')
        .set({
          ...(args.name !== undefined ? { name: args.name } : {}),
          ...(args.description !== undefined ? { description: args.description } : {}),
        })
        .where('id', '=', signedIn(ctx).projectId)
        .execute();
    await changed(ctx, 'project_settings_changed', {
      before: { name: before.name, description: before.description },
      after: args,
    });
    const p = await project(ctx);
    return { data: { uid: p.uid, name: p.name, description: p.description } };
  },

  'settings.mail_get': async (ctx) => mailReply(ctx, (await project(ctx)).settings.mail_settings),

  'settings.mail_update': async (ctx, args) => {
    const stored = (await project(ctx)).settings.mail_settings;
    const next = merged(stored, args);
    // an empty host: the project has no mail server of its own (the installation's, or none)
    await setSetting(ctx, 'mail_settings', next.host ? next : null);
    await changed(ctx, 'mail_settings_changed', {
      host: next.host,
      port: next.port,
      user: next.user,
      password_changed: next.password !== stored?.password,
    });
    return mailReply(ctx, next.host ? next : undefined);
  },

  'settings.mail_test': async (ctx, args) => {
    const stored = (await project(ctx)).settings.mail_settings;
    let settings: MailSettings | null = args.mail_settings
      ? merged(stored, args.mail_settings)
      : (stored ?? null);
    if (!settings?.host) settings = ctx.app.config.smtpUrl ? parseSmtpUrl(ctx.app.config.smtpUrl) : null;
    if (!settings?.host) throw new AppError('cant_perform_action', { reason: 'mail_server_not_set' });
    const mail = await composeMail(ctx.app, {
      projectId: signedIn(ctx).projectId,
      type: 'test_email',
      locale: ctx.caller.locale,
      params: { host: settings.host, port: settings.port },
    });
    try {
      await transportFor(settings).sendMail({
        from: settings.from || ctx.app.config.mailFrom,
        to: args.email,
        subject: mail.subject,
        text: mail.text,
      });
    } catch (err) {
      throw new AppError('cant_perform_action', {
        reason: 'mail_server',
        error: String((err as Error)?.message ?? err).slice(0, 300),
      });
    }
    await changed(ctx, 'test_email_sent', { to: args.email, host: settings.host });
    return { ok: true as const };
  },

  'settings.wallet_get': async (ctx) =>
    walletReply((await project(ctx)).settings.wallet_settings as WalletSettings | undefined),

  'settings.wallet_update': async (ctx, args) => {
    const stored = ((await project(ctx)).settings.wallet_settings ?? {}) as WalletSettings;
    const next: WalletSettings = { ...stored };
    for (const k of ['pass_type_id', 'team_id', 'organization_name'] as const)
      if (args[k] !== undefined) next[k] = args[k];
    // a secret: the placeholder keeps the stored one, an empty string removes it
    for (const k of walletSecrets) {
      const given = args[k];
      if (given === undefined || given === PASSWORD_PLACEHOLDER) continue;
      if (given.trim()) next[k] = given.trim();
      else delete next[k];
    }
    const problem = walletSettingsProblem(next);
    if (problem) throw new AppError('check_fields_data', { fields: [problem] });
    await setSetting(ctx, 'wallet_settings', next);
    await changed(ctx, 'wallet_settings_changed', {
      pass_type_id: next.pass_type_id ?? '',
      team_id: next.team_id ?? '',
      organization_name: next.organization_name ?? '',
      ...Object.fromEntries(walletSecrets.map((k) => [`${k}_changed`, next[k] !== stored[k]])),
    });
    return walletReply(next);
  },

  'settings.push_get': async (ctx) =>
    pushReply((await project(ctx)).settings.push_settings as Partial<PushSettings> | undefined),

  'settings.push_update': async (ctx, args) => {
    const stored = { ...PUSH_DEFAULTS, ...(((await project(ctx)).settings.push_settings ?? {}) as object) };
    const next: PushSettings = { ...stored };
    for (const [k, v] of Object.entries(args) as [keyof PushSettings, unknown][]) {
      if (v === undefined) continue;
      // a secret: the placeholder keeps the stored one, an empty string removes it
      if ((pushSecrets as readonly string[]).includes(k)) {
        if (v === PASSWORD_PLACEHOLDER) continue;
        (next as Record<string, unknown>)[k] = String(v).trim();
      } else (next as Record<string, unknown>)[k] = v;
    }
    const problems = pushProblems(next);
    if (problems.length) throw new AppError('check_fields_data', { fields: problems });
    await setSetting(ctx, 'push_settings', next);
    await changed(ctx, 'push_settings_changed', {
      provider: next.provider,
      endpoint_url: next.endpoint_url,
      fcm_project_id: next.fcm_project_id,
      apns_team_id: next.apns_team_id,
      apns_key_id: next.apns_key_id,
      apns_topic: next.apns_topic,
      apns_production: next.apns_production,
      ...Object.fromEntries(pushSecrets.map((k) => [`${k}_changed`, next[k] !== stored[k]])),
    });
    return pushReply(next);
  },

  'settings.retention_get': async (ctx) => retention(ctx, await project(ctx)),

  'settings.retention_update': async (ctx, args) => {
    const p = await project(ctx);
    const days = { ...(p.settings.retention_days ?? {}) };
    if (args.audit_event === null) delete days.audit_event;
    else days.audit_event = args.audit_event;
    await setSetting(ctx, 'retention_days', days);
    await changed(ctx, 'retention_changed', { audit_event: args.audit_event });
    return retention(ctx, await project(ctx));
  },
} satisfies SomeHandlers;
