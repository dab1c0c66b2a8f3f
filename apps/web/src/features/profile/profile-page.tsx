import { useMemo, type ReactNode } from 'react';
import { useAtom } from 'jotai';
import { useTranslation } from 'react-i18next';
import type { Profile } from '@lintel/core';
import { pushAlert } from '../../alerts/alerts';
import { CommandForm } from '../../forms/command-form';
import { FormPage } from '../../forms/form-page';
import { useCommandForm } from '../../forms/use-command-form';
import { applyLocale } from '../../i18n';
import { usePageTitle } from '../../layout/page-title';
import { profileAtom } from '../../session/session';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/field';
import { useNavigate } from 'react-router';

function Panel({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white" aria-label={title}>
      <h2 className="border-b border-slate-200 px-3 py-2 text-xs font-semibold tracking-wide text-slate-600 uppercase">
        {title}
      </h2>
      <div className="p-3">{children}</div>
    </section>
  );
}

/** Changing one's own password: current and new (the server ends the other sessions). */
function PasswordPanel() {
  const { t } = useTranslation();
  const form = useCommandForm('profile.password');
  return (
    <Panel title={t('profile.password_title')}>
      <form
        noValidate
        data-testid="profile-password"
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          void form.submit().then((r) => {
            if (r === null) return;
            pushAlert('success', t('profile.password_changed'));
            form.setValues({ old: '', new: '' });
          });
        }}
      >
        <FormError message={form.failure?.message} />
        <CommandForm
          commandId="profile.password"
          fields={form.fields}
          values={form.values}
          onChange={form.set}
          errors={form.failure?.fields ?? {}}
        />
        <Button type="submit" busy={form.busy} data-testid="profile-password-submit">
          {t('profile.change_password')}
        </Button>
      </form>
    </Panel>
  );
}

/** /profile: name, language, profile settings (time format and zone, phone, address), password. */
export function ProfilePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [profile, setProfile] = useAtom(profileAtom);
  usePageTitle(t('profile.title'));
  const options = useMemo(() => ({ record: profile as unknown as Record<string, unknown> }), [profile]);
  if (!profile) return null;

  const aside = (
    <>
      <Panel title={t('profile.account')}>
        <dl className="space-y-1 text-xs">
          <div className="flex gap-2">
            <dt className="w-20 text-slate-500">{t('home.login')}</dt>
            <dd className="truncate" data-testid="profile-login">
              {profile.login}
            </dd>
          </div>
          <div className="flex gap-2">
            <dt className="w-20 text-slate-500">{t('home.email')}</dt>
            <dd className="truncate">{profile.email ?? '—'}</dd>
          </div>
          <div className="flex gap-2">
            <dt className="w-20 text-slate-500">{t('home.role')}</dt>
            <dd className="truncate">{profile.role.name}</dd>
          </div>
          <div className="flex gap-2">
            <dt className="w-20 text-slate-500">{t('home.groups')}</dt>
            <dd className="truncate">{profile.domains.map((d) => d.name).join(', ') || '—'}</dd>
          </div>
        </dl>
      </Panel>
      <PasswordPanel />
    </>
  );

  return (
    <FormPage
      commandId="profile.update"
      options={options}
      aside={aside}
      doneMessage={t('profile.saved')}
      onCancel={() => navigate(-1)}
      onDone={(result) => {
        const next = result as Profile;
        setProfile(next);
        void applyLocale(next.locale);
      }}
    />
  );
}
