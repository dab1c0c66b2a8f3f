import { useState } from 'react';
import { useAtomValue } from 'jotai';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { profileAtom, signOut, useProjects, useSession } from '../session/session';
import { focusRing } from '../ui/button';
import { Icon, Spinner } from '../ui/icon';
import { useMenuButton } from './menu-button';

export function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const letters =
    parts.length > 1 ? [parts[0]![0], parts[parts.length - 1]![0]] : [name.trim()[0], name.trim()[1]];
  return letters.filter(Boolean).join('').toUpperCase() || '?';
}

/** The user menu of the top bar: who is signed in, the profile, switching project, signing out. */
export function UserMenu() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const profile = useAtomValue(profileAtom);
  const session = useSession();
  const projects = useProjects();
  const [leaving, setLeaving] = useState(false);
  const { open, setOpen, rootRef, menuRef, menuId, onMenuKey, buttonProps } = useMenuButton();

  const name = profile?.name ?? session?.login ?? '';
  const login = profile?.login ?? session?.login ?? '';
  const canSwitch = (projects?.sessions.length ?? 0) > 1;

  async function logout() {
    setLeaving(true);
    await signOut();
    navigate('/login', { replace: true });
  }

  const itemClass = `flex w-full items-center gap-2 rounded px-2 py-1.5 text-left text-sm text-slate-700 hover:bg-slate-100 focus:bg-slate-100 ${focusRing}`;

  return (
    <div ref={rootRef} className="relative">
      <button
        {...buttonProps(() => setOpen((o) => !o))}
        data-testid="user-menu"
        className={`flex h-8 items-center gap-2 rounded-md pr-1.5 pl-1 text-sm text-slate-700 hover:bg-slate-100 ${focusRing}`}
      >
        <span
          aria-hidden="true"
          className="flex size-6 items-center justify-center rounded-full bg-slate-700 text-[11px] font-semibold text-white"
        >
          {initials(name)}
        </span>
        <span
          aria-hidden="true"
          className="hidden max-w-40 truncate font-medium sm:inline"
          data-testid="user-menu-name"
        >
          {name}
        </span>
        {/* named by its content, the name first as it shows (axe's label-content-name-mismatch) */}
        <span className="sr-only">{t('user_menu.label', { name })}</span>
        <Icon name="chevron-down" className="size-3.5 text-slate-500" />
      </button>
      {open && (
        <div
          ref={menuRef}
          id={menuId}
          role="menu"
          aria-label={t('user_menu.title')}
          onKeyDown={onMenuKey}
          className="absolute top-full right-0 z-40 mt-1 w-60 rounded-md border border-slate-200 bg-white p-1 shadow-lg"
        >
          <div className="border-b border-slate-100 px-2 pt-1 pb-2" role="none">
            <div className="truncate text-sm font-medium text-slate-900">{name}</div>
            <div className="truncate text-xs text-slate-500">{login}</div>
            {session && <div className="mt-0.5 truncate text-xs text-slate-500">{session.project.name}</div>}
          </div>
          <div className="pt-1" role="none">
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              data-testid="menu-profile"
              className={itemClass}
              onClick={() => {
                setOpen(false);
                navigate('/profile');
              }}
            >
              <Icon name="user" className="size-4 text-slate-500" />
              {t('user_menu.profile')}
            </button>
            {canSwitch && (
              <button
                type="button"
                role="menuitem"
                tabIndex={-1}
                data-testid="switch-project"
                className={itemClass}
                onClick={() => {
                  setOpen(false);
                  navigate('/choose-project');
                }}
              >
                <Icon name="swap" className="size-4 text-slate-500" />
                {t('user_menu.switch_project')}
              </button>
            )}
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              data-testid="logout"
              disabled={leaving}
              className={itemClass}
              onClick={() => void logout()}
            >
              {leaving ? (
                <Spinner className="size-4 text-slate-500" />
              ) : (
                <Icon name="logout" className="size-4 text-slate-500" />
              )}
              {t('user_menu.sign_out')}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
