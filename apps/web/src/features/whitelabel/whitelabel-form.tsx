import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { WhiteLabelSettings } from '@lintel/commands';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { Button, FileButton } from '../../ui/button';
import { Icon } from '../../ui/icon';
import { TextField } from '../../ui/field';
import { refreshBrand } from '../../session/session';

type Texts = Pick<WhiteLabelSettings, 'name' | 'address' | 'email' | 'phone'>;
const TEXTS = ['name', 'address', 'email', 'phone'] as const;

export interface WhiteLabelActions {
  save: (changes: Texts & { is_enabled: boolean }) => Promise<unknown>;
  upload: (image: File) => Promise<unknown>;
  remove: () => Promise<unknown>;
}

/**
 * A white-label — the project's (the White-label tab of /general-settings) or a group's (its edit page):
 * enabled, name, address, e-mail and phone, saved together; the logo uploaded or removed at once. Field
 * errors come back from the server's checks (`check_fields_data`) beside their fields.
 */
export function WhiteLabelForm({
  settings,
  canChange,
  actions,
  testId,
}: {
  settings: WhiteLabelSettings;
  canChange: boolean;
  actions: WhiteLabelActions;
  testId: string;
}) {
  const { t } = useTranslation();
  const tr = t as unknown as (key: string, params?: Record<string, unknown>) => string;
  const [form, setForm] = useState(settings);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  useEffect(() => setForm(settings), [settings]);

  async function act(work: () => Promise<unknown>, done?: string) {
    setBusy(true);
    try {
      await work();
      setErrors({});
      if (done) pushAlert('success', done);
      // the header shows the user's brand: it may be this one
      void refreshBrand().catch(() => undefined);
    } catch (err) {
      const failure = describeError(err);
      setErrors(failure.fields);
      pushAlert('error', failure.message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="flex flex-col gap-2" data-testid={testId}>
      <label className="flex items-center gap-2 text-sm">
        <input
          type="checkbox"
          checked={form.is_enabled}
          disabled={!canChange}
          data-testid="whitelabel-enabled"
          onChange={(e) => setForm({ ...form, is_enabled: e.target.checked })}
        />
        {tr('whitelabel.is_enabled')}
      </label>
      {TEXTS.map((key) => (
        <TextField
          key={key}
          name={`whitelabel-${key}`}
          label={tr(`whitelabel.${key}`)}
          value={form[key]}
          onValue={(v) => setForm({ ...form, [key]: v })}
          error={errors[key]}
          readOnly={!canChange}
          type={key === 'email' ? 'email' : key === 'phone' ? 'tel' : 'text'}
        />
      ))}
      {canChange && (
        <div>
          <Button
            variant="primary"
            busy={busy}
            data-testid="whitelabel-save"
            onClick={() =>
              void act(
                () =>
                  actions.save({
                    is_enabled: form.is_enabled,
                    name: form.name,
                    address: form.address,
                    email: form.email,
                    phone: form.phone,
                  }),
                tr('whitelabel.saved'),
              )
            }
          >
            {tr('whitelabel.save')}
          </Button>
        </div>
      )}
      <div className="mt-2 flex items-center gap-3">
        {settings.logo ? (
          <img
            src={settings.logo}
            alt={tr('whitelabel.logo_of', { name: settings.name || '—' })}
            className="h-16 max-w-48 rounded border border-slate-200 bg-white object-contain p-1"
            data-testid="whitelabel-logo"
          />
        ) : (
          <span className="text-sm text-slate-500" data-testid="whitelabel-no-logo">
            {tr('whitelabel.no_logo')}
          </span>
        )}
        {canChange && (
          <div className="flex flex-col items-start gap-1">
            <FileButton
              accept="image/png,image/jpeg,image/gif"
              fileTestId="whitelabel-logo-file"
              size="sm"
              busy={busy}
              icon={<Icon name="upload" className="size-3.5" />}
              onFile={(file) => void act(() => actions.upload(file), tr('whitelabel.logo_saved'))}
            >
              {tr('whitelabel.logo_upload')}
            </FileButton>
            {settings.logo && (
              <Button
                size="sm"
                variant="ghost"
                disabled={busy}
                data-testid="whitelabel-logo-delete"
                onClick={() => void act(() => actions.remove())}
              >
                {tr('whitelabel.logo_delete')}
              </Button>
            )}
          </div>
        )}
      </div>
      <p className="text-xs text-slate-500">{tr('whitelabel.logo_hint')}</p>
    </div>
  );
}
