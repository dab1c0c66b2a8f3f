/**
 * The dialer's call interception panel (issue 23 item 4; spec part 1 §2.5 "Call interception panel", §3
 * "Interception settings", §4 "Interception"): only with the intercept permission; the status, the groups the
 * concierge may choose (`userGroups`) as checkboxes with a search by name above them (as the spec's pickers),
 * start (needs a group: `interception_group_required`) and stop; the groups are locked while active (the search
 * still filters them). A group ticked and then filtered out stays chosen. The settings live in atoms, so the panel, the keys and the
 * palette's commands act on the same state (`useInterception`).
 */
import { useCallback, useEffect, useState } from 'react';
import { atom, useAtom } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, type InterceptionSettings } from '@lintel/commands';
import { searchByName } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { Button, focusRing } from '../../ui/button';
import { Spinner } from '../../ui/icon';
import { i18next } from '../../i18n';
import { SearchField } from './dialer-directory';

const tr = (key: string, options?: Record<string, unknown>) =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, options);

/** The server's settings once read (null before). */
const settingsAtom = atom<InterceptionSettings | null>(null);
/** The groups ticked while inactive (null: the settings' groups, kept from the last start). */
const chosenAtom = atom<number[] | null>(null);
const busyAtom = atom(false);

/** Whether the signed-in user may intercept (the command's gates: the permission and the `sip` licence). */
export function useMayIntercept(): boolean {
  const can = useCan();
  return can(getCommand('call.interception').gates).can;
}

export function useInterception() {
  const may = useMayIntercept();
  const [settings, setSettings] = useAtom(settingsAtom);
  const [chosenOwn, setChosen] = useAtom(chosenAtom);
  const [busy, setBusy] = useAtom(busyAtom);
  const chosen = chosenOwn ?? settings?.groups ?? [];

  const load = useCallback(async () => {
    try {
      setSettings(await runCommand('call.interception', {}));
    } catch (err) {
      pushAlert('error', describeError(err, 'call.interception').message);
    }
  }, [setSettings]);

  const send = async (active: boolean) => {
    if (!may || busy) return;
    if (active && chosen.length === 0) {
      // the spec's warning, before asking the server (which refuses it the same way)
      pushAlert('warning', tr('errors:http.interception_group_required'));
      return;
    }
    setBusy(true);
    try {
      // stopping sends no groups: the server keeps them for the next start
      const next = await runCommand('call.intercept', {
        is_active: active,
        domains: active ? chosen : [],
      });
      setSettings(next);
      setChosen(null);
      pushAlert('success', tr(active ? 'dialer.interception.started' : 'dialer.interception.stopped'));
    } catch (err) {
      pushAlert('error', describeError(err, 'call.intercept').message);
    } finally {
      setBusy(false);
    }
  };

  const toggleGroup = (id: number) => {
    if (settings?.isActive) return;
    setChosen(chosen.includes(id) ? chosen.filter((g) => g !== id) : [...chosen, id]);
  };

  return {
    may,
    settings,
    chosen,
    busy,
    load,
    toggleGroup,
    start: () => send(true),
    stop: () => send(false),
    toggle: () => send(!settings?.isActive),
  };
}

/** Reads the settings once the dialer shows for a user who may intercept. */
export function useInterceptionLoader(): void {
  const { may, load } = useInterception();
  useEffect(() => {
    if (may) void load();
  }, [may, load]);
}

/** The panel, the dialer's "Interception" tab. */
export function InterceptionTab() {
  const { t } = useTranslation();
  const { settings, chosen, busy, toggleGroup, start, stop } = useInterception();
  const [query, setQuery] = useState('');
  if (!settings) {
    return (
      <div className="flex justify-center py-4">
        <Spinner className="size-4" />
      </div>
    );
  }
  const active = settings.isActive;
  const shown = searchByName(settings.userGroups, query);
  return (
    <div className="space-y-2" data-testid="interception-panel">
      <p
        data-testid="interception-status"
        data-active={active ? 'true' : 'false'}
        className={`rounded-md px-2 py-1.5 text-xs font-medium ${active ? 'bg-green-100 text-green-800' : 'bg-slate-100 text-slate-700'}`}
      >
        {t(active ? 'dialer.interception.active' : 'dialer.interception.inactive')}
      </p>
      {settings.userGroups.length > 0 && (
        <SearchField
          value={query}
          onChange={setQuery}
          label={t('dialer.interception.search')}
          testId="interception-search"
          onFocusChange={() => {}}
          controls="dialer-interception-groups"
        />
      )}
      <fieldset disabled={active || busy} className="space-y-1">
        <legend className="mb-1 text-[11px] font-semibold tracking-wide text-slate-500 uppercase">
          {t('dialer.interception.groups')}
        </legend>
        {settings.userGroups.length === 0 ? (
          <p className="text-sm text-slate-500">{t('dialer.interception.no_groups')}</p>
        ) : shown.length === 0 ? (
          <p className="text-sm text-slate-500" data-testid="interception-no-match">
            {t('dialer.interception.no_match')}
          </p>
        ) : (
          <ul
            id="dialer-interception-groups"
            aria-label={t('dialer.interception.groups')}
            className="max-h-48 space-y-0.5 overflow-y-auto"
          >
            {shown.map((g) => (
              <li key={g.id}>
                <label className="flex items-center gap-2 rounded px-1 py-0.5 text-sm text-slate-800 hover:bg-slate-100">
                  <input
                    type="checkbox"
                    checked={chosen.includes(g.id)}
                    onChange={() => toggleGroup(g.id)}
                    data-testid={`interception-group-${g.id}`}
                    className={focusRing}
                  />
                  <span className="truncate">{g.name}</span>
                </label>
              </li>
            ))}
          </ul>
        )}
        {active && <p className="text-xs text-slate-500">{t('dialer.interception.locked')}</p>}
      </fieldset>
      <div className="flex justify-end">
        {active ? (
          <Button size="sm" onClick={() => void stop()} disabled={busy} data-testid="interception-stop">
            {t('dialer.interception.stop')}
          </Button>
        ) : (
          <Button
            size="sm"
            variant="primary"
            onClick={() => void start()}
            disabled={busy}
            data-testid="interception-start"
          >
            {t('dialer.interception.start')}
          </Button>
        )}
      </div>
    </div>
  );
}
