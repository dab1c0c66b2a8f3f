import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { Notifications, type NotificationRecord } from '@lintel/core';
import { focusRing } from '../../ui/button';
import { Icon } from '../../ui/icon';
import { alarmTone, unlockAudioOnGesture } from '../../ui/tones';
import { useShortcut } from '../../keys/shortcuts';
import { profileAtom } from '../../session/session';
import { formatDate } from '../../resources/format';
import { iconOf } from './bell';
import { unreadFeed, useUnread } from './live';
import { notificationTarget, notificationText } from './text';

const HIDDEN_KEY = (userId: number) => `lintel.popups.hidden.${userId}`;

/**
 * The popups this tab hid with "hide all": kept for the tab's session (a reload does not bring them back),
 * per user. Hidden is not read: they stay in the bell and on /notifications.
 */
function useHidden(userId: number | undefined): [Set<number>, (ids: number[]) => void] {
  const [hidden, setHidden] = useState<Set<number>>(() => new Set());
  useEffect(() => {
    if (userId === undefined) return;
    try {
      const raw = JSON.parse(window.sessionStorage.getItem(HIDDEN_KEY(userId)) ?? '[]') as unknown;
      setHidden(new Set(Array.isArray(raw) ? raw.filter((x): x is number => typeof x === 'number') : []));
    } catch {
      setHidden(new Set());
    }
  }, [userId]);
  const hide = (ids: number[]) =>
    setHidden((before) => {
      const next = new Set([...before, ...ids]);
      if (userId !== undefined)
        try {
          window.sessionStorage.setItem(HIDDEN_KEY(userId), JSON.stringify([...next]));
        } catch {
          // storage blocked: hidden until the page reloads
        }
      return next;
    });
  return [hidden, hide];
}

/**
 * The important-notification popups (spec part 1 §2.3, part 2 §9): the newest three unread important
 * notifications, 300 to 450 px wide, bottom right above the action button; "see all" when more are unread,
 * "hide all" when more than one shows. Following a popup or closing it marks it read. An SOS alarm's popup
 * sounds its tone, repeating until it is read or hidden. Alt+I takes the focus to them; Escape there hides all.
 */
export function ImportantPopups() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const userId = useAtomValue(profileAtom)?.id;
  const unread = useUnread();
  const [hidden, hide] = useHidden(userId);
  const region = useRef<HTMLElement>(null);

  const visible = unread.important.filter((n) => !hidden.has(n.id));
  const shown = visible.slice(0, Notifications.importantPopupsShown);
  const pending = unread.importantTotal - unread.important.filter((n) => hidden.has(n.id)).length;
  const sounding = visible.some((n) => n.sound === 'alarm');

  useEffect(() => unlockAudioOnGesture(), []);
  useEffect(() => {
    if (sounding) alarmTone.start();
    else alarmTone.stop();
  }, [sounding]);
  useEffect(() => () => alarmTone.stop(), []);

  useShortcut(
    'alt+i',
    () => region.current?.querySelector<HTMLElement>('[data-testid="popup-open"]')?.focus(),
    { labelKey: 'notifications.keys.popups', inInputs: true, enabled: shown.length > 0 },
    [shown.length],
  );

  if (!shown.length) return null;

  const hideAll = () => {
    hide(visible.map((n) => n.id));
    document.getElementById('main')?.focus();
  };
  const read = (n: NotificationRecord) =>
    void unreadFeed.read([n.id]).catch((err: unknown) => console.warn('lintel: notification read', err));

  return (
    <section
      ref={region}
      aria-label={t('notifications.popups.region')}
      aria-live="assertive"
      aria-relevant="additions"
      data-testid="important-popups"
      data-sounding={sounding || undefined}
      onKeyDown={(e: KeyboardEvent) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          hideAll();
        }
      }}
      className="pointer-events-none fixed right-4 bottom-20 z-40 flex flex-col items-end gap-2"
    >
      {sounding && <span className="sr-only">{t('notifications.popups.sounding')}</span>}
      {(pending > shown.length || shown.length > 1) && (
        <div className="pointer-events-auto flex gap-3 rounded-md bg-white/90 px-2 py-1 text-xs shadow">
          {pending > shown.length && (
            <Link
              to="/notifications?type=important"
              data-testid="popups-see-all"
              className={`rounded text-blue-700 hover:underline ${focusRing}`}
            >
              {t('notifications.popups.see_all', { count: pending })}
            </Link>
          )}
          {shown.length > 1 && (
            <button
              type="button"
              onClick={hideAll}
              data-testid="popups-hide-all"
              className={`rounded text-slate-600 hover:underline ${focusRing}`}
            >
              {t('notifications.popups.hide_all')}
            </button>
          )}
        </div>
      )}
      {shown.map((n) => (
        <div
          key={n.id}
          data-testid="important-popup"
          data-sound={n.sound ?? undefined}
          style={{
            minWidth: Notifications.popupWidth.min,
            maxWidth: Notifications.popupWidth.max,
            width: `min(${Notifications.popupWidth.max}px, calc(100vw - 2rem))`,
            borderLeftColor: n.color,
          }}
          className="pointer-events-auto flex items-start gap-2 rounded-md border border-l-4 border-slate-200 bg-white p-2 text-sm shadow-lg"
        >
          <span style={{ color: n.color }} className="mt-0.5 shrink-0">
            <Icon name={iconOf(n.icon)} className="size-4" />
          </span>
          <button
            type="button"
            data-testid="popup-open"
            onClick={() => {
              read(n);
              navigate(notificationTarget(n));
            }}
            className={`min-w-0 flex-1 rounded text-left ${focusRing}`}
          >
            <span className="block font-semibold break-words text-slate-900">{notificationText(t, n)}</span>
            <span className="block text-xs text-slate-500">{formatDate(n.created_at)}</span>
          </button>
          <button
            type="button"
            data-testid="popup-dismiss"
            onClick={() => read(n)}
            aria-label={t('notifications.popups.dismiss')}
            title={t('notifications.popups.dismiss')}
            className={`-mr-0.5 rounded p-0.5 text-slate-500 hover:text-slate-900 ${focusRing}`}
          >
            <Icon name="close" className="size-4" />
          </button>
        </div>
      ))}
    </section>
  );
}
