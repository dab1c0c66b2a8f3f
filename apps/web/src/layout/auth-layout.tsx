import type { ReactNode } from 'react';
import { Outlet } from 'react-router';
import { useTranslation } from 'react-i18next';
import { Button } from '../ui/button';
import { Brand } from './brand';
import { LanguageSwitcher } from './language-switcher';
import { useServerInfo } from './server-info';

/** The frame of the signed-out pages: brand, language, one centred panel, server version. */
export function AuthLayout() {
  const { t } = useTranslation();
  const info = useServerInfo();
  return (
    <div className="flex min-h-dvh flex-col bg-slate-100 text-slate-900">
      <header className="flex h-12 items-center justify-between px-4">
        <Brand />
        <LanguageSwitcher />
      </header>
      <main id="main" className="flex flex-1 items-start justify-center px-4 pt-[8vh] pb-8">
        <Outlet />
      </main>
      <footer className="px-4 py-3 text-center text-[11px] text-slate-600" data-testid="server-version">
        {info ? t('layout.server_version', { name: info.name, version: info.version }) : '\u00a0'}
      </footer>
    </div>
  );
}

/** The panel a signed-out page puts its form in. */
export function AuthPanel({
  title,
  subtitle,
  children,
  footer,
  wide = false,
  testId,
}: {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
  testId?: string;
}) {
  return (
    <section
      aria-labelledby="panel-title"
      data-testid={testId}
      className={`w-full ${wide ? 'max-w-lg' : 'max-w-sm'} rounded-lg border border-slate-200 bg-white shadow-sm`}
    >
      <div className="px-6 pt-5 pb-5">
        <h1 id="panel-title" className="text-lg font-semibold tracking-tight text-slate-900">
          {title}
        </h1>
        {subtitle && <div className="mt-1 text-sm text-slate-600">{subtitle}</div>}
        <div className="mt-4">{children}</div>
      </div>
      {footer && (
        <div className="rounded-b-lg border-t border-slate-100 bg-slate-50 px-6 py-3 text-sm text-slate-600">
          {footer}
        </div>
      )}
    </section>
  );
}

export const linkClass =
  'rounded-sm font-medium text-blue-700 underline-offset-2 hover:underline outline-none focus-visible:ring-2 focus-visible:ring-blue-600';

/** The one full-width submit button of a signed-out page's form. */
export function SubmitButton({
  busy,
  testId,
  children,
}: {
  busy: boolean;
  testId: string;
  children: ReactNode;
}) {
  return (
    <Button type="submit" variant="primary" className="w-full" busy={busy} data-testid={testId}>
      {children}
    </Button>
  );
}
