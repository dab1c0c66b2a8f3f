import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { usePageTitle } from '../layout/page-title';
import { pageById } from '../nav/pages';
import { useCan } from './use-can';
import { LockedReason } from './locked-reason';
import { Icon } from '../ui/icon';

/** The catalogue's "method or action is prohibited" in place of a page the user may not open. */
export function Forbidden({ reason }: { reason?: ReactNode }) {
  const { t } = useTranslation();
  // catalogue keys are read untyped, as api/errors.ts reads them
  const message = (t as unknown as (k: string) => string)('errors:http.method_prohibited');
  usePageTitle(message);
  return (
    <div
      role="alert"
      data-testid="forbidden"
      className="max-w-lg rounded-lg border border-red-200 bg-white p-4"
    >
      <div className="flex items-center gap-2 text-sm font-semibold text-red-800">
        <Icon name="lock" />
        {message}
      </div>
      {reason && <div className="mt-2 text-sm text-slate-600">{reason}</div>}
    </div>
  );
}

/** A route's guard: the page when its gates pass, else the catalogue error, never a blank page. */
export function PageGate({ page, children }: { page: string; children: ReactNode }) {
  const can = useCan();
  const verdict = can(pageById(page).gates);
  if (!verdict.can) return <Forbidden reason={verdict.reason && <LockedReason reason={verdict.reason} />} />;
  return <>{children}</>;
}
