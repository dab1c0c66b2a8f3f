/**
 * A page with nothing but the users table, for the scroll benchmark and the table's browser test. It runs
 * the console's own code (i18n, session store, API client, command registry, shortcuts) against a real
 * server; the session is the one the console keeps in sessionStorage (`lintel.session`).
 */
import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Provider, useSetAtom } from 'jotai';
import { HotkeysProvider } from 'react-hotkeys-hook';
import { BrowserRouter } from 'react-router';
import { userResource, type User } from '@lintel/commands';
import { applyLocale, isLocale } from '../../../apps/web/src/i18n';
import { runCommand } from '../../../apps/web/src/api/client';
import { profileAtom } from '../../../apps/web/src/session/session';
import { appStore } from '../../../apps/web/src/store';
import { ResourceTable, type BulkAction } from '../../../apps/web/src/resources/resource-table';
import './styles.css';

declare global {
  interface Window {
    /** what the browser test reads back */
    __harness: { opened: User[]; exported: unknown[] };
  }
}
window.__harness = { opened: [], exported: [] };

const params = new URLSearchParams(window.location.search);
const lang = params.get('lang');
if (isLocale(lang)) void applyLocale(lang);

function Harness() {
  const setProfile = useSetAtom(profileAtom);
  const [opened, setOpened] = useState<User | null>(null);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    runCommand('profile.get', {}).then(setProfile, () => undefined);
  }, [setProfile]);
  const bulk = useMemo<BulkAction[]>(
    () => [
      {
        id: 'delete',
        labelKey: 'table.bulk.delete',
        danger: true,
        run: async (ids) => {
          await runCommand('user.delete_all', { items: ids });
        },
      },
    ],
    [],
  );
  return (
    <div className="flex h-dvh flex-col bg-slate-50">
      <header className="flex h-12 shrink-0 items-center gap-3 border-b border-slate-200 bg-white px-4">
        <h1 className="text-[15px] font-semibold text-slate-900">Users</h1>
        <span className="text-xs text-slate-500" data-testid="opened">
          {opened ? `opened #${opened.id} ${opened.login}` : ''}
        </span>
      </header>
      <main className="min-h-0 flex-1 p-3">
        <ResourceTable<User>
          resource={userResource}
          storageKey={params.get('storage') ?? 'harness-users'}
          refreshKey={refresh}
          bulkActions={bulk}
          onOpen={(row) => {
            window.__harness.opened.push(row);
            setOpened(row);
          }}
          onExport={(q) => window.__harness.exported.push(q)}
          toolbar={
            <button
              type="button"
              onClick={() => setRefresh((n) => n + 1)}
              className="h-7 rounded-md bg-blue-700 px-2.5 text-xs font-medium text-white hover:bg-blue-800"
            >
              Add user
            </button>
          }
        />
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Provider store={appStore}>
      <HotkeysProvider>
        {/* in a router, as the console's tables are: a table is made again on a navigation of the router's */}
        <BrowserRouter>
          <Harness />
        </BrowserRouter>
      </HotkeysProvider>
    </Provider>
  </StrictMode>,
);
