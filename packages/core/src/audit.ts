/**
 * The actions the audit log records (issue 25 item 6): the server's `audit()` takes only these, so a new
 * action is declared here, and the locale test asks for its words (`web:audit.actions.<action>`, en and
 * ru) as for any other key. The console and the home's activity show the words, never the code.
 */
export const AuditActions = [
  'account_confirmed',
  'avatar_deleted',
  'avatar_uploaded',
  'backup_applied',
  'backup_deleted',
  'backup_made',
  'backup_schedule_changed',
  'broker_certificate_changed',
  'broker_restarted',
  'broker_sync',
  'create',
  'credentials_reset',
  'credentials_viewed',
  'delete',
  'edit',
  'generate',
  'guest_door_opened',
  'import',
  'invitation_accepted',
  'ip_banned',
  'ip_blocking_changed',
  'ip_unbanned',
  'ip_whitelist_deleted',
  'ip_whitelisted',
  'login',
  'login_failed',
  'log_cleared',
  'logout',
  'mail_settings_changed',
  'marker_applied',
  'marker_removed',
  'password_changed',
  'password_recovery_requested',
  'password_reset',
  'password_set',
  'permission_denied',
  'photo_uploaded',
  'project_settings_changed',
  'rate_limited',
  'register',
  'registration_link_sent',
  'remote_lock_opened',
  'remote_reboot',
  'remote_session_opened',
  'retention_changed',
  'seed_demo',
  'seed_scale',
  'self_registered',
  'test_email_sent',
  'update',
  'view',
  'wallet_settings_changed',
  'whitelabel_logo_deleted',
  'worker_restart',
  'worker_start',
  'worker_stop',
] as const;
export type AuditAction = (typeof AuditActions)[number];

/**
 * What an audit event may name besides the families' rows (a family's noun is an entity by itself): each
 * has its words `web:audit.entities.<entity>`, checked by the locale test with the families' nouns.
 */
export const AuditEntities = [
  'account',
  'profile',
  'backup',
  'domains',
  'users',
  'roles',
  'domain_types',
  'mail_template',
] as const;
