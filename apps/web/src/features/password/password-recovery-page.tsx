import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { runCommand } from '../../api/client';
import { validateArgs } from '../../api/errors';
import { AuthPanel, linkClass, SubmitButton } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { FormError, Notice, TextField } from '../../ui/field';
import { useForm } from '../../ui/use-form';

/** /password/recovery: sends a reset link to the account's e-mail. */
export function PasswordRecoveryPage() {
  const { t } = useTranslation();
  const form = useForm({ email: '' });
  const [sentTo, setSentTo] = useState<string | null>(null);
  usePageTitle(t('recovery.title'));

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    void form.submit(async () => {
      const args = { email: form.values.email };
      const invalid = validateArgs('password.recovery', args);
      if (invalid) return invalid;
      await runCommand('password.recovery', args);
      setSentTo(args.email.trim());
    });
  }

  return (
    <AuthPanel
      title={t('recovery.title')}
      subtitle={sentTo ? undefined : t('recovery.subtitle')}
      testId="password-recovery"
      footer={
        <Link to="/login" className={linkClass}>
          {t('recovery.back_to_login')}
        </Link>
      }
    >
      {sentTo ? (
        <Notice kind="success" testId="recovery-sent">
          {t('recovery.sent', { email: sentTo })}
        </Notice>
      ) : (
        <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
          <FormError message={form.failure?.message} />
          <TextField
            label={t('recovery.email')}
            type="email"
            autoComplete="email"
            autoFocus
            required
            spellCheck={false}
            {...form.text('email')}
          />
          <SubmitButton busy={form.busy} testId="recovery-submit">
            {t('recovery.submit')}
          </SubmitButton>
        </form>
      )}
    </AuthPanel>
  );
}
