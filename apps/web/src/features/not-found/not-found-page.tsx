import { Link, useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';
import { AuthPanel, linkClass } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { useSession } from '../../session/session';

/** The catch-all page (spec part 1 §2.1). */
export function NotFoundPage() {
  const { t } = useTranslation();
  const location = useLocation();
  const session = useSession();
  usePageTitle(t('not_found.title'));
  return (
    <AuthPanel
      title={t('not_found.title')}
      testId="not-found"
      footer={
        <Link to={session ? '/home' : '/login'} className={linkClass}>
          {session ? t('not_found.to_home') : t('not_found.to_login')}
        </Link>
      }
    >
      <p className="text-sm text-slate-600">
        {t('not_found.text')}{' '}
        <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs break-all text-slate-800">
          {location.pathname}
        </code>
      </p>
    </AuthPanel>
  );
}
