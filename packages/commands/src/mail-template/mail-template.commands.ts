import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { IdParam, OkReply } from '../resource';

/**
 * Mail templates (spec part 1 §3 "Mail template: mail_type_id, subject, body, domain_id (optional)"; part 2
 * §5 "Value must contain the required placeholders", §7 "Mail templates: types, domain types, preview, send
 * preview", §6 their permission rule, §8 "template of this type already exists"; issue 24 item 5). One per
 * type per group (or for the whole project without a group); the server writes every mail of that type for
 * the group's people (the nearest group up their chain, else the project's, else its built-in text) with it.
 * Placeholders are `{{name}}`; each type names those its template must hold.
 */
export const MailTypes = [
  'self_registration',
  'invitation',
  'confirm',
  'recovery',
  'licence_will_expire',
  'licence_already_expired',
  'group_licence_will_expire',
  'test_email',
  'guest_pass',
] as const;
export const MailType = z.enum(MailTypes);
export type MailType = z.infer<typeof MailType>;

/** The placeholders each type offers, and those its template must hold (what the mail is for). */
export const MailTypePlaceholders: Record<MailType, { offered: string[]; required: string[] }> = {
  self_registration: { offered: ['name', 'code', 'link', 'hours'], required: ['code'] },
  invitation: { offered: ['name', 'login', 'project', 'link', 'hours'], required: ['link'] },
  confirm: { offered: ['name', 'link', 'hours'], required: ['link'] },
  recovery: { offered: ['name', 'login', 'link', 'hours'], required: ['link'] },
  licence_will_expire: { offered: ['name', 'days', 'link'], required: ['days'] },
  licence_already_expired: { offered: ['name', 'link'], required: [] },
  group_licence_will_expire: { offered: ['name', 'group', 'days', 'to', 'link'], required: ['group'] },
  test_email: { offered: ['host', 'port'], required: [] },
  guest_pass: { offered: ['name', 'link', 'from', 'to', 'passes', 'qr', 'sender'], required: ['link'] },
};

/** The placeholders a text holds: `{{ name }}` → `name`. */
export const placeholdersOf = (text: string): string[] =>
  [...text.matchAll(/\{\{\s*([a-z_]+)\s*\}\}/g)].map((m) => m[1]!);

export const MailTemplate = z.object({
  id: z.number().int(),
  mail_type_id: MailType,
  /** the group whose people get it (and the groups below, unless they have their own); null: the project */
  domain_id: z.number().int().nullable(),
  domain: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  subject: z.string(),
  body: z.string(),
  updated_at: z.string(),
});
export type MailTemplate = z.infer<typeof MailTemplate>;

const Subject = z.string().trim().min(1).max(300);
const Body = z.string().min(1).max(20_000).meta({ multiline: true });

/** Every placeholder the type requires is in the subject or the body (spec: "required placeholders"). */
const withPlaceholders = <T extends z.ZodType<{ mail_type_id?: MailType; subject?: string; body?: string }>>(
  s: T,
) =>
  s.superRefine((v, ctx) => {
    if (!v.mail_type_id || v.subject === undefined || v.body === undefined) return;
    const held = new Set(placeholdersOf(`${v.subject} ${v.body}`));
    const missing = MailTypePlaceholders[v.mail_type_id].required.filter((p) => !held.has(p));
    if (missing.length)
      ctx.addIssue({ code: 'custom', path: ['body'], message: 'required_placeholders', params: { missing } });
  });

const CHANGE_HINT = {
  anyPermission: [
    'project_settings.change',
    'domains.edit_all',
    'domains.edit_descendant',
    'domains.own_mail_templates',
  ],
} as const;

export const mailTemplateTypes = defineCommand({
  id: 'mail_template.types',
  http: { method: 'GET', path: '/mail-templates/types' },
  args: NoArgs,
  result: z.object({
    data: z.array(z.object({ id: MailType, offered: z.array(z.string()), required: z.array(z.string()) })),
  }),
  gates: CHANGE_HINT,
});

export const mailTemplateList = defineCommand({
  id: 'mail_template.list',
  http: { method: 'GET', path: '/mail-templates' },
  args: z.object({ domain_id: z.coerce.number().int().optional() }),
  result: z.object({ data: z.array(MailTemplate) }),
  gates: CHANGE_HINT,
});

/**
 * Creates a group's (or the project's) template of a type. Without a group it needs `project_settings.change`;
 * with one, the right to edit that group (`domains.edit_all`, `domains.edit_descendant` below the caller's
 * groups, or `domains.own_mail_templates` for the caller's own groups).
 */
export const mailTemplateCreate = defineCommand({
  id: 'mail_template.create',
  http: { method: 'PUT', path: '/mail-templates' },
  args: withPlaceholders(
    z.object({
      mail_type_id: MailType,
      domain_id: z.number().int().nullable().default(null),
      subject: Subject,
      body: Body,
    }),
  ),
  result: z.object({ data: MailTemplate }),
  gates: CHANGE_HINT,
});

export const mailTemplateUpdate = defineCommand({
  id: 'mail_template.update',
  http: { method: 'PATCH', path: '/mail-templates/:id' },
  args: IdParam.extend({ subject: Subject.optional(), body: Body.optional() }),
  result: z.object({ data: MailTemplate }),
  gates: CHANGE_HINT,
});

export const mailTemplateDelete = defineCommand({
  id: 'mail_template.delete',
  http: { method: 'DELETE', path: '/mail-templates/:id' },
  args: IdParam,
  result: OkReply,
  gates: CHANGE_HINT,
});

const Draft = z.object({ mail_type_id: MailType, subject: Subject, body: Body });

/** The mail a draft makes, with example values in its placeholders (what "preview" shows). */
export const mailTemplatePreview = defineCommand({
  id: 'mail_template.preview',
  http: { method: 'POST', path: '/mail-templates/preview' },
  args: withPlaceholders(Draft),
  result: z.object({ subject: z.string(), text: z.string() }),
  gates: CHANGE_HINT,
});

/** Sends that preview to an address (through the project's mail server, as every mail). */
export const mailTemplateSendPreview = defineCommand({
  id: 'mail_template.send_preview',
  http: { method: 'POST', path: '/mail-templates/send-preview' },
  args: withPlaceholders(Draft.extend({ email: z.email().max(320) })),
  result: OkReply,
  gates: CHANGE_HINT,
});
