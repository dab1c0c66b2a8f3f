/**
 * Every permission code of spec part 2 §6, named once, grouped by category. Titles live in the locales
 * under `permissions.<category>.<code>` (category titles under `permissions.<category>._`).
 */
const SCOPES = ['all', 'descendants', 'domain', 'own'] as const;
type Scope = (typeof SCOPES)[number];
/** `amenities.view_all`, `amenities.view_descendants`, …: the codes keep their literal types. */
const scoped = <const P extends string, const V extends string>(prefix: P, verbs: readonly V[]) =>
  verbs.flatMap((v) => SCOPES.map((s) => `${prefix}.${v}_${s}` as const)) as `${P}.${V}_${Scope}`[];

export const PermissionCategories = {
  project_settings: [
    'project_settings.change',
    'project_settings.view',
    'project_settings.view_management_company',
    'project_settings.import_device_backup',
  ],
  domains: [
    'domains.view_all',
    'domains.create_root',
    'domains.create_descendant',
    'domains.edit_all',
    'domains.edit_descendant',
    'domains.delete_all',
    'domains.delete_self',
    'domains.own_general',
    'domains.own_users',
    'domains.own_forward_settings',
    'domains.own_access_rules',
    'domains.own_devices',
    'domains.own_notifications',
    'domains.own_white_label',
    'domains.own_mail_templates',
    'domains.own_guest_access',
    'domains.own_sip_trunks',
    'domains.own_integrations',
  ],
  users: [
    'users.create',
    'users.delete',
    'users.view',
    'users.view_all',
    'users.edit_all',
    'users.edit_profile',
  ],
  roles: [
    'roles.view',
    'roles.view_all',
    'roles.view_users',
    'roles.create',
    'roles.edit',
    'roles.edit_available',
    'roles.edit_users',
    'roles.edit_all',
    'roles.delete',
    'roles.delete_available',
    'roles.delete_all',
    'roles.grant_more_than_own',
  ],
  devices: [
    'devices.create',
    'devices.edit',
    'devices.delete',
    'devices.view',
    'devices.view_descendant',
    'devices.view_all',
    'devices.view_tasks',
    'devices.view_events',
    'devices.import_backup',
    'devices.tasks',
    'devices.heartbeat',
    'devices.alarms_view',
    'devices.alarms_process',
    'devices.alarms_delete',
  ],
  elevators: [
    'elevators.create',
    'elevators.edit',
    'elevators.delete',
    'elevators.view',
    'elevators.view_all',
    'elevator_access_rules.create',
    'elevator_access_rules.edit',
    'elevator_access_rules.delete',
    'elevator_access_rules.view',
    'elevator_access_rules.view_all',
  ],
  schedules: [
    'time_rules.create',
    'time_rules.edit',
    'time_rules.delete',
    'time_rules.view',
    'time_rules.view_all',
  ],
  access_rules: [
    'access_rules.create',
    'access_rules.edit',
    'access_rules.delete',
    'access_rules.view',
    'access_rules.view_all',
  ],
  forward_rules: [
    'forward_rules.create',
    'forward_rules.edit',
    'forward_rules.delete',
    'forward_rules.view',
    'forward_rules.view_all',
  ],
  system: ['audit.view', 'system_info.view', 'access_control_events.view'],
  conversations: [
    'conversations.view',
    'conversations.view_all',
    'conversations.view_descendant',
    'conversations.send_to_all',
    'conversations.create',
    'conversations.create_message',
    'conversations.delete',
    'conversations.accept_from_descendant',
  ],
  announces: [
    'announces.create',
    'announces.edit',
    'announces.delete',
    'announces.send',
    'announces.view',
    'announces.view_all',
  ],
  identifiers: [
    'identifiers.view_all',
    'identifiers.create',
    'identifiers.edit',
    'identifiers.delete',
    'identifiers.create_guest',
    'identifiers.import',
    'identifiers.export',
    'ukey2.view',
    'ukey2.issue',
    'ukey2.revoke',
  ],
  backups: [
    'backups.create',
    'backups.delete',
    'backups.view',
    'backups.apply',
    'backups.apply_from_file',
    'backups.download',
  ],
  sip_numbers: [
    'sip_numbers.create',
    'sip_numbers.edit',
    'sip_numbers.delete',
    'sip_numbers.activate',
    'sip_numbers.mark_system',
    'sip_numbers.view',
    'sip_numbers.view_all',
    'sip_numbers.view_descendant',
  ],
  emergency_alerts: [
    'emergency_alerts.view',
    'emergency_alerts.create',
    'emergency_alerts.edit',
    'emergency_alerts.delete',
    'emergency_alerts.playback',
  ],
  markers: [
    'markers.view',
    'markers.view_all',
    'markers.create',
    'markers.edit',
    'markers.delete',
    'markers.apply_to_user',
  ],
  licenses: [
    'licenses.view',
    'licenses.manage',
    'licenses.users_view',
    'licenses.users_edit',
    'licenses.view_self',
    'licenses.view_descendant',
    'licenses.view_all',
    'licenses.edit_count_self',
    'licenses.edit_count_descendant',
    'licenses.edit_count_all',
    'reports.licenses_used',
  ],
  amenities: [
    ...scoped('amenities', ['view', 'create', 'edit', 'delete']),
    ...scoped('amenity_reservations', ['view', 'create', 'edit', 'delete']),
    ...scoped('amenity_reservation_logs', ['view']),
  ],
  sip_trunks: [...scoped('sip_trunks', ['view', 'edit'])],
  calls: [
    'calls.call_all',
    'calls.call_own_group',
    'calls.call_descendants',
    'calls.call_panel',
    'calls.concierge_receive',
    'calls.history',
    'calls.can_intercept_call_like_concierge',
  ],
  mail_templates: ['mail_templates.view', 'mail_templates.edit'],
  integrations: ['integrations.view', 'integrations.edit'],
} as const;

export type PermissionCategory = keyof typeof PermissionCategories;
/** A permission code of spec part 2 §6: a misspelled code in a gate does not compile. */
export type PermissionCode = (typeof PermissionCategories)[PermissionCategory][number];
/** @deprecated the same as PermissionCode */
export type Permission = PermissionCode;

export const AllPermissions: readonly PermissionCode[] = Object.values(PermissionCategories).flat();

export const isPermissionCode = (code: string): code is PermissionCode =>
  (AllPermissions as readonly string[]).includes(code);

/**
 * The licence flags that gate features (spec part 2 §6 "Licence flags that gate features"), as paths of
 * the profile's `license_info`: a feature alone (`sip`) means its `is_enabled` switch; a flag inside a
 * feature (`sip.is_web_dialer_enabled`) needs that flag and, where the feature has a switch, the switch.
 * Face id and guest identifiers have no switch of their own.
 */
export const LicenceFlags = [
  'sip',
  'sip.is_sip_trunks_enabled',
  'sip.is_web_dialer_enabled',
  'mobile_app',
  'mobile_app.is_remote_open_enabled',
  'mobile_app.is_siri_enabled',
  'mobile_app.is_apple_watch_enabled',
  'mobile_app.is_family_events_enabled',
  'mobile_app.is_white_label_enabled',
  'mobile_app.is_domain_forward_rule_enabled',
  'elevator',
  'amenity',
  'license_plate',
  'ukey2',
  'identifier.is_guest_enabled',
  'face_id.is_enabled_for_guests',
] as const;
export type LicenceFlag = (typeof LicenceFlags)[number];
/** A licence feature: an area of `license_info` (`sip`, `face_id`, …). */
export type LicenceArea = LicenceFlag extends infer F ? (F extends `${infer A}.${string}` ? A : F) : never;

export const isLicenceFlag = (flag: string): flag is LicenceFlag =>
  (LicenceFlags as readonly string[]).includes(flag);

/** The locale key of a permission's title. */
export const permissionTitleKey = (code: string) => `permissions.codes.${code.replace('.', '__')}`;
export const permissionCategoryTitleKey = (category: string) => `permissions.categories.${category}`;
