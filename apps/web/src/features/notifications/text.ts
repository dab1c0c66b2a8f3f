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
