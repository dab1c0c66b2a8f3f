import { useEffect, type FormEvent } from 'react';
import { useAtom } from 'jotai';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { sessionStore, runCommand } from '../../api/client';
import { validateArgs } from '../../api/errors';
import { clearAlerts } from '../../alerts/alerts';
import { AuthPanel, linkClass, SubmitButton } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { useServerInfo } from '../../layout/server-info';
import { acknowledgeSignOut, signedOutReasonAtom, startSession } from '../../session/session';
import { focusRing } from '../../ui/button';
import { FormError, Notice, PasswordField, TextField } from '../../ui/field';
import { useForm } from '../../ui/use-form';

/** /login (spec part 1 §2.1, §4 "Session"). */
export function LoginPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const info = useServerInfo();
  const [reason, setReason] = useAtom(signedOutReasonAtom);
  const form = useForm({ login: '', password: '', remember: sessionStore.remember === 'infinity' });
  usePageTitle(t('login.title'));

  // Opening the login page clears alerts (spec part 1 §2.2).
  useEffect(() => {
    clearAlerts();
    acknowledgeSignOut();
  }, []);

  const redirect = params.get('redirect');

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setReason(null);
    void form.submit(async () => {
      const args = { login: form.values.login, password: form.values.password };
      const invalid = validateArgs('session.login', args);
      if (invalid) return invalid;
      const reply = await runCommand('session.login', args);
      const outcome = startSession(reply, args.login.trim(), form.values.remember ? 'infinity' : 'session');
      if (outcome === 'none') return { message: t('login.no_projects'), fields: {} };
      if (outcome === 'choose') {
        navigate(`/choose-project${redirect ? `?redirect=${encodeURIComponent(redirect)}` : ''}`);
      }
      // signed in: the signed-out-only guard takes the user to ?redirect= or /home
    });
  }

  return (
    <AuthPanel
      title={t('login.title')}
      subtitle={t('login.subtitle')}
      testId="login-panel"
      footer={
        (info?.registration_open || info?.self_registration_open) && (
          <div className="flex flex-wrap items-center justify-between gap-x-4 gap-y-1">
            {info.registration_open && (
              <Link to="/registration" className={linkClass}>
                {t('login.create_account')}
              </Link>
            )}
            {info.self_registration_open && (
              <Link to="/self-registration" className={linkClass}>
                {t('login.register_object')}
              </Link>
            )}
          </div>
        )
      }
    >
      <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
        {reason === 'expired' && <Notice kind="info">{t('login.session_expired')}</Notice>}
        <FormError message={form.failure?.message} />
        <TextField
          label={t('login.login')}
          autoComplete="username"
          autoFocus
          required
          autoCapitalize="off"
          spellCheck={false}
          {...form.text('login')}
        />
        <div>
          <PasswordField
            label={t('login.password')}
            autoComplete="current-password"
            required
            {...form.text('password')}
          />
          <div className="mt-1 text-right text-xs">
            <Link to="/password/recovery" className={linkClass}>
              {t('login.forgot_password')}
            </Link>
          </div>
        </div>
        <label className="flex w-fit cursor-pointer items-center gap-2 text-sm text-slate-700">
          <input
            type="checkbox"
            name="remember"
            data-testid="field-remember"
            checked={form.values.remember}
            onChange={(e) => form.set('remember', e.target.checked)}
            className={`size-4 rounded border-slate-300 accent-blue-700 ${focusRing}`}
          />
          {t('login.remember')}
        </label>
        <SubmitButton busy={form.busy} testId="login-submit">
          {t('login.submit')}
        </SubmitButton>
      </form>
    </AuthPanel>
  );
}
