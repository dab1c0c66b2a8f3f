import type { ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { defaultDateStyle, formatDate, formatRelative } from '../../resources/format';
import { focusRing } from '../../ui/button';
import { Icon, type IconName } from '../../ui/icon';
import { linkClass } from '../../layout/auth-layout';
import { profileAtom } from '../../session/session';

/** A line of a panel: a term and its value. */
export function Row({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[9rem_1fr] gap-3 px-3 py-1.5 text-sm even:bg-slate-50/70">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 truncate text-slate-900" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/** A panel of the page's own facts (the account, the project): a title and its lines. */
export function Panel({
  title,
  children,
  action,
}: {
  title: string;
  children: ReactNode;
  action?: ReactNode;
}) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white" aria-label={title}>
      <header className="flex h-9 items-center justify-between border-b border-slate-200 px-3">
        <h2 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">{title}</h2>
        {action}
      </header>
      <dl className="py-1">{children}</dl>
    </section>
  );
}

/** A card of the dashboard: a title, a link into the table behind it, and its rows. */
export function Card({
  title,
  icon,
  href,
  linkText,
  testId,
  children,
}: {
  title: string;
  icon: IconName;
  href?: string;
  linkText?: string;
  testId: string;
  children: ReactNode;
}) {
  return (
    <section
      className="flex min-w-0 flex-col rounded-lg border border-slate-200 bg-white"
      aria-label={title}
      data-testid={testId}
    >
      <header className="flex h-10 items-center gap-2 border-b border-slate-200 px-3">
        <Icon name={icon} className="size-4 text-slate-500" />
        <h2 className="min-w-0 flex-1 truncate text-sm font-semibold text-slate-800">{title}</h2>
        {href && linkText && (
          <Link to={href} className={`${linkClass} text-xs whitespace-nowrap`} data-testid={`${testId}-all`}>
            {linkText}
          </Link>
        )}
      </header>
      {children}
    </section>
  );
}

/** What a card shows while it loads, when it failed, and when there is nothing. */
export function CardState({ state, empty }: { state: 'loading' | 'failed' | 'empty'; empty: string }) {
  const { t } = useTranslation();
  return (
    <p
      className="px-3 py-4 text-sm text-slate-500"
      role={state === 'failed' ? 'alert' : undefined}
      aria-busy={state === 'loading' || undefined}
    >
      {state === 'loading' ? '…' : state === 'failed' ? t('home.failed') : empty}
    </p>
  );
}

/** One line of a card: a link into the table on that row; what happened, then by whom (or from where) and when. */
export function EventLine({
  href,
  title,
  main,
  mainText,
  sub,
  at,
}: {
  href: string;
  title: string;
  main: ReactNode;
  /** the first line as text: its tooltip when it is cut */
  mainText: string;
  sub: string;
  at: string;
}) {
  const { i18n } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const style = {
    timeFormat: profile?.profile.time_format ?? defaultDateStyle.timeFormat,
    timeZone: profile?.profile.time_zone ?? defaultDateStyle.timeZone,
  };
  return (
    <li>
      <Link
        to={href}
        aria-description={title}
        className={`block px-3 py-1.5 text-sm hover:bg-blue-50/60 ${focusRing}`}
      >
        <span className="block truncate text-slate-900" title={mainText}>
          {main}
        </span>
        <span className="flex min-w-0 gap-1.5 text-xs text-slate-500">
          <span className="truncate">{sub}</span>
          <span aria-hidden="true">·</span>
          <time
            dateTime={at}
            title={formatDate(at, style)}
            className="shrink-0 whitespace-nowrap tabular-nums"
          >
            {formatRelative(at, i18n.resolvedLanguage ?? 'en')}
          </time>
        </span>
      </Link>
    </li>
  );
}
