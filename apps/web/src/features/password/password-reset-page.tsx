import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { runCommand } from '../../api/client';
import { localFailure, ruleMessage, validateArgs } from '../../api/errors';
import { AuthPanel, linkClass, SubmitButton } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { FormError, Notice, PasswordField, NewPasswordField } from '../../ui/field';
import { useForm } from '../../ui/use-form';

/** /password/reset/{token}: a new password, typed twice. */
export function PasswordResetPage() {
  const { t } = useTranslation();
  const { token = '' } = useParams();
  const form = useForm({ password: '', repeat: '' });
  const [done, setDone] = useState(false);
  usePageTitle(t('reset.title'));

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    void form.submit(async () => {
      const args = { code: token, password: form.values.password };
      const invalid = validateArgs('password.reset', args);
      if (invalid) return invalid;
      if (form.values.repeat !== form.values.password)
        return localFailure({ repeat: ruleMessage({ rule: 'passwords_match' }) });
      await runCommand('password.reset', args);
      setDone(true);
    });
  }

  // the token travels as `code`: a failure on it is a failure of the link
  const message = form.failure?.fields.code ? t('reset.bad_link') : form.failure?.message;

  return (
    <AuthPanel
      title={t('reset.title')}
      subtitle={done ? undefined : t('reset.subtitle')}
      testId="password-reset"
      footer={
        <Link to="/login" className={linkClass} data-testid="to-login">
          {done ? t('reset.sign_in') : t('recovery.back_to_login')}
        </Link>
      }
    >
      {done ? (
        <Notice kind="success" testId="reset-done">
          {t('reset.done')}
        </Notice>
      ) : (
        <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
          <FormError message={message} />
          <NewPasswordField label={t('reset.password')} autoFocus {...form.text('password')} />
          <PasswordField
            label={t('reset.repeat')}
            autoComplete="new-password"
            required
            {...form.text('repeat')}
          />
          <SubmitButton busy={form.busy} testId="reset-submit">
            {t('reset.submit')}
          </SubmitButton>
        </form>
      )}
    </AuthPanel>
  );
}
