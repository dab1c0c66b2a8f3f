import { useEffect, useState } from 'react';
import { PASSWORD_PLACEHOLDER, PushProviders, type PushSettings } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { pushAlert } from '../../alerts/alerts';
import { commandTitle } from '../../commands/titles';
import { Button } from '../../ui/button';
import { FormError, inputClass, LabelledField, Loading, TextField } from '../../ui/field';
import { save, Section, useLoad, type Tr } from './settings-parts';

type TextKey = 'endpoint_url' | 'fcm_project_id' | 'apns_team_id' | 'apns_key_id' | 'apns_topic';
type SecretKey = 'fcm_service_account' | 'apns_key' | 'api_key';

/** What each provider asks for: its texts, its secrets (a key file's text), and the production flag. */
const FIELDS: Record<PushSettings['provider'], { texts: TextKey[]; secrets: SecretKey[] }> = {
  none: { texts: [], secrets: [] },
  fcm: { texts: ['fcm_project_id', 'endpoint_url'], secrets: ['fcm_service_account'] },
  apns: { texts: ['apns_team_id', 'apns_key_id', 'apns_topic', 'endpoint_url'], secrets: ['apns_key'] },
  gateway: { texts: ['endpoint_url'], secrets: ['api_key'] },
};

/**
 * The push server (spec part 2 §7 "push server GET and PATCH"; part 1 §2.4): where the project's mobile app
 * notifications go — Firebase Cloud Messaging, Apple's APNs, or an HTTPS relay — with its keys, which show as
 * the placeholder once stored and are kept when it is sent back.
 */
export function PushSettingsTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const [data, error, reload] = useLoad(() => runCommand('settings.push_get', {}));
  const [form, setForm] = useState<PushSettings | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (data) setForm(data.data);
  }, [data]);
  if (error) return <FormError message={error} />;
  if (!data || !form) return <Loading />;
  const { texts, secrets } = FIELDS[form.provider];
  const submit = async () => {
    const args: Record<string, unknown> = { provider: form.provider };
    for (const k of [...texts, ...secrets]) args[k] = form[k];
    if (form.provider === 'apns') args.apns_production = form.apns_production;
    setBusy(true);
    const reply = await save('settings.push_update', args, setFields);
    setBusy(false);
    if (!reply) return;
    pushAlert('success', tr('general_settings.saved'));
    reload();
  };
  return (
    <div className="flex flex-col gap-5" data-testid="push-settings-tab">
      <Section title={tr('general_settings.tabs.push')}>
        <p className="text-sm text-slate-600" data-testid="push-state">
          {tr(data.ready ? 'general_settings.push.ready' : 'general_settings.push.not_ready')}
        </p>
        <LabelledField
          label={tr('general_settings.push.provider')}
          htmlFor="push-provider"
          errorTestId="push-provider-error"
        >
          <select
            id="push-provider"
            data-testid="push-provider"
            className={`${inputClass} w-80`}
            value={form.provider}
            disabled={!canChange}
            onChange={(e) => setForm({ ...form, provider: e.target.value as PushSettings['provider'] })}
          >
            {PushProviders.map((p) => (
              <option key={p} value={p}>
                {tr(`values.provider.${p}`)}
              </option>
            ))}
          </select>
        </LabelledField>
        {texts.map((k) => (
          <TextField
            key={k}
            name={`push-${k}`}
            label={tr(`general_settings.push.${k}`)}
            hint={
              k === 'endpoint_url' && form.provider !== 'gateway'
                ? tr('general_settings.push.endpoint_hint')
                : undefined
            }
            value={form[k]}
            onValue={(v) => setForm({ ...form, [k]: v })}
            error={fields[k]}
            readOnly={!canChange}
          />
        ))}
        {form.provider === 'apns' && (
          <label className="flex items-center gap-2 text-sm">
            <input
              type="checkbox"
              data-testid="push-apns_production"
              checked={form.apns_production}
              disabled={!canChange}
              onChange={(e) => setForm({ ...form, apns_production: e.target.checked })}
            />
            {tr('general_settings.push.apns_production')}
          </label>
        )}
        {secrets.map((k) => (
          <LabelledField
            key={k}
            label={tr(`general_settings.push.${k}`)}
            htmlFor={`push-${k}`}
            error={fields[k]}
            errorTestId={`push-${k}-error`}
            hint={tr('general_settings.push.secret_hint')}
            hintId={`push-${k}-hint`}
          >
            <textarea
              id={`push-${k}`}
              name={`push-${k}`}
              data-testid={`push-${k}`}
              aria-describedby={`push-${k}-hint`}
              className={`${inputClass} ${k === 'api_key' ? 'h-10' : 'h-24'} font-mono text-xs`}
              value={form[k]}
              readOnly={!canChange}
              spellCheck={false}
              onFocus={() => form[k] === PASSWORD_PLACEHOLDER && setForm({ ...form, [k]: '' })}
              // left empty, a stored secret is kept: only a deliberate save of an emptied field removes it
              onBlur={() =>
                form[k] === '' &&
                data.data[k] === PASSWORD_PLACEHOLDER &&
                setForm({ ...form, [k]: PASSWORD_PLACEHOLDER })
              }
              onChange={(e) => setForm({ ...form, [k]: e.target.value })}
            />
          </LabelledField>
        ))}
        {canChange && (
          <div>
            <Button variant="primary" busy={busy} onClick={() => void submit()}>
              {commandTitle('settings.push_update')}
            </Button>
          </div>
        )}
      </Section>
    </div>
  );
}
