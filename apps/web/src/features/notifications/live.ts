import { useEffect, useSyncExternalStore } from 'react';
import { useAtomValue } from 'jotai';
import {
  NotificationEventType,
  NotificationRecord,
  RealtimeTopics,
  WsReply,
  type WsServerMessage,
} from '@lintel/core';
import { runCommand } from '../../api/client';
import { realtime } from '../../session/realtime';
import { profileAtom } from '../../session/session';
import { UnreadFeed, type UnreadState } from './feed';

/** The console's one unread feed (the bell, the page's counts). */
export const unreadFeed = new UnreadFeed({
  load: () => runCommand('notification.unread', {}),
  markRead: (id) => runCommand('notification.read', { id }),
});

/** Listeners of pages that show notifications (the /notifications list reads its page again). */
const arrivals = new Set<() => void>();
export function onNotificationArrived(fn: () => void): () => void {
  arrivals.add(fn);
  return () => arrivals.delete(fn);
}

/**
 * While signed in: the unread list is read, again once the user's own topic `private-users.{id}` is
 * subscribed, and 1 s after a notification arrives on it (or after a `resync`, when the server kept less than
 * was missed).
 */
export function useLiveNotifications(): void {
  const userId = useAtomValue(profileAtom)?.id;
  useEffect(() => {
    if (userId === undefined) return;
    void unreadFeed.reload().catch((err: unknown) => console.warn('lintel: unread notifications', err));
    const off = realtime.subscribe(RealtimeTopics.user(userId), (m: WsServerMessage) => {
      if (m.data.type === NotificationEventType) {
        const parsed = NotificationRecord.safeParse((m.data as { notification?: unknown }).notification);
        unreadFeed.arrived(parsed.success ? parsed.data : undefined);
        for (const fn of arrivals) fn();
      } else if (m.data.type === WsReply.resync) unreadFeed.arrived();
      // the topic is live from here: read the list again, or a notification made between the first read and
      // the subscription (a page just opened) would stay out of the count until the next one (seen on CI:
      // a device's "offline" missed by the bell of a page opened a moment before)
      else if (m.data.type === WsReply.subscribed)
        void unreadFeed.reload().catch((err: unknown) => console.warn('lintel: unread notifications', err));
    });
    return off;
  }, [userId]);
}

export function useUnread(): UnreadState {
  return useSyncExternalStore(
    (fn) => unreadFeed.subscribe(fn),
    () => unreadFeed.current,
  );
}
