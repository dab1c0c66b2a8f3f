import { useEffect, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { NotificationSettings } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';

/** /notifications/settings: the user's settings `{acs}` (spec part 2 §7). */
export function NotificationSettingsPage() {
  const { t } = useTranslation();
  usePageTitle(t('notifications.settings_title'));
  const [settings, setSettings] = useState<NotificationSettings | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    runCommand('notification.settings_get', {})
      .then(setSettings)
      .catch((err: unknown) => setError(describeError(err).message));
  }, []);

  if (!settings) return error ? <FormError message={error} /> : <Loading />;

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!settings) return;
    setBusy(true);
    try {
      setSettings(await runCommand('notification.settings_update', settings));
      pushAlert('success', t('notifications.saved'));
      setError(null);
    } catch (err) {
      setError(describeError(err).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="max-w-md space-y-3" onSubmit={(e) => void save(e)}>
      <label className="flex items-center gap-2 text-sm text-slate-800">
        <input
          type="checkbox"
          data-testid="notification-settings-acs"
          checked={settings.acs}
          onChange={(e) => setSettings({ acs: e.target.checked })}
        />
        {t('notifications.acs')}
      </label>
      <FormError message={error} />
      <Button type="submit" variant="primary" busy={busy}>
        {t('forms.verb.save')}
      </Button>
    </form>
  );
}
