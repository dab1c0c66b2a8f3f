import { useEffect, useState, type ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type CommandId } from '@lintel/commands';
import { runCommand, sessionStore } from '../../api/client';
import { useCan } from '../../access/use-can';
import { dataVersionAtom } from '../../commands/execute';
import { formatCount } from '../../resources/format';
import { focusRing } from '../../ui/button';
import { Icon, type IconName } from '../../ui/icon';
import { linkClass } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { profileAtom, useProjects, useSession } from '../../session/session';

function Row({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[9rem_1fr] gap-3 px-3 py-1.5 text-sm even:bg-slate-50/70">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 truncate text-slate-900" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

function Panel({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white" aria-label={title}>
      <header className="flex h-9 items-center justify-between border-b border-slate-200 px-3">
        <h2 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">{title}</h2>
        {action}
      </header>
      <dl className="py-1">{children}</dl>
    </section>
  );
}

const COUNTED: {
  id: string;
  list: CommandId;
  path: string;
  titleKey: 'users.title' | 'groups.title' | 'roles.title';
  icon: IconName;
}[] = [
  { id: 'users', list: 'user.list', path: '/users', titleKey: 'users.title', icon: 'users' },
  { id: 'groups', list: 'group.list', path: '/groups', titleKey: 'groups.title', icon: 'building' },
  { id: 'roles', list: 'role.list', path: '/roles', titleKey: 'roles.title', icon: 'shield' },
];

/** How many rows of a family the user may see (the list's `meta.total`), or null while it loads. */
function useTotal(list: CommandId, enabled: boolean): number | null | 'failed' {
  const version = useAtomValue(dataVersionAtom);
  const [total, setTotal] = useState<number | null | 'failed'>(null);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    runCommand(list as 'user.list', { limit: 1 })
      .then((r) => live && setTotal(r.meta.total))
      .catch(() => live && setTotal('failed'));
    return () => {
      live = false;
    };
  }, [list, enabled, version]);
  return total;
}

function CountCard({ item }: { item: (typeof COUNTED)[number] }) {
  const { t, i18n } = useTranslation();
  const total = useTotal(item.list, true);
  return (
    <Link
      to={item.path}
      data-testid={`count-${item.id}`}
      className={`flex items-center gap-3 rounded-lg border border-slate-200 bg-white px-4 py-3 hover:border-blue-300 hover:bg-blue-50/40 ${focusRing}`}
    >
      <span className="flex size-9 items-center justify-center rounded-md bg-slate-100 text-slate-600">
        <Icon name={item.icon} className="size-5" />
      </span>
      <span className="min-w-0">
        <span className="block text-xs text-slate-500">{t(item.titleKey)}</span>
        <span
          className="block text-xl font-semibold text-slate-900 tabular-nums"
          data-testid={`count-${item.id}-value`}
        >
          {total === null
            ? '…'
            : total === 'failed'
              ? '—'
              : formatCount(total, i18n.resolvedLanguage ?? 'en')}
        </span>
      </span>
    </Link>
  );
}

/** /home: the dashboard: counts of what the user may see, who is signed in, and where. */
export function HomePage() {
  const { t } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const session = useSession();
  const projects = useProjects();
  const can = useCan();
  usePageTitle(t('home.title'));
  const counted = COUNTED.filter((c) => can(getCommand(c.list).gates).can);
  if (!profile || !session) return null;

  const many = (projects?.sessions.length ?? 0) > 1;
  const none = <span className="text-slate-400">{t('home.none')}</span>;

  return (
    <div className="max-w-5xl space-y-4">
      <p className="text-sm text-slate-600" data-testid="home-greeting">
        {t('home.signed_in_as')} <strong className="font-semibold text-slate-900">{profile.name}</strong>{' '}
        <span className="text-slate-500">({profile.login})</span> · {t('home.in_project')}{' '}
        <strong className="font-semibold text-slate-900">{profile.project.name}</strong>
      </p>
      {counted.length > 0 && (
        <div className="grid gap-3 sm:grid-cols-3" data-testid="home-counts">
          {counted.map((c) => (
            <CountCard key={c.id} item={c} />
          ))}
        </div>
      )}
      <div className="grid items-start gap-4 lg:grid-cols-2">
        <Panel title={t('home.account')}>
          <Row label={t('home.name')} testId="home-name">
            {profile.name}
          </Row>
          <Row label={t('home.login')} testId="home-login">
            {profile.login}
          </Row>
          <Row label={t('home.email')}>{profile.email ?? none}</Row>
          <Row label={t('home.role')} testId="home-role">
            {profile.role.name}
          </Row>
          <Row label={t('home.groups')}>
            {profile.domains.length ? profile.domains.map((d) => d.name).join(', ') : none}
          </Row>
          <Row label={t('home.language')}>{t(`language.${profile.locale}`)}</Row>
        </Panel>
        <Panel
          title={t('home.project')}
          action={
            many && (
              <Link to="/choose-project" className={`${linkClass} text-xs`}>
                {t('user_menu.switch_project')}
              </Link>
            )
          }
        >
          <Row label={t('home.project_name')} testId="home-project">
            {profile.project.name}
          </Row>
          <Row label={t('home.project_uid')}>
            <code className="font-mono text-xs">{profile.project.uid}</code>
          </Row>
          <Row label={t('home.project_description')}>{profile.project.description || none}</Row>
          <Row label={t('home.session_kept')}>
            {sessionStore.remember === 'infinity' ? t('home.kept_infinity') : t('home.kept_session')}
          </Row>
        </Panel>
      </div>
    </div>
  );
}
