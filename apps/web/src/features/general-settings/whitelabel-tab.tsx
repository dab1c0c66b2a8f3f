import { useEffect, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import type { WhiteLabelSettings } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { dataVersionAtom, execute } from '../../commands/execute';
import { FormError, Loading } from '../../ui/field';
import { WhiteLabelForm } from '../whitelabel/whitelabel-form';

/**
 * The White-label tab of /general-settings (spec part 2 §7 "Project settings: … white-label GET, PATCH, logo
 * POST and DELETE"; issue 24 item 2): the project's name, address, contacts and logo, which the console's
 * header shows and which groups without their own inherit.
 */
export function WhiteLabelTab({ canChange }: { canChange: boolean }) {
  const { t } = useTranslation();
  const version = useAtomValue(dataVersionAtom);
  const [settings, setSettings] = useState<WhiteLabelSettings | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    runCommand('settings.whitelabel_get', {})
      .then((r) => live && (setSettings(r.data), setError(null)))
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [version]);
  if (error) return <FormError message={error} />;
  if (!settings) return <Loading />;
  return (
    <section className="flex max-w-3xl flex-col gap-2">
      <h2 className="text-sm font-semibold">{t('general_settings.tabs.whitelabel')}</h2>
      <p className="text-sm text-slate-600">{t('whitelabel.project_hint')}</p>
      <WhiteLabelForm
        settings={settings}
        canChange={canChange}
        testId="whitelabel-tab"
        actions={{
          save: (changes) => execute('settings.whitelabel_update', changes, 'ui'),
          upload: (image) => execute('settings.whitelabel_logo_upload', { image }, 'ui'),
          remove: () => execute('settings.whitelabel_logo_delete', {}, 'ui'),
        }}
      />
    </section>
  );
}
