import { useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { AuthPanel, linkClass } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { FormError, Notice } from '../../ui/field';
import { Spinner } from '../../ui/icon';

type State = { kind: 'working' } | { kind: 'done' } | { kind: 'failed'; message: string };

/** /registration/confirm/{token}: confirms the account, then says how it went. */
export function RegistrationConfirmPage() {
  const { t } = useTranslation();
  const { token = '' } = useParams();
  const [state, setState] = useState<State>({ kind: 'working' });
  const sent = useRef<string | null>(null);
  usePageTitle(t('confirm.title'));

  useEffect(() => {
    // once per token, also under StrictMode's double effects: a confirmation token works once
    if (sent.current === token) return;
    sent.current = token;
    setState({ kind: 'working' });
    runCommand('registration.confirm', { token })
      .then(() => setState({ kind: 'done' }))
      .catch((err: unknown) => setState({ kind: 'failed', message: describeError(err).message }));
  }, [token]);

  return (
    <AuthPanel
      title={t('confirm.title')}
      testId="registration-confirm"
      footer={
        state.kind !== 'working' && (
          <Link to="/login" className={linkClass} data-testid="to-login">
            {t('confirm.to_login')}
          </Link>
        )
      }
    >
      {state.kind === 'working' && (
        <p role="status" className="flex items-center gap-2 text-sm text-slate-500">
          <Spinner />
          {t('confirm.working')}
        </p>
      )}
      {state.kind === 'done' && <Notice kind="success">{t('confirm.done')}</Notice>}
      {state.kind === 'failed' && <FormError message={state.message} />}
    </AuthPanel>
  );
}
