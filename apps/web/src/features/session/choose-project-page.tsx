import { Link, useNavigate, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { AuthPanel, linkClass } from '../../layout/auth-layout';
import { usePageTitle } from '../../layout/page-title';
import { chooseProject, safeRedirect, useProjects, useSession } from '../../session/session';
import { focusRing } from '../../ui/button';
import { Icon } from '../../ui/icon';

/** /choose-project: the projects of the last login reply; picking one signs in with its session. */
export function ChooseProjectPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const projects = useProjects();
  const session = useSession();
  usePageTitle(t('choose_project.title'));

  const list = projects?.sessions ?? [];

  function pick(id: number) {
    if (chooseProject(id)) navigate(safeRedirect(params.get('redirect')), { replace: true });
  }

  return (
    <AuthPanel
      title={t('choose_project.title')}
      subtitle={projects ? t('choose_project.subtitle', { login: projects.login }) : undefined}
      testId="choose-project"
      footer={
        session ? (
          <Link to="/home" className={linkClass}>
            {t('choose_project.back_home')}
          </Link>
        ) : (
          <Link to="/login" className={linkClass}>
            {t('choose_project.back_to_login')}
          </Link>
        )
      }
    >
      {list.length === 0 ? (
        <p className="text-sm text-slate-600">{t('choose_project.empty')}</p>
      ) : (
        <ul className="-mx-2 divide-y divide-slate-100" aria-label={t('choose_project.list')}>
          {list.map((s) => {
            const current = session?.project.id === s.project.id;
            return (
              <li key={s.project.id}>
                <button
                  type="button"
                  onClick={() => pick(s.project.id)}
                  data-testid={`project-${s.project.id}`}
                  aria-current={current || undefined}
                  className={`group flex w-full items-center gap-3 rounded-md px-2 py-2 text-left hover:bg-slate-50 ${focusRing}`}
                >
                  <span className="flex size-8 shrink-0 items-center justify-center rounded-md bg-slate-100 text-slate-600">
                    <Icon name="building" />
                  </span>
                  <span className="min-w-0 flex-1">
                    <span className="block truncate text-sm font-medium text-slate-900">
                      {s.project.name}
                      {current && (
                        <span className="ml-2 text-xs font-normal text-emerald-700">
                          {t('choose_project.current')}
                        </span>
                      )}
                    </span>
                    {s.project.description && (
                      <span className="block truncate text-xs text-slate-500">{s.project.description}</span>
                    )}
                  </span>
                  <Icon name="chevron-right" className="size-4 text-slate-400 group-hover:text-slate-600" />
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </AuthPanel>
  );
}
