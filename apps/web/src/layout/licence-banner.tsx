import { useEffect, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import type { ServerSettings } from '@lintel/core';
import { runCommand } from '../api/client';
import { dataVersionAtom } from '../commands/execute';
import { profileAtom } from '../session/session';
import { Icon } from '../ui/icon';

type Warning = ServerSettings['license_warning'];

const DISMISSED = 'lintel.licence_warning.dismissed';

/**
 * The server licence warning (spec part 1 §4 "Licenses", part 2 §8): people who manage or view licences see
 * it with the days left and no timeout. It sits in the page's flow under the top bar, so it never covers a
 * table's tools; dismissed, it comes back with the next session or when the warning changes.
 */
export function LicenceBanner() {
  const { t } = useTranslation();
  const profile = useAtomValue(profileAtom);
  // a licence added or deleted changes the warning
  const version = useAtomValue(dataVersionAtom);
  const [warning, setWarning] = useState<Warning | null>(null);
  const [dismissed, setDismissed] = useState(() => {
    try {
      return window.sessionStorage.getItem(DISMISSED);
    } catch {
      return null;
    }
  });
  const concerned =
    !!profile && ['licenses.manage', 'licenses.view'].some((p) => profile.role.permissions.includes(p));
  const key = profile ? `${profile.project.id}:${profile.id}` : '';

  useEffect(() => {
    if (!concerned) {
      setWarning(null);
      return;
    }
    let live = true;
    runCommand('server.settings', {})
      .then((s) => live && setWarning(s.license_warning))
      .catch((err: unknown) => console.warn('lintel: server settings unavailable', err));
    return () => {
      live = false;
    };
  }, [concerned, key, version]);

  // the installation's own evaluation licence is always marked, also while it is far from its end
  if (!warning || (warning.status === 'normal' && !warning.evaluation)) return null;
  const id = `${warning.status}:${warning.days ?? ''}:${warning.evaluation ? 'evaluation' : ''}`;
  if (dismissed === id) return null;
  const days = warning.days ?? 0;
  const message =
    warning.evaluation && warning.status !== 'already_expired'
      ? t('licence_warning.evaluation', { days })
      : warning.status === 'no_license'
        ? t('licence_warning.no_license')
        : warning.status === 'already_expired'
          ? t('licence_warning.already_expired')
          : days <= 0
            ? t('licence_warning.expires_today')
            : t('licence_warning.will_expire', { days });

  return (
    <div
      role="status"
      data-testid="licence-warning"
      className="flex shrink-0 items-center gap-2 border-b border-amber-200 bg-amber-50 px-4 py-1.5 text-[13px] text-amber-950"
    >
      <Icon name="warning" className="size-4 shrink-0 text-amber-700" />
      <p className="min-w-0 flex-1">{message}</p>
      <button
        type="button"
        onClick={() => {
          setDismissed(id);
          try {
            window.sessionStorage.setItem(DISMISSED, id);
          } catch {
            // dismissed for this page only
          }
        }}
        aria-label={t('alerts.dismiss')}
        title={t('alerts.dismiss')}
        className="rounded p-0.5 text-amber-800 hover:bg-amber-100 focus-visible:outline-2 focus-visible:outline-amber-700"
      >
        <Icon name="close" className="size-4" />
      </button>
    </div>
  );
}
