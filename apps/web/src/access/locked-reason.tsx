import { useTranslation } from 'react-i18next';
import { permissionTitleKey } from '@lintel/core';
import type { LockReason } from './gates';

/** Says why something is locked: which permissions would open it, or which licence is missing. */
export function LockedReason({ reason }: { reason: LockReason }) {
  const { t } = useTranslation();
  const tr = t as unknown as (k: string) => string;
  if (reason.kind === 'permission')
    return (
      <>
        {t('access.needs_permission', {
          list: reason.anyOf.map((c) => tr(permissionTitleKey(c))).join(', '),
        })}
      </>
    );
  if (reason.kind === 'licence')
    return <>{t('access.needs_licence', { feature: tr(`access.features.${reason.flag.split('.')[0]}`) })}</>;
  return <>{t('access.signed_out')}</>;
}
