import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { Notifications, type NotificationRecord } from '@lintel/core';
import { focusRing } from '../../ui/button';
import { Icon, type IconName } from '../../ui/icon';
import { unreadFeed, useUnread } from './live';
import { notificationTarget, notificationText } from './text';
import { formatDate } from '../../resources/format';
import { useMenuButton } from '../../layout/menu-button';

const knownIcons = new Set<string>(['alarm', 'bell', 'chat', 'phone', 'device', 'key']);
export const iconOf = (icon: string): IconName => (knownIcons.has(icon) ? (icon as IconName) : 'bell');

/**
 * The bell of the top bar (spec part 1 §2.3): the unread count, and a menu of the latest 5 unread with a
 * link to all of them above 5; what it shows is marked read 1 s after it opens.
 */
export function NotificationBell() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const unread = useUnread();
  // the feed stops the marking of what the bell showed when it closes before its second is up
  const { open, setOpen, close, rootRef, menuRef, menuId, onMenuKey, buttonProps } = useMenuButton({
    onClosed: () => unreadFeed.closed(),
  });
  // what the bell shows while open: the latest 5 unread when it opened (they stay in view as they are read)
  const [shown, setShown] = useState<{ data: NotificationRecord[]; total: number }>({ data: [], total: 0 });
  const latest = open ? shown.data : unread.data.slice(0, Notifications.menuLatest);
  const total = open ? shown.total : unread.total;

  function toggle() {
    if (open) return close(false);
    const now = unreadFeed.current.data.slice(0, Notifications.menuLatest);
    setShown({ data: now, total: unreadFeed.current.total });
    setOpen(true);
    unreadFeed.opened(now.map((n) => n.id));
  }

  const itemClass = `flex w-full items-start gap-2 rounded px-2 py-1.5 text-left text-sm text-slate-700 hover:bg-slate-100 focus:bg-slate-100 ${focusRing}`;

  return (
    <div ref={rootRef} className="relative">
      <button
        {...buttonProps(toggle)}
        data-testid="notification-bell"
        aria-label={
          unread.total ? t('notifications.bell', { count: unread.total }) : t('notifications.bell_none')
        }
        className={`relative flex size-8 items-center justify-center rounded-md text-slate-600 hover:bg-slate-100 ${focusRing}`}
      >
        <Icon name="bell" className="size-4" />
        {unread.total > 0 && (
          <span
            data-testid="notification-count"
            className="absolute -top-0.5 -right-0.5 min-w-4 rounded-full bg-red-600 px-1 text-center text-[10px] leading-4 font-semibold text-white"
          >
            {unread.total > 99 ? '99+' : unread.total}
          </span>
        )}
      </button>
      {open && (
        <div
          ref={menuRef}
          id={menuId}
          role="menu"
          aria-label={t('notifications.menu_title')}
          onKeyDown={onMenuKey}
          data-testid="notification-menu"
          className="absolute top-full right-0 z-40 mt-1 w-80 rounded-md border border-slate-200 bg-white p-1 shadow-lg"
        >
          <div
            className="border-b border-slate-100 px-2 pt-1 pb-2 text-sm font-medium text-slate-900"
            role="none"
          >
            {t('notifications.menu_title')}
          </div>
          {latest.length === 0 && (
            <div className="px-2 py-3 text-sm text-slate-500" role="none">
              {t('notifications.empty_unread')}
            </div>
          )}
          {latest.map((n) => (
            <button
              key={n.id}
              type="button"
              role="menuitem"
              tabIndex={-1}
              data-testid="notification-item"
              className={itemClass}
              onClick={() => {
                close(false);
                navigate(notificationTarget(n));
              }}
            >
              <span style={{ color: n.color }} className="mt-0.5 shrink-0">
                <Icon name={iconOf(n.icon)} className="size-4" />
              </span>
              <span className="min-w-0 flex-1">
                <span className={`block truncate ${n.significance === 'important' ? 'font-semibold' : ''}`}>
                  {notificationText(t, n)}
                </span>
                <span className="block text-xs text-slate-500">{formatDate(n.created_at)}</span>
              </span>
            </button>
          ))}
          <div className="mt-1 flex justify-between border-t border-slate-100 px-1 pt-1" role="none">
            {total > Notifications.menuLatest ? (
              <Link
                role="menuitem"
                tabIndex={-1}
                to="/notifications"
                data-testid="notification-more"
                className={`rounded px-1 text-sm text-blue-700 hover:underline ${focusRing}`}
                onClick={() => close(false)}
              >
                {t('notifications.more', { count: total })}
              </Link>
            ) : (
              <Link
                role="menuitem"
                tabIndex={-1}
                to="/notifications"
                className={`rounded px-1 text-sm text-blue-700 hover:underline ${focusRing}`}
                onClick={() => close(false)}
              >
                {t('notifications.title')}
              </Link>
            )}
            <Link
              role="menuitem"
              tabIndex={-1}
              to="/notifications/settings"
              className={`rounded px-1 text-sm text-slate-600 hover:underline ${focusRing}`}
              onClick={() => close(false)}
            >
              {t('notifications.settings')}
            </Link>
          </div>
        </div>
      )}
    </div>
  );
}
