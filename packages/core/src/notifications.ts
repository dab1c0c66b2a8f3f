import { z } from 'zod';

/**
 * The notification types of spec part 1 §3 / part 2 §7, each with what the console shows and does for it:
 * its category (the tab it falls under besides All), significance (important ones pop up), icon, colour,
 * the popup's action (where a click leads: part 1 §2.3) and sound (none, or the SOS alarm tone).
 * One table, so the server stores and the console shows the same thing for a type.
 */
export const NotificationTypeTraits = {
  alarm_enabled: {
    category: 'alarm',
    significance: 'important',
    icon: 'alarm',
    color: '#dc2626',
    popup_action: 'notifications_alarm',
    sound: 'alarm',
  },
  alarm_disabled: {
    category: 'alarm',
    significance: 'other',
    icon: 'alarm',
    color: '#64748b',
    popup_action: 'notifications_alarm',
    sound: null,
  },
  alarm_processed: {
    category: 'alarm',
    significance: 'other',
    icon: 'alarm',
    color: '#16a34a',
    popup_action: 'notifications_alarm',
    sound: null,
  },
  announce_received: {
    category: 'normal',
    significance: 'important',
    icon: 'bell',
    color: '#2563eb',
    popup_action: 'announce',
    sound: null,
  },
  announce_status_changed: {
    category: 'normal',
    significance: 'other',
    icon: 'bell',
    color: '#2563eb',
    popup_action: 'announce',
    sound: null,
  },
  conversation_received: {
    category: 'normal',
    significance: 'important',
    icon: 'chat',
    color: '#7c3aed',
    popup_action: 'conversation',
    sound: null,
  },
  conversation_message_received: {
    category: 'normal',
    significance: 'other',
    icon: 'chat',
    color: '#7c3aed',
    popup_action: 'conversation',
    sound: null,
  },
  sip_reboot_started: {
    category: 'normal',
    significance: 'other',
    icon: 'phone',
    color: '#d97706',
    popup_action: 'notifications_all',
    sound: null,
  },
  sip_reboot_completed: {
    category: 'normal',
    significance: 'other',
    icon: 'phone',
    color: '#16a34a',
    popup_action: 'notifications_all',
    sound: null,
  },
  /** a restart or re-initialisation of the SIP service that failed (spec part 1 §4 "SIP reboot: … error") */
  sip_reboot_error: {
    category: 'normal',
    significance: 'important',
    icon: 'phone',
    color: '#dc2626',
    popup_action: 'notifications_all',
    sound: null,
  },
  device_broker_settings_sent: {
    category: 'normal',
    significance: 'other',
    icon: 'device',
    color: '#0891b2',
    popup_action: 'notifications_all',
    sound: null,
  },
  device_offline: {
    category: 'normal',
    significance: 'important',
    icon: 'device',
    color: '#d97706',
    popup_action: 'notifications_all',
    sound: null,
  },
  device_task_failed: {
    category: 'normal',
    significance: 'important',
    icon: 'device',
    color: '#dc2626',
    popup_action: 'notifications_all',
    sound: null,
  },
  identifier_used: {
    category: 'acs',
    significance: 'other',
    icon: 'key',
    color: '#0d9488',
    popup_action: 'notifications_all',
    sound: null,
  },
  revoked_identifier_used: {
    category: 'acs',
    significance: 'important',
    icon: 'key',
    color: '#dc2626',
    popup_action: 'notifications_all',
    sound: null,
  },
} as const satisfies Record<
  string,
  {
    category: 'normal' | 'acs' | 'alarm';
    significance: 'important' | 'other';
    icon: string;
    color: string;
    popup_action: 'announce' | 'conversation' | 'notifications_all' | 'notifications_alarm';
    sound: 'alarm' | null;
  }
>;
export type NotificationType = keyof typeof NotificationTypeTraits;
export const NotificationTypes = Object.keys(NotificationTypeTraits) as [
  NotificationType,
  ...NotificationType[],
];

/** The tabs of /notifications (part 1 §2.3), which are also the `type` a list asks for. */
export const NotificationTabs = ['all', 'normal', 'important', 'acs', 'alarm'] as const;
export type NotificationTab = (typeof NotificationTabs)[number];

/** What a notification is about (part 1 §3): every key optional, as each type fills its own. */
export const NotificationData = z
  .object({
    author: z.string().optional(),
    from: z.string().optional(),
    name: z.string().optional(),
    status: z.string().optional(),
    has_error: z.boolean().optional(),
    user: z.object({ id: z.number().int(), name: z.string() }).optional(),
    identifier_type: z.string().optional(),
    identifier_number: z.string().optional(),
    device: z.object({ id: z.number().int(), name: z.string(), serial_number: z.string() }).optional(),
    group: z.object({ id: z.number().int(), name: z.string() }).optional(),
    sensors: z.array(z.object({ sensor: z.string(), id: z.number().int() })).optional(),
  })
  .loose();
export type NotificationData = z.infer<typeof NotificationData>;

/** The Notification entity of spec part 1 §3. */
export const NotificationRecord = z.object({
  id: z.number().int(),
  type: z.enum(NotificationTypes),
  data: NotificationData,
  created_at: z.string(),
  updated_at: z.string(),
  read_at: z.string().nullable(),
  significance: z.enum(['important', 'other']),
  icon: z.string(),
  color: z.string(),
  popup_action: z.enum(['announce', 'conversation', 'notifications_all', 'notifications_alarm']),
  sound: z.string().nullable(),
});
export type NotificationRecord = z.infer<typeof NotificationRecord>;

/** The user's notification settings (part 2 §7): `acs` — told of identifiers used at access points. */
export const NotificationSettings = z.object({ acs: z.boolean() });
export type NotificationSettings = z.infer<typeof NotificationSettings>;
export const DefaultNotificationSettings: NotificationSettings = { acs: false };

/** The private-users event that carries a new notification (its record) to the user's consoles. */
export const NotificationEventType = 'NotificationCreatedEvent';
