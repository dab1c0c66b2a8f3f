import { useCallback, useEffect, useState } from 'react';
import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { Outlet, useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { runCommand } from '../api/client';
import { describeError } from '../api/errors';
import { pushAlert } from '../alerts/alerts';
import { profileAtom, refreshBrand, useSession } from '../session/session';
import { useLiveProfile } from '../session/realtime';
import { NotificationBell } from '../features/notifications/bell';
import { ImportantPopups } from '../features/notifications/popups';
import { useLiveNotifications } from '../features/notifications/live';
import { useCan } from '../access/use-can';
import { DialogHost } from '../commands/dialog-host';
import { openDialog } from '../commands/dialogs';
import { useShortcut } from '../keys/shortcuts';
import { Pages, type PageDef } from '../nav/pages';
import { Palette, paletteOpenAtom } from '../palette/palette';
import { Button, focusRing } from '../ui/button';
import { FormError, Loading } from '../ui/field';
import { Icon } from '../ui/icon';
import { DialerProvider } from '../features/dialer/dialer-provider';
import { DialerButton, DialerPanel } from '../features/dialer/dialer-panel';
import { Brand } from './brand';
import { Breadcrumbs } from './breadcrumbs';
import { FloatingActionArea } from './fab';
import { LicenceBanner } from './licence-banner';
import { SideMenu } from './side-menu';
import { LanguageSwitcher, reconcileLocale } from './language-switcher';
import { pageTitleAtom } from './page-title';
import { UserMenu } from './user-menu';

/** Loads the profile of the current session; the pages render once it is there. */
function useProfileLoader() {
  const session = useSession();
  const [profile, setProfile] = useAtom(profileAtom);
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const key = session ? `${session.project.id}:${session.login ?? ''}` : '';

  useEffect(() => {
    if (!key) return;
    let live = true;
    setError(null);
    runCommand('profile.get', {})
      .then(async (loaded) => {
        if (!live) return;
        setProfile(loaded);
        // the header's brand: the user's white-label, when there is one (the product's own meanwhile)
        void refreshBrand().catch(() => undefined);
        const save = await reconcileLocale(loaded.locale);
        if (save && live) {
          try {
            setProfile(await runCommand('profile.update', { locale: save }));
          } catch (err) {
            pushAlert('error', describeError(err).message);
          }
        }
      })
      .catch((err: unknown) => {
        // a 401 that could not be refreshed signs out and leaves this page by itself
        if (live) setError(describeError(err).message);
      });
    return () => {
      live = false;
    };
  }, [key, attempt, setProfile]);

  const retry = useCallback(() => setAttempt((a) => a + 1), []);
  return { profile, error, retry };
}

/** `g` then a letter opens a page (when the user may open it). */
function GoKey({ page }: { page: PageDef }) {
  const navigate = useNavigate();
  const can = useCan();
  useShortcut(`g>${page.goKey}`, () => navigate(page.path), {
    labelKey: `keys.go.${page.id}`,
    enabled: can(page.gates).can,
  });
  return null;
}

/** Keys of every signed-in screen: `?` lists the keys in force, `g` + letter goes to a page. */
function GlobalKeys() {
  useShortcut('shift+slash', () => openDialog({ kind: 'shortcuts' }), {
    labelKey: 'keys.help',
    inDialogs: true,
  });
  return (
    <>
      {Pages.filter((p) => p.goKey).map((p) => (
        <GoKey key={p.id} page={p} />
      ))}
    </>
  );
}

/** Opens the palette for those who prefer the pointer; says which key does the same. */
function PaletteButton() {
  const { t } = useTranslation();
  const setOpen = useSetAtom(paletteOpenAtom);
  const mac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
  return (
    <button
      type="button"
      onClick={() => setOpen(true)}
      data-testid="palette-button"
      className={`hidden h-8 min-w-64 shrink-0 items-center gap-2 rounded-md border border-slate-300 bg-slate-50 px-2 text-left text-sm text-slate-500 hover:bg-white lg:flex ${focusRing}`}
    >
      <Icon name="search" className="size-4 shrink-0" />
      {/* the title beside it gives way, not this label (issue 13 item 11) */}
      <span className="flex-1 whitespace-nowrap">{t('palette.open')}</span>
      <kbd className="rounded border border-slate-300 bg-white px-1 font-mono text-[10px] text-slate-500">
        {mac ? '⌘K' : 'Ctrl K'}
      </kbd>
    </button>
  );
}

/**
 * The signed-in layout of spec part 1 §2.3: side menu, top bar with title, palette, language and user menu,
 * breadcrumbs, the floating action area, alerts, and the dialogs opened from anywhere.
 */
/**
 * Ctrl/Cmd+K before the palette is there (the profile still loading): remembered, so the palette opens as
 * soon as it mounts (issue 25 item 4: the key was lost). The palette's own binding takes over once it is.
 */
function useEarlyPaletteKey(waiting: boolean) {
  const setOpen = useSetAtom(paletteOpenAtom);
  useEffect(() => {
    if (!waiting) return;
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setOpen(true);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [waiting, setOpen]);
}

export function AppLayout() {
  const { t } = useTranslation();
  const title = useAtomValue(pageTitleAtom);
  const session = useSession();
  const { profile, error, retry } = useProfileLoader();
  useEarlyPaletteKey(!profile);
  useLiveProfile();
  useLiveNotifications();

  return (
    <div className="flex h-dvh bg-slate-50 text-slate-900">
      <a
        href="#main"
        className="sr-only z-50 rounded bg-white px-3 py-2 text-sm focus:not-sr-only focus:absolute focus:top-2 focus:left-2"
      >
        {t('layout.skip_to_content')}
      </a>
      <aside
        aria-label={t('menu.label')}
        className="hidden w-[250px] shrink-0 flex-col bg-slate-900 md:flex"
        data-testid="sidebar"
      >
        <div className="flex h-12 items-center border-b border-slate-800 px-4">
          <Brand dark />
        </div>
        {profile && <SideMenu />}
        <div
          className="mt-auto border-t border-slate-800 px-4 py-2 text-[11px] text-slate-400"
          data-testid="sidebar-project"
        >
          <div className="truncate" title={session?.project.name}>
            {session?.project.name}
          </div>
        </div>
      </aside>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="flex h-12 shrink-0 items-center gap-3 border-b border-slate-200 bg-white px-4">
          <div className="md:hidden">
            <Brand />
          </div>
          <h1
            className="min-w-0 flex-1 truncate text-base font-semibold text-slate-900"
            data-testid="page-title"
          >
            {title}
          </h1>
          {profile && <PaletteButton />}
          <LanguageSwitcher />
          {profile && <DialerButton />}
          {profile && <NotificationBell />}
          <UserMenu />
        </header>
        {profile && <LicenceBanner />}
        <div className="flex min-h-0 flex-1">
          <div className="relative min-w-0 flex-1">
            <main id="main" tabIndex={-1} className="h-full overflow-y-auto px-4 pt-3 pb-20 outline-none">
              {profile ? (
                <>
                  <Breadcrumbs />
                  <Outlet />
                </>
              ) : error ? (
                <div className="max-w-md space-y-3">
                  <FormError message={error} />
                  <Button onClick={retry}>{t('layout.retry')}</Button>
                </div>
              ) : (
                <Loading />
              )}
            </main>
            {profile && <FloatingActionArea />}
          </div>
          {profile && <DialerPanel />}
        </div>
      </div>
      {profile && (
        <>
          <GlobalKeys />
          <ImportantPopups />
          <DialerProvider />
          <Palette />
          <DialogHost />
        </>
      )}
    </div>
  );
}
