import { useAtomValue } from 'jotai';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type CommandId } from '@lintel/commands';
import { sessionStore } from '../../api/client';
import { useCan } from '../../access/use-can';
import { linkClass } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { profileAtom, useProjects, useSession } from '../../session/session';
import { ActivityCard } from './activity-card';
import { Panel, Row } from './card';
import { COUNTED, CountCard } from './count-card';
import { DeviceChartsCard } from './device-charts-card';
import { DevicesCard } from './devices-card';
import { LicenceCard } from './licence-card';
import { SignInsCard } from './sign-ins-card';

const gatesOf = (id: CommandId) => getCommand(id).gates;

/**
 * /home: the dashboard: what an administrator checks first — the counts, who signed in lately, what
 * changed, and the licence's state and days left; each card links into the table behind it, filtered, and
 * is shown only to those whose permissions (and licence) allow its command. Then who is signed in, and where.
 */
export function HomePage() {
  const { t } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const session = useSession();
  const projects = useProjects();
  const can = useCan();
  usePageTitle(t('home.title'));
  const counted = COUNTED.filter((c) => can(getCommand(c.list).gates).can);
  const audit = can(gatesOf('audit_event.list')).can;
  const licence = can(gatesOf('licence.list')).can;
  const devices = can(gatesOf('device.list')).can;
  const deviceTasks = can(gatesOf('device.tasks')).can;
  const deviceEvents = can(gatesOf('device_event.list')).can;
  if (!profile || !session) return null;

  const many = (projects?.sessions.length ?? 0) > 1;
  const none = <span className="text-slate-400">{t('home.none')}</span>;

  return (
    <div className="max-w-6xl space-y-4">
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
      {(audit || licence || devices) && (
        <div className="grid gap-4 lg:grid-cols-3" data-testid="home-watch">
          {audit && <SignInsCard />}
          {audit && <ActivityCard />}
          {licence && <LicenceCard />}
          {devices && <DevicesCard tasks={deviceTasks} events={deviceEvents} />}
        </div>
      )}
      {devices && <DeviceChartsCard />}
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
