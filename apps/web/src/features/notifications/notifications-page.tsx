import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { NotificationTabs, Notifications, type NotificationRecord, type NotificationTab } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { usePageTitle } from '../../layout/page-title';
import { formatDate } from '../../resources/format';
import { Button, focusRing } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';
import { iconOf } from './bell';
import { onNotificationArrived, unreadFeed } from './live';
import { notificationText } from './text';

interface PageData {
  data: NotificationRecord[];
  meta: { total: number; unread: number; offset: number; limit: number };
}

/** /notifications: the tabs All, Normal, Important, ACS, Alarm (spec part 1 §2.3), 20 a page, newest first. */
export function NotificationsPage() {
  const { t } = useTranslation();
  usePageTitle(t('notifications.title'));
  const [params, setParams] = useSearchParams();
  const tab: NotificationTab = (NotificationTabs as readonly string[]).includes(params.get('type') ?? '')
    ? (params.get('type') as NotificationTab)
    : 'all';
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const [page, setPage] = useState<PageData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const tabsRef = useRef<HTMLDivElement>(null);

  const load = useCallback(async () => {
    try {
      setPage(await runCommand('notification.list', { type: tab, offset, limit: Notifications.pageSize }));
      setError(null);
    } catch (err) {
      setError(describeError(err).message);
    }
  }, [tab, offset]);

  useEffect(() => {
    void load();
    return onNotificationArrived(() => void load());
  }, [load]);

  const go = (next: { type?: NotificationTab; offset?: number }) => {
    const p = new URLSearchParams();
    const type = next.type ?? tab;
    if (type !== 'all') p.set('type', type);
    const o = next.offset ?? 0;
    if (o > 0) p.set('offset', String(o));
    setParams(p);
  };

  function onTabKey(e: KeyboardEvent) {
    const i = NotificationTabs.indexOf(tab);
    const to =
      e.key === 'ArrowRight'
        ? (i + 1) % NotificationTabs.length
        : e.key === 'ArrowLeft'
          ? (i - 1 + NotificationTabs.length) % NotificationTabs.length
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? NotificationTabs.length - 1
              : -1;
    if (to < 0) return;
    e.preventDefault();
    go({ type: NotificationTabs[to] });
    requestAnimationFrame(() =>
      tabsRef.current?.querySelector<HTMLElement>('[aria-selected="true"]')?.focus(),
    );
  }

  async function markRead(id: number) {
    try {
      await runCommand('notification.read', { id });
      await Promise.all([load(), unreadFeed.reload()]);
    } catch (err) {
      pushAlert('error', describeError(err).message);
    }
  }

  async function markAll() {
    try {
      await runCommand('notification.read_all', {});
      await Promise.all([load(), unreadFeed.reload()]);
    } catch (err) {
      pushAlert('error', describeError(err).message);
    }
  }

  const total = page?.meta.total ?? 0;
  return (
    <div className="max-w-3xl space-y-3">
      <div className="flex items-center justify-between gap-2">
        <div
          ref={tabsRef}
          role="tablist"
          aria-label={t('notifications.tabs.label')}
          className="flex gap-1"
          onKeyDown={onTabKey}
        >
          {NotificationTabs.map((k) => (
            <button
              key={k}
              type="button"
              role="tab"
              aria-selected={k === tab}
              tabIndex={k === tab ? 0 : -1}
              data-testid={`notifications-tab-${k}`}
              onClick={() => go({ type: k })}
              className={`rounded-md px-3 py-1 text-sm ${k === tab ? 'bg-slate-900 text-white' : 'text-slate-700 hover:bg-slate-100'} ${focusRing}`}
            >
              {t(`notifications.tabs.${k}`)}
            </button>
          ))}
        </div>
        <div className="flex items-center gap-2">
          <Button
            size="sm"
            onClick={() => void markAll()}
            disabled={!page?.meta.unread}
            data-testid="notifications-read-all"
          >
            {t('notifications.read_all')}
          </Button>
          <Link
            to="/notifications/settings"
            className={`rounded text-sm text-blue-700 hover:underline ${focusRing}`}
          >
            {t('notifications.settings')}
          </Link>
        </div>
      </div>
      <FormError message={error} />
      <div role="tabpanel" aria-label={t(`notifications.tabs.${tab}`)}>
        {!page ? (
          <Loading />
        ) : page.data.length === 0 ? (
          <p className="text-sm text-slate-500">{t('notifications.empty')}</p>
        ) : (
          <ul
            className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white"
            data-testid="notifications-list"
          >
            {page.data.map((n) => (
              <li key={n.id} className="flex items-start gap-3 px-3 py-2" data-testid="notifications-row">
                <span style={{ color: n.color }} className="mt-0.5 shrink-0">
                  <Icon name={iconOf(n.icon)} className="size-4" />
                </span>
                <div className="min-w-0 flex-1">
                  <div className={`text-sm ${n.read_at ? 'text-slate-600' : 'font-semibold text-slate-900'}`}>
                    {notificationText(t, n)}
                  </div>
                  <div className="text-xs text-slate-500">
                    {formatDate(n.created_at)}
                    {n.data.group ? ` · ${t('notifications.in_group', { name: n.data.group.name })}` : ''}
                  </div>
                </div>
                {!n.read_at && (
                  <Button size="sm" variant="ghost" onClick={() => void markRead(n.id)}>
                    {t('notifications.read')}
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
      {total > Notifications.pageSize && (
        <div className="flex items-center justify-end gap-2 text-sm text-slate-600">
          <span>
            {t('notifications.page', {
              from: offset + 1,
              to: Math.min(offset + Notifications.pageSize, total),
              total,
            })}
          </span>
          <Button
            size="sm"
            disabled={offset === 0}
            onClick={() => go({ offset: Math.max(0, offset - Notifications.pageSize) })}
          >
            {t('notifications.prev')}
          </Button>
          <Button
            size="sm"
            disabled={offset + Notifications.pageSize >= total}
            onClick={() => go({ offset: offset + Notifications.pageSize })}
          >
            {t('notifications.next')}
          </Button>
        </div>
      )}
    </div>
  );
}
