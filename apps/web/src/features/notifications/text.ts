import type { TFunction } from 'i18next';
import type { NotificationRecord } from '@lintel/core';

/** The line a notification reads as, in the console's language (its type's text filled from its data). */
export function notificationText(t: TFunction, n: NotificationRecord): string {
  const d = n.data;
  return t(`notifications.types.${n.type}`, {
    name: d.name ?? d.device?.name ?? d.group?.name ?? '',
    author: d.author ?? d.from ?? d.user?.name ?? '',
    status: d.status ?? '',
    identifier_number: d.identifier_number ?? '',
  });
}

/**
 * Where a notification leads when followed from the bell or its popup (its `popup_action`, spec part 1
 * §2.3): an alarm to the Alarm tab; announcements and conversations, which have no screens yet, to the
 * Important tab; the rest to all notifications.
 */
export function notificationTarget(n: NotificationRecord): string {
  switch (n.popup_action) {
    case 'notifications_alarm':
      return '/notifications?type=alarm';
    case 'announce':
    case 'conversation':
      return '/notifications?type=important';
    default:
      return '/notifications';
  }
}
