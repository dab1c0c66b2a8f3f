import { useEffect, useId, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { SelfRegistrationUserTypes, type CodeInfo } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError, validateArgs } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { AuthPanel, linkClass, SubmitButton } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { useServerInfo } from '../../layout/server-info';
import { startSession } from '../../session/session';
import { Button, focusRing } from '../../ui/button';
import { FormError, Notice, TextField, Loading, NewPasswordField } from '../../ui/field';
import { Icon } from '../../ui/icon';
import { useForm } from '../../ui/use-form';

type UserType = (typeof SelfRegistrationUserTypes)[number];

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

/** /self-registration: a dealer/installer or a private client registers an object. */
function SelfRegistrationForm() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const typeError = useId();
  const info = useServerInfo();
  const form = useForm({
    user_name: '',
    user_email: '',
    user_type: 'installer' as UserType,
    object_name: '',
    user_password: '',
  });

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    void form.submit(async () => {
      const args = { ...form.values };
      const invalid = validateArgs('self_registration.create', args);
      if (invalid) return invalid;
      const started = await runCommand('self_registration.create', args);
      navigate(`/self-registration/${encodeURIComponent(started.token)}`);
    });
  }

  const typeFailure = form.failure?.fields.user_type;

  return (
    <AuthPanel
      title={t('self_registration.title')}
      subtitle={t('self_registration.subtitle')}
      footer={<BackToLogin />}
      wide
      testId="self-registration"
    >
      {info && !info.self_registration_open ? (
        <Notice kind="info" testId="self-registration-closed">
          {t('self_registration.closed')}
        </Notice>
      ) : (
        <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
          <FormError message={form.failure?.message} />
          <fieldset aria-describedby={typeFailure ? typeError : undefined}>
            <legend className="mb-1 text-xs font-medium text-slate-700">
              {t('self_registration.user_type')}
            </legend>
            <div className="grid grid-cols-2 gap-2">
              {SelfRegistrationUserTypes.map((type) => (
                <label
                  key={type}
                  className={`flex cursor-pointer items-center gap-2 rounded-md border px-2.5 py-1.5 text-sm has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-blue-600 ${
                    form.values.user_type === type
                      ? 'border-blue-600 bg-blue-50 text-blue-900'
                      : 'border-slate-300 text-slate-700 hover:bg-slate-50'
                  }`}
                >
                  <input
                    type="radio"
                    name="user_type"
                    value={type}
                    data-testid={`user-type-${type}`}
                    checked={form.values.user_type === type}
                    onChange={() => form.set('user_type', type)}
                    className="size-3.5 accent-blue-700 outline-none"
                  />
                  {t(`self_registration.user_types.${type}`)}
                </label>
              ))}
            </div>
            {typeFailure && (
              <p id={typeError} className="mt-1 text-xs text-red-700">
                {typeFailure}
              </p>
            )}
          </fieldset>
          <div className="grid gap-3 sm:grid-cols-2">
            <TextField
              label={t('self_registration.user_name')}
              autoComplete="name"
              autoFocus
              required
              {...form.text('user_name')}
            />
            <TextField
              label={t('self_registration.user_email')}
              type="email"
              autoComplete="email"
              required
              spellCheck={false}
              {...form.text('user_email')}
            />
          </div>
          <TextField
            label={t('self_registration.object_name')}
            hint={t('self_registration.object_name_hint')}
            required
            autoComplete="organization"
            {...form.text('object_name')}
          />
          <NewPasswordField
            label={t('self_registration.user_password')}
            onGenerate={(p) => form.set('user_password', p)}
            {...form.text('user_password')}
          />
          <SubmitButton busy={form.busy} testId="self-registration-submit">
            {t('self_registration.submit')}
          </SubmitButton>
        </form>
      )}
    </AuthPanel>
  );
}

/** Seconds left until `deadline` (ms), ticking every second. */
function useCountdown(deadline: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (deadline <= Date.now()) return;
    setNow(Date.now());
    const timer = window.setInterval(() => {
      const at = Date.now();
      setNow(at);
      if (at >= deadline) window.clearInterval(timer);
    }, 1000);
    return () => window.clearInterval(timer);
  }, [deadline]);
  return Math.max(0, Math.ceil((deadline - now) / 1000));
}

function formatSeconds(s: number): string {
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** /self-registration/{token}: the e-mail confirmation code step, with a timed resend. */
function CodeStep({ token }: { token: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [info, setInfo] = useState<CodeInfo | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [deadline, setDeadline] = useState(0);
  const [resending, setResending] = useState(false);
  const left = useCountdown(deadline);
  const form = useForm({ code: '' });

  useEffect(() => {
    let live = true;
    runCommand('self_registration.info', { token })
      .then((loaded) => {
        if (!live) return;
        setInfo(loaded);
        setDeadline(Date.now() + loaded.resend_in * 1000);
      })
      .catch((err: unknown) => live && setLoadError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [token]);

  async function resend() {
    setResending(true);
    try {
      const again = await runCommand('self_registration.resend', { token });
      setDeadline(Date.now() + again.resend_in * 1000);
      pushAlert('success', t('self_registration.code_resent'));
      if (again.token !== token)
        navigate(`/self-registration/${encodeURIComponent(again.token)}`, { replace: true });
    } catch (err) {
      form.setFailure(describeError(err));
    } finally {
      setResending(false);
    }
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!info) return;
    void form.submit(async () => {
      const args = { token, code: form.values.code };
      const invalid = validateArgs('self_registration.confirm', args);
      if (invalid) return invalid;
      const reply = await runCommand('self_registration.confirm', args);
      if (startSession(reply, info.user_email, 'session') === 'none')
        return { message: t('login.no_projects'), fields: {} };
    });
  }

  return (
    <AuthPanel
      title={t('self_registration.code_title')}
      footer={<BackToLogin />}
      testId="self-registration-code"
    >
      {loadError ? (
        <div className="space-y-3">
          <FormError message={loadError} />
          <Link to="/self-registration" className={`${linkClass} text-sm`}>
            {t('self_registration.start_again')}
          </Link>
        </div>
      ) : !info ? (
        <Loading />
      ) : (
        <form ref={form.formRef} onSubmit={onSubmit} noValidate className="space-y-3">
          <p className="flex items-start gap-2 text-sm text-slate-700">
            <Icon name="mail" className="mt-0.5 size-4 shrink-0 text-slate-500" />
            <span>
              {t('self_registration.code_sent_to')}{' '}
              <strong className="font-medium break-words text-slate-900" data-testid="code-email">
                {info.user_email}
              </strong>
            </span>
          </p>
          <FormError message={form.failure?.message} />
          <TextField
            label={t('self_registration.code')}
            autoComplete="one-time-code"
            autoFocus
            required
            spellCheck={false}
            autoCapitalize="off"
            {...form.text('code')}
          />
          <div className="flex items-center gap-2">
            <Button
              type="submit"
              variant="primary"
              className="flex-1"
              busy={form.busy}
              data-testid="code-submit"
            >
              {t('self_registration.confirm')}
            </Button>
            <Button
              onClick={() => void resend()}
              disabled={left > 0}
              busy={resending}
              data-testid="code-resend"
              aria-describedby={left > 0 ? 'resend-timer' : undefined}
              className={focusRing}
            >
              {left > 0 ? (
                <span>
                  {t('self_registration.resend')}{' '}
                  <span id="resend-timer" className="tabular-nums" aria-live="off">
                    {t('self_registration.resend_in', { time: formatSeconds(left) })}
                  </span>
                </span>
              ) : (
                t('self_registration.resend')
              )}
            </Button>
          </div>
        </form>
      )}
    </AuthPanel>
  );
}

/** /self-registration/{token?} (spec part 1 §2.1, §2.4). */
export function SelfRegistrationPage() {
  const { t } = useTranslation();
  const { token } = useParams();
  usePageTitle(token ? t('self_registration.code_title') : t('self_registration.title'));
  return token ? <CodeStep key={token} token={token} /> : <SelfRegistrationForm />;
}
