import { useEffect, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { type InviteInfo } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError, validateArgs } from '../../api/errors';
import { AuthPanel, linkClass, SubmitButton } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { useServerInfo } from '../../layout/server-info';
import { startSession } from '../../session/session';
import { FormError, Notice, TextField, Loading, NewPasswordField } from '../../ui/field';
import { useForm } from '../../ui/use-form';

function BackToLogin() {
  const { t } = useTranslation();
  return (
    <span>
      {t('registration.have_account')}{' '}
      <Link to="/login" className={linkClass}>
        {t('registration.sign_in')}
      </Link>
    </span>
  );
}

/** /registration: open registration with name, login and password; signs in on success. */
function SimpleRegistration() {
  const { t } = useTranslation();
  const form = useForm({ name: '', login: '', password: '' });
  const info = useServerInfo();

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    void form.submit(async () => {
      const args = { name: form.values.name, login: form.values.login, password: form.values.password };
      const invalid = validateArgs('registration.register', args);
      if (invalid) return invalid;
      const reply = await runCommand('registration.register', args);
      if (startSession(reply, args.login.trim(), 'session') === 'none')
        return { message: t('login.no_projects'), fields: {} };
      // signed in: the signed-out-only guard moves on to /home
    });
  }

  return (
    <AuthPanel
      title={t('registration.title')}
      subtitle={t('registration.subtitle')}
      footer={<BackToLogin />}
      testId="registration"
    >
      {info && !info.registration_open ? (
        <Notice kind="info" testId="registration-closed">
          {t('registration.closed')}
        </Notice>
      ) : (
        <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
          <FormError message={form.failure?.message} />
          <TextField
            label={t('registration.name')}
            autoComplete="name"
            autoFocus
            required
            {...form.text('name')}
          />
          <TextField
            label={t('registration.login')}
            autoComplete="username"
            required
            autoCapitalize="off"
            spellCheck={false}
            hint={t('registration.login_hint')}
            {...form.text('login')}
          />
          <NewPasswordField
            label={t('registration.password')}
            onGenerate={(p) => form.set('password', p)}
            {...form.text('password')}
          />
          <SubmitButton busy={form.busy} testId="registration-submit">
            {t('registration.submit')}
          </SubmitButton>
        </form>
      )}
    </AuthPanel>
  );
}

/** /registration/{token}: an invitation; the invited user sets a password and is signed in. */
function Invitation({ token }: { token: string }) {
  const { t } = useTranslation();
  const [invite, setInvite] = useState<InviteInfo | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const form = useForm({ password: '' });

  useEffect(() => {
    let live = true;
    runCommand('registration.invite_info', { token })
      .then((info) => live && setInvite(info))
      .catch((err: unknown) => live && setLoadError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [token]);

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!invite) return;
    void form.submit(async () => {
      const args = { token, password: form.values.password };
      const invalid = validateArgs('registration.invite_attempt', args);
      if (invalid) return invalid;
      const reply = await runCommand('registration.invite_attempt', args);
      if (startSession(reply, invite.login, 'session') === 'none')
        return { message: t('login.no_projects'), fields: {} };
    });
  }

  return (
    <AuthPanel
      title={t('invitation.title')}
      subtitle={t('invitation.subtitle')}
      footer={<BackToLogin />}
      testId="invitation"
    >
      {loadError ? (
        <FormError message={loadError} />
      ) : !invite ? (
        <Loading />
      ) : (
        <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
          <FormError message={form.failure?.message} />
          <TextField
            label={t('registration.name')}
            name="name"
            value={invite.name}
            onValue={() => {}}
            readOnly
          />
          <TextField
            label={t('registration.login')}
            name="login"
            value={invite.login}
            onValue={() => {}}
            readOnly
            autoComplete="username"
          />
          {invite.email && (
            <TextField
              label={t('registration.email')}
              name="email"
              value={invite.email}
              onValue={() => {}}
              readOnly
            />
          )}
          <NewPasswordField
            label={t('invitation.password')}
            autoFocus
            onGenerate={(p) => form.set('password', p)}
            {...form.text('password')}
          />
          <SubmitButton busy={form.busy} testId="invitation-submit">
            {t('invitation.submit')}
          </SubmitButton>
        </form>
      )}
    </AuthPanel>
  );
}

/** /registration/{token?} (spec part 1 §2.1). */
export function RegistrationPage() {
  const { t } = useTranslation();
  const { token } = useParams();
  usePageTitle(token ? t('invitation.title') : t('registration.title'));
  return token ? <Invitation key={token} token={token} /> : <SimpleRegistration />;
}
