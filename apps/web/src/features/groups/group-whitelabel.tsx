import { useEffect, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, type EffectiveWhiteLabel, type WhiteLabelSettings } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { useCan } from '../../access/use-can';
import { dataVersionAtom, execute } from '../../commands/execute';
import { FormError, Loading } from '../../ui/field';
import { WhiteLabelForm } from '../whitelabel/whitelabel-form';

/**
 * A group's white-label on its edit page (spec part 1 §3 `whitelabel_settings`; part 2 §6 "manage own
 * domain: … white-label settings"): its own settings and logo, and whose white-label it shows now (its own,
 * an ancestor's, the project's: docs/decisions.md "White-label"). Changing it needs the permission and the
 * white-label licence; without them it is read-only.
 */
export function GroupWhiteLabel({ id }: { id: number }) {
  const { t } = useTranslation();
  const can = useCan();
  const version = useAtomValue(dataVersionAtom);
  const [state, setState] = useState<{ data: WhiteLabelSettings; effective: EffectiveWhiteLabel } | null>(
    null,
  );
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    runCommand('group.whitelabel_get', { id })
      .then((r) => live && (setState(r), setError(null)))
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [id, version]);
  if (error) return <FormError message={error} />;
  if (!state) return <Loading />;
  const { effective } = state;
  return (
    <section
      className="flex max-w-3xl flex-col gap-2 rounded-lg border border-slate-200 bg-white p-4"
      aria-label={t('whitelabel.title')}
    >
      <h2 className="text-sm font-semibold">{t('whitelabel.title')}</h2>
      <p className="text-sm text-slate-600" data-testid="whitelabel-effective">
        {effective.source === 'group' && effective.group?.id === id
          ? t('whitelabel.effective_own')
          : effective.source === 'group'
            ? t('whitelabel.effective_group', { name: effective.group?.name ?? '' })
            : effective.source === 'project'
              ? t('whitelabel.effective_project')
              : t('whitelabel.effective_none')}
      </p>
      <WhiteLabelForm
        settings={state.data}
        canChange={can(getCommand('group.whitelabel_update').gates).can}
        testId="group-whitelabel"
        actions={{
          save: (changes) => execute('group.whitelabel_update', { id, ...changes }, 'ui'),
          upload: (image) => execute('group.whitelabel_logo_upload', { id, image }, 'ui'),
          remove: () => execute('group.whitelabel_logo_delete', { id }, 'ui'),
        }}
      />
    </section>
  );
}
