import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { OkReply } from '../resource';

/**
 * Project settings (spec part 2 §7 "Project settings: general GET and PATCH; test e-mail POST
 * {email,mail_settings}"; part 1 §2.1 /general-settings; issue 24 item 2): the project's general settings,
 * its mail server (what every mail of the project is sent through; none: the installation's
 * LINTEL_SMTP_URL) with a test e-mail, and how long its journals keep their rows.
 */
const VIEW = { anyPermission: ['project_settings.view', 'project_settings.change'] } as const;
const CHANGE = { anyPermission: ['project_settings.change'] } as const;

/** The placeholder a stored password is shown as, and sent back as when it is left unchanged (spec part 2 §5). */
export const PASSWORD_PLACEHOLDER = '********';

export const GeneralSettings = z.object({
  uid: z.string(),
  name: z.string(),
  description: z.string(),
});
export type GeneralSettings = z.infer<typeof GeneralSettings>;

export const settingsGeneralGet = defineCommand({
  id: 'settings.general_get',
  http: { method: 'GET', path: '/settings/general' },
  args: NoArgs,
  result: z.object({ data: GeneralSettings }),
  gates: VIEW,
});

export const settingsGeneralUpdate = defineCommand({
  id: 'settings.general_update',
  http: { method: 'PATCH', path: '/settings/general' },
  args: z.object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().trim().max(2000).optional(),
  }),
  result: z.object({ data: GeneralSettings }),
  gates: CHANGE,
});

/** The mail server as it is sent and shown: the password never leaves the server (its placeholder does). */
export const MailServerSettings = z.object({
  /** none: the project's mail goes through the installation's LINTEL_SMTP_URL, or stays in the outbox */
  host: z.string().trim().max(255),
  port: z.coerce.number().int().min(1).max(65535),
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it */
  secure: z.boolean(),
  user: z.string().max(255),
  /** the placeholder when one is stored; empty when none */
  password: z.string().max(255).meta({ secret: true }),
  /** the sender, `Name <address>` or an address; empty: the installation's LINTEL_MAIL_FROM */
  from: z.string().trim().max(320),
});
export type MailServerSettings = z.infer<typeof MailServerSettings>;

const MailReply = z.object({
  data: MailServerSettings,
  /** what the project's mail goes through now: its own server, the installation's, or none (kept) */
  source: z.enum(['project', 'installation', 'none']),
});

export const settingsMailGet = defineCommand({
  id: 'settings.mail_get',
  http: { method: 'GET', path: '/settings/mail' },
  args: NoArgs,
  result: MailReply,
  gates: VIEW,
});

/** Saves the mail server; the placeholder as password keeps the stored one, an empty host removes it. */
export const settingsMailUpdate = defineCommand({
  id: 'settings.mail_update',
  http: { method: 'PATCH', path: '/settings/mail' },
  args: MailServerSettings.partial(),
  result: MailReply,
  gates: CHANGE,
});

/**
 * Sends a test e-mail to `email` now, through `mail_settings` as given (the form before it is saved; the
 * placeholder password is the stored one), else through the project's saved server; it answers once the mail
 * server took it; a refusal is `cant_perform_action` with `{reason: 'mail_server', error}` (the server's words).
 */
export const settingsMailTest = defineCommand({
  id: 'settings.mail_test',
  http: { method: 'POST', path: '/settings/test-email' },
  args: z.object({
    email: z.email().max(320),
    mail_settings: MailServerSettings.partial().optional(),
  }),
  result: OkReply,
  gates: CHANGE,
  timeoutMs: 60_000,
});

/** How long the project's journals keep their rows, in days (the audit log's default: 365). */
export const RetentionSettings = z.object({
  audit_event: z.number().int(),
  /** the installation's default (LINTEL_AUDIT_RETENTION_DAYS), which the project's value replaces */
  audit_event_default: z.number().int(),
});

export const settingsRetentionGet = defineCommand({
  id: 'settings.retention_get',
  http: { method: 'GET', path: '/settings/retention' },
  args: NoArgs,
  result: z.object({ data: RetentionSettings }),
  gates: VIEW,
});

export const settingsRetentionUpdate = defineCommand({
  id: 'settings.retention_update',
  http: { method: 'PATCH', path: '/settings/retention' },
  /** null: back to the installation's default */
  args: z.object({ audit_event: z.coerce.number().int().min(1).max(3650).nullable() }),
  result: z.object({ data: RetentionSettings }),
  gates: CHANGE,
});

/**
 * The Apple Wallet pass settings (spec part 2 §7 "wallet settings GET and PATCH"; part 1 §3 "wallet pass
 * file"): the pass type and team Apple issued, the organisation the pass names, and the pass type
 * certificate with its private key (PEM) and Apple's WWDR intermediate, which sign every `.pkpass`. The
 * certificate, key and intermediate are secrets: never returned, shown as the placeholder when stored, the
 * placeholder sent back keeps them, an empty string removes them. docs/decisions.md "QR images and wallet passes".
 */
export const WalletSettings = z.object({
  /** the pass type identifier, `pass.com.example.lintel` */
  pass_type_id: z.string().trim().max(255),
  /** the team identifier of the Apple developer account */
  team_id: z.string().trim().max(64),
  /** the organisation the pass names (empty: the project's name) */
  organization_name: z.string().trim().max(255),
  /** the pass type certificate (PEM); the placeholder when one is stored */
  certificate: z.string().max(20_000).meta({ secret: true }),
  /** its private key (PEM, unencrypted); the placeholder when one is stored */
  key: z.string().max(20_000).meta({ secret: true }),
  /** Apple's WWDR intermediate certificate (PEM), carried in the signature; the placeholder when stored */
  wwdr_certificate: z.string().max(20_000).meta({ secret: true }),
});
export type WalletSettings = z.infer<typeof WalletSettings>;

const WalletReply = z.object({
  data: WalletSettings,
  /** a pass can be signed: pass type, team, certificate and key are all set (the QR preview's `pkPassEnabled`) */
  enabled: z.boolean(),
});

export const settingsWalletGet = defineCommand({
  id: 'settings.wallet_get',
  http: { method: 'GET', path: '/settings/wallet' },
  args: NoArgs,
  result: WalletReply,
  gates: VIEW,
});

/** Saves the wallet settings; a certificate or key that cannot be read, or a key not the certificate's, is refused. */
export const settingsWalletUpdate = defineCommand({
  id: 'settings.wallet_update',
  http: { method: 'PATCH', path: '/settings/wallet' },
  args: WalletSettings.partial().strict(),
  result: WalletReply,
  gates: CHANGE,
});
