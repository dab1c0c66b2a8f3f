import { z } from 'zod';
import {
  Limits,
  Locales,
  LicenseWarningStatuses,
  SelfRegistrationUserTypes,
  TimeFormats,
  type TimeFormatCode,
} from './constants';

const text = (max: number = Limits.text.max) => z.string().trim().min(1).max(max);
export const Password = z.string().min(Limits.password.min).max(Limits.password.max).meta({ secret: true });
export const LoginName = z
  .string()
  .trim()
  .min(Limits.login.min)
  .max(Limits.login.max)
  .regex(/^[A-Za-z0-9._@+-]+$/, { message: 'login_chars' });
export const Email = z.string().trim().toLowerCase().max(Limits.email.max).pipe(z.email());
export const Locale = z.enum(Locales);

// ----- Projects and sessions ------------------------------------------------------------------------------

export const ProjectRef = z.object({
  id: z.number().int(),
  uid: z.string(),
  name: z.string(),
  description: z.string(),
});
export type ProjectRef = z.infer<typeof ProjectRef>;

export const SessionTokens = z.object({ token: z.string(), refresh: z.string() });
export type SessionTokens = z.infer<typeof SessionTokens>;

export const ProjectSession = SessionTokens.extend({ project: ProjectRef });
export type ProjectSession = z.infer<typeof ProjectSession>;

export const LoginBody = z.object({
  login: z.string().trim().min(1).max(Limits.email.max),
  password: z.string().min(1).max(Limits.password.max).meta({ secret: true }),
  /** a project uid: open a session in that project only */
  project: z.string().trim().min(1).max(64).optional(),
});
export type LoginBody = z.infer<typeof LoginBody>;

export const LoginReply = z.object({ sessions: z.array(ProjectSession) });
export type LoginReply = z.infer<typeof LoginReply>;

export const RefreshBody = z.object({ token: z.string().min(1).max(512) });
export const RefreshReply = z.object({ session: SessionTokens });
export type RefreshReply = z.infer<typeof RefreshReply>;

export const OkReply = z.object({ ok: z.literal(true) });

// ----- Profile ----------------------------------------------------------------------------------------------

export const TimeFormat = z.enum(Object.keys(TimeFormats) as [TimeFormatCode, ...TimeFormatCode[]]);
export const IdentifierFormat = z.enum(['dec', 'hex']);

export const ProfileSettings = z.object({
  address: z.string().max(Limits.text.max),
  phone: z.string().max(32),
  time_zone: z.string().max(64),
  time_format: TimeFormat,
  identifier_format: IdentifierFormat,
  sip_number: z.string().nullable(),
  is_app_popup_active: z.boolean(),
  notification_settings: z.record(z.string(), z.unknown()),
});

export const LicenseInfo = z.object({
  sip: z.object({
    is_enabled: z.boolean(),
    license_count: z.number().nullable(),
    is_sip_trunks_enabled: z.boolean(),
    is_web_dialer_enabled: z.boolean(),
  }),
  mobile_app: z.object({
    is_enabled: z.boolean(),
    license_count: z.number().nullable(),
    is_domain_forward_rule_enabled: z.boolean(),
    is_white_label_enabled: z.boolean(),
    is_remote_open_enabled: z.boolean(),
    is_siri_enabled: z.boolean(),
    is_apple_watch_enabled: z.boolean(),
    is_family_events_enabled: z.boolean(),
  }),
  elevator: z.object({ is_enabled: z.boolean() }),
  license_plate: z.object({ is_enabled: z.boolean() }),
  face_id: z.object({ is_enabled_for_guests: z.boolean() }),
  amenity: z.object({ is_enabled: z.boolean() }),
  ukey2: z.object({ is_enabled: z.boolean(), license_count: z.number().nullable() }),
  identifier: z.object({ is_guest_enabled: z.boolean() }),
});
export type LicenseInfo = z.infer<typeof LicenseInfo>;

export const RoleRef = z.object({ id: z.number().int(), name: z.string(), permissions: z.array(z.string()) });
export const DomainRef = z.object({ id: z.number().int(), name: z.string() });

export const Profile = z.object({
  id: z.number().int(),
  login: z.string(),
  email: z.string().nullable(),
  name: z.string(),
  locale: Locale,
  avatar_url: z.string().nullable(),
  is_invited: z.boolean(),
  role: RoleRef,
  domains: z.array(DomainRef),
  project: ProjectRef,
  profile: ProfileSettings,
  license_info: LicenseInfo,
});
export type Profile = z.infer<typeof Profile>;

export const ProfilePatch = z
  .object({
    name: text(),
    locale: Locale,
    profile: ProfileSettings.pick({
      address: true,
      phone: true,
      time_zone: true,
      time_format: true,
      identifier_format: true,
    }).partial(),
  })
  .partial()
  .strict();
export type ProfilePatch = z.infer<typeof ProfilePatch>;

export const PasswordChangeBody = z.object({
  old: z.string().min(1).max(Limits.password.max).meta({ secret: true }),
  new: Password,
});
export const MobilePopupBody = z.object({ is_app_popup_active: z.boolean() });
export const DeleteAccountBody = z.object({
  password: z.string().min(1).max(Limits.password.max).meta({ secret: true }),
});

// ----- Registration and recovery ---------------------------------------------------------------------------

export const RegistrationBody = z.object({ name: text(), login: LoginName, password: Password });
export type RegistrationBody = z.infer<typeof RegistrationBody>;

export const SelfRegistrationUserType = z.enum(SelfRegistrationUserTypes);
export const SelfRegistrationBody = z.object({
  user_name: text(),
  user_email: Email,
  user_type: SelfRegistrationUserType,
  object_name: text(),
  user_password: Password,
});
export type SelfRegistrationBody = z.infer<typeof SelfRegistrationBody>;

export const CodeInfo = z.object({
  code_type: z.literal('self_registration'),
  user_type: SelfRegistrationUserType,
  object_name: z.string(),
  user_name: z.string(),
  user_email: z.string(),
  /** never the stored password: always empty (docs/decisions.md) */
  user_password: z.literal(''),
  /** seconds until a resend is allowed */
  resend_in: z.number().int(),
});
export type CodeInfo = z.infer<typeof CodeInfo>;

export const CodeBody = z.object({ code: z.string().trim().min(1).max(64) });
export const TokenBody = z.object({ token: z.string().trim().min(1).max(256) });
export const InviteInfo = z.object({ name: z.string(), login: z.string(), email: z.string().nullable() });
export type InviteInfo = z.infer<typeof InviteInfo>;
export const InviteAttemptBody = z.object({ token: z.string().trim().min(1).max(256), password: Password });
export const RecoveryBody = z.object({ email: Email });
export const ResetBody = z.object({ code: z.string().trim().min(1).max(256), password: Password });

// ----- Start-up data ---------------------------------------------------------------------------------------

export const ServerInfo = z.object({
  name: z.string(),
  version: z.string(),
  api: z.string(),
  time: z.string(),
  registration_open: z.boolean(),
  self_registration_open: z.boolean(),
});
export type ServerInfo = z.infer<typeof ServerInfo>;

export const LicenseWarning = z.object({
  status: z.enum(LicenseWarningStatuses),
  days: z.number().int().nullable(),
  /** the licence in force is the installation's own evaluation licence (issue 15 item 6) */
  evaluation: z.boolean().optional(),
});

export const ServerSettings = z.object({
  license_warning: LicenseWarning,
  registration_open: z.boolean(),
  self_registration_open: z.boolean(),
  sip_enabled: z.boolean(),
  resend_code_after_s: z.number().int(),
});
export type ServerSettings = z.infer<typeof ServerSettings>;

export const PermissionGroup = z.object({
  category: z.string(),
  items: z.array(z.object({ code: z.string() })),
});

export const ResourcesMeta = z.object({
  meta: z.object({ locales: z.array(Locale), time_formats: z.array(z.string()), version: z.string() }),
  permissions: z.array(PermissionGroup),
  notification_settings: z.record(z.string(), z.unknown()),
});
export type ResourcesMeta = z.infer<typeof ResourcesMeta>;
