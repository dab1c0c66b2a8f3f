import { useEffect, useRef, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { ALERT_TIMEOUT_MS } from '@lintel/core';
import { alertsAtom, dismissAlert, type Alert, type AlertKind } from './alerts';
import { Icon } from '../ui/icon';

const tone: Record<AlertKind, string> = {
  error: 'border-red-300 bg-red-50 text-red-900',
  warning: 'border-amber-300 bg-amber-50 text-amber-900',
  success: 'border-emerald-300 bg-emerald-50 text-emerald-900',
  info: 'border-sky-300 bg-sky-50 text-sky-900',
};

const icon = { error: 'error', warning: 'warning', success: 'check', info: 'info' } as const;

function AlertItem({ alert }: { alert: Alert }) {
  const { t } = useTranslation();
  const [paused, setPaused] = useState(false);
  const remaining = useRef(ALERT_TIMEOUT_MS);

  // Auto-dismiss, paused while the pointer or focus is on the alert so it can be read.
  useEffect(() => {
    if (alert.persistent || paused) return;
    const started = Date.now();
    const timer = window.setTimeout(() => dismissAlert(alert.id), remaining.current);
    return () => {
      window.clearTimeout(timer);
      remaining.current = Math.max(800, remaining.current - (Date.now() - started));
    };
  }, [alert.id, alert.persistent, paused]);

  return (
    <div
      role={alert.kind === 'error' || alert.kind === 'warning' ? 'alert' : 'status'}
      data-testid={`alert-${alert.kind}`}
      className={`pointer-events-auto flex items-start gap-2 rounded-md border px-3 py-2 text-sm shadow-md ${tone[alert.kind]}`}
      onMouseEnter={() => setPaused(true)}
      onMouseLeave={() => setPaused(false)}
      onFocus={() => setPaused(true)}
      onBlur={() => setPaused(false)}
    >
      <Icon name={icon[alert.kind]} className="mt-0.5 size-4 shrink-0" />
      <span className="sr-only">{t(`alerts.kind.${alert.kind}`)}: </span>
      <p className="min-w-0 flex-1 break-words">{alert.message}</p>
      {alert.action && (
        <button
          type="button"
          onClick={alert.action.run}
          data-testid={alert.action.testId}
          className="-my-0.5 rounded border border-current px-2 py-0.5 text-xs font-semibold focus-visible:outline-2 focus-visible:outline-current"
        >
          {alert.action.label}
        </button>
      )}
      <button
        type="button"
        onClick={() => dismissAlert(alert.id)}
        aria-label={t('alerts.dismiss')}
        title={t('alerts.dismiss')}
        className="-mr-1 rounded p-0.5 opacity-70 hover:opacity-100 focus-visible:opacity-100 focus-visible:outline-2 focus-visible:outline-current"
      >
        <Icon name="close" className="size-4" />
      </button>
    </div>
  );
}

/** The alerts area of the layout (spec part 1 §2.3): newest at the bottom, top right of the page. */
export function AlertsArea() {
  const alerts = useAtomValue(alertsAtom);
  const { t } = useTranslation();
  return (
    <section
      aria-label={t('alerts.region')}
      className="pointer-events-none fixed top-14 right-4 z-50 flex w-[min(24rem,calc(100vw-2rem))] flex-col gap-2"
    >
      {alerts.map((a) => (
        <AlertItem key={a.id} alert={a} />
      ))}
    </section>
  );
}
