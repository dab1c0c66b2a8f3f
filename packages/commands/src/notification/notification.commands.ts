import { z } from 'zod';
import { NotificationRecord, NotificationSettings, NotificationTabs, Notifications } from '@lintel/core';
import { defineCommand, NoArgs } from '../command';
import { IdParam } from '../resource';

/**
 * The signed-in user's notifications (spec part 2 §7 "Notifications"): each user reads and marks only their
 * own, so no permission gates them; a notification of someone else is not found.
 */

/**
 * The unread ones, newest first (at most `limit`), and how many are unread in all: the bell. Beside them the
 * unread important ones (at most `limit` too) and their count: the console's popups (spec part 1 §2.3), which
 * must not lose an important one behind newer ordinary ones.
 */
export const notificationUnread = defineCommand({
  id: 'notification.unread',
  http: { method: 'GET', path: '/notifications/unread' },
  args: z.object({ limit: z.coerce.number().int().min(1).max(100).default(Notifications.pageSize) }),
  result: z.object({
    data: z.array(NotificationRecord),
    important: z.array(NotificationRecord),
    meta: z.object({ total: z.number().int(), important: z.number().int() }),
  }),
});

/** One tab of /notifications: newest first, `offset` (default 0) and `limit` (default 20). */
export const notificationList = defineCommand({
  id: 'notification.list',
  http: { method: 'GET', path: '/notifications' },
  args: z.object({
    type: z.enum(NotificationTabs).default('all'),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    limit: z.coerce.number().int().min(1).max(100).default(Notifications.pageSize),
  }),
  result: z.object({
    data: z.array(NotificationRecord),
    meta: z.object({
      total: z.number().int(),
      unread: z.number().int(),
      offset: z.number().int(),
      limit: z.number().int(),
    }),
  }),
});

/** Marks one notification read (already read: unchanged). */
export const notificationRead = defineCommand({
  id: 'notification.read',
  http: { method: 'PATCH', path: '/notifications/:id/read' },
  args: IdParam,
  result: NotificationRecord,
});

/** Marks every unread notification of the user read; says how many it marked. */
export const notificationReadAll = defineCommand({
  id: 'notification.read_all',
  http: { method: 'PATCH', path: '/notifications/read' },
  args: NoArgs,
  result: z.object({ count: z.number().int() }),
});

export const notificationSettingsGet = defineCommand({
  id: 'notification.settings_get',
  http: { method: 'GET', path: '/notifications/settings' },
  args: NoArgs,
  result: NotificationSettings,
});

export const notificationSettingsUpdate = defineCommand({
  id: 'notification.settings_update',
  http: { method: 'PUT', path: '/notifications/settings' },
  args: NotificationSettings,
  result: NotificationSettings,
});
