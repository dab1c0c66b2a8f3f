import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type RefObject,
} from 'react';
import { atom, useAtom, useAtomValue } from 'jotai';
import { Command } from 'cmdk';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { Locales } from '@lintel/core';
import { getCommand, resources, type CommandId } from '@lintel/commands';
import { familyIcons, searchedFamilies } from '../families/family-pages';
import { evaluateGates } from '../access/gates';
import { holderOf } from '../access/use-can';
import { recentItems, rememberRecent, type RecentItem } from '../commands/recent';
import { EDIT_PAGES, startCommand } from '../commands/start';
import { runnableCommands } from '../commands/runnable';
import { commandTitle } from '../commands/titles';
import { nounOf } from '../forms/fields';
import type { Family } from '../forms/schema';
import { i18next } from '../i18n';
import { useShortcut } from '../keys/shortcuts';
import { Pages } from '../nav/pages';
import { searchFamily } from '../pickers/entity-picker';
import { profileAtom } from '../session/session';
import { openCommandForm } from '../commands/dialogs';
import { pageActionsAtom } from './page-actions';
import { Icon, Spinner, type IconName } from '../ui/icon';
import { byRisk, parseEntityQuery, rankWithFound, type EntityWords } from './search';

export const paletteOpenAtom = atom(false);

interface Entry {
  key: string;
  kind: 'command' | 'page' | 'entity' | 'action';
  titles: string[];
  keywords?: string[];
  hint: string;
  /** a row's login or parent, to tell two rows of one name apart */
  detail?: string;
  icon: IconName;
  run: () => void;
}

const tr = (key: string, lng?: string): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(
    key,
    lng ? { lng } : undefined,
  );

/** The interface language first, then the others. */
const languages = () => {
  const current = i18next.resolvedLanguage ?? 'en';
  return [current, ...Locales.filter((l) => l !== current)];
};

/** Each family's icon and whether the palette finds its rows by name: from the families' declarations. */
const FAMILY_ICON: Record<string, IconName> = familyIcons(resources);
const SEARCHED = searchedFamilies(resources) as readonly Family[];

/**
 * A family's palette text: `palette.<what>.<noun>` of the web namespace, else the family's own page texts
 * (`commands:pages.<noun>.title` and `.words`), so a new family needs no web locale keys.
 */
function familyKey(noun: string, what: 'family' | 'words'): string {
  const own = `palette.${what}.${noun}`;
  if (i18next.exists(own)) return own;
  const page = `commands:pages.${noun}.${what === 'family' ? 'title' : 'words'}`;
  return i18next.exists(page) ? page : own;
}

function entityWords(): EntityWords {
  const split = (key: string) =>
    Locales.flatMap((lng) =>
      tr(key, lng)
        .split(',')
        .map((w) => w.trim())
        .filter(Boolean),
    )
      // longer words first: "группу" before "групп"
      .sort((a, b) => b.length - a.length);
  return {
    open: split('palette.words.open'),
    // `palette.words.<noun>`: the words that name each family in every language
    families: Object.fromEntries(
      resources.map((r) => [r.noun, split(familyKey(r.noun, 'words'))]),
    ) as unknown as EntityWords['families'],
  };
}

/**
 * The palette's list. It stays mounted while the palette is closed (display: none), so opening costs no
 * rendering: its props do not change when it opens (a re-render of its ~270 entries cost 70 ms of the main
 * thread at every Ctrl+K). What changes between two openings (the query, recent items) is reset when it
 * closes (`closings` counts the closings).
 */
const PaletteContent = memo(function PaletteContent({
  closings,
  close,
  resetRef,
}: {
  closings: number;
  close: () => void;
  /** empties the query: each opening by Ctrl+K calls it (see `toggle`) */
  resetRef: RefObject<(() => void) | null>;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const profile = useAtomValue(profileAtom);
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<Entry[]>([]);
  const [searching, setSearching] = useState(false);
  const holder = holderOf(profile);
  const lang = i18next.resolvedLanguage;
  const pageActions = useAtomValue(pageActionsAtom);

  // closed: start the next opening empty, with the recent items of this one first
  useEffect(() => setQuery(''), [closings]);
  useLayoutEffect(() => {
    resetRef.current = () => setQuery('');
  }, [resetRef]);

  const go = (fn: () => void) => {
    close();
    fn();
  };

  const { commands, pages } = useMemo(() => {
    const lngs = languages();
    // what cannot be undone by a stray Enter (a concierge's first command was "Delete my account") comes
    // after the rest; typing its words still puts it first
    const commands: Entry[] = byRisk(runnableCommands(holder)).map((c) => ({
      key: `command:${c.id}`,
      kind: 'command',
      titles: lngs.map((l) => commandTitle(c.id, l)),
      keywords: [c.id],
      hint: tr(familyKey(nounOf(c.id), 'family')),
      icon: FAMILY_ICON[nounOf(c.id)] ?? 'command',
      run: () => go(() => void startCommand(c.id, navigate)),
    }));
    const pages: Entry[] = Pages.filter(
      (p) => (p.menu || p.id === 'profile') && evaluateGates(p.gates, holder).can,
    ).map((p) => ({
      key: `page:${p.path}`,
      kind: 'page',
      titles: lngs.map((l) => tr(p.titleKey, l)),
      keywords: [p.path],
      hint: tr('palette.page'),
      icon: p.icon,
      run: () =>
        go(() => {
          rememberRecent({ kind: 'page', path: p.path });
          navigate(p.path);
        }),
    }));
    return { commands, pages };
    // the lists follow the profile (permissions) and the language
  }, [profile, lang]);

  // what the screen on show offers (a table's Export), first
  const actions = useMemo<Entry[]>(
    () =>
      pageActions.map((a) => ({
        key: `action:${a.id}`,
        kind: 'action',
        titles: languages().map((l) => tr(a.labelKey, l)),
        keywords: [a.id],
        hint: tr(a.group === 'dialer' ? 'palette.dialer' : 'palette.this_page'),
        icon: a.icon,
        run: () => go(a.run),
      })),
    // the titles follow the language
    [pageActions, lang],
  );

  const entityEntry = (family: Family, id: number, name: string, detail?: string): Entry => ({
    key: `entity:${family}:${id}`,
    kind: 'entity',
    titles: [name],
    keywords: detail ? [detail] : undefined,
    detail,
    hint: tr(familyKey(family, 'family')),
    icon: FAMILY_ICON[family] ?? 'list',
    run: () =>
      go(() => {
        rememberRecent({ kind: 'entity', family, id, name });
        const edit = EDIT_PAGES[family];
        if (edit) navigate(edit(id));
        // no page of its own: its edit form, with the row loaded
        else openCommandForm(`${family}.update`, { preset: { id } });
      }),
  });

  const recent = useMemo(() => {
    const byKey = new Map([...commands, ...pages].map((e) => [e.key, e]));
    return recentItems()
      .map((r: RecentItem) =>
        r.kind === 'command'
          ? byKey.get(`command:${r.id}`)
          : r.kind === 'page'
            ? byKey.get(`page:${r.path}`)
            : evaluateGates(getCommand(`${r.family}.list` as CommandId).gates, holder).can
              ? entityEntry(r.family, r.id, r.name)
              : undefined,
      )
      .filter((e): e is Entry => !!e);
    // `closings`: read the recent items again after each use
  }, [commands, pages, closings]);

  // rows by name, searched on the server (cmdk filters only what it holds)
  const searchable = useMemo(
    () => SEARCHED.filter((f) => evaluateGates(getCommand(`${f}.list` as CommandId).gates, holder).can),
    [profile],
  );
  useEffect(() => {
    const parsed = parseEntityQuery(query, entityWords(), searchable);
    if (!parsed) {
      setFound([]);
      setSearching(false);
      return;
    }
    let live = true;
    setSearching(true);
    const timer = window.setTimeout(() => {
      void Promise.all(
        parsed.families.map((f) =>
          searchFamily(f, parsed.text, 1, 5)
            .then((r) => r.rows.map((row) => entityEntry(f, row.id, row.name, row.hint)))
            .catch(() => [] as Entry[]),
        ),
      ).then((lists) => {
        if (!live) return;
        setFound(lists.flat());
        setSearching(false);
      });
    }, 150);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [query, searchable]);

  const q = query.trim();
  // the dialer's actions are listed apart: they are there on every screen
  const dialerActions = new Set(pageActions.filter((a) => a.group === 'dialer').map((a) => `action:${a.id}`));
  const recentKeys = new Set(recent.map((r) => r.key));
  const ranked = q
    ? rankWithFound(
        [
          ...actions,
          ...recent,
          ...pages.filter((p) => !recentKeys.has(p.key)),
          ...commands.filter((c) => !recentKeys.has(c.key)),
        ],
        found,
        q,
      )
    : null;
  const groups: { id: string; heading: string; items: Entry[] }[] = ranked
    ? [
        { id: 'best', heading: t('palette.best'), items: ranked.best },
        { id: 'found', heading: t('palette.found'), items: ranked.more },
      ]
    : [
        {
          id: 'actions',
          heading: t('palette.on_this_page'),
          items: actions.filter((a) => !dialerActions.has(a.key)),
        },
        {
          id: 'dialer',
          heading: t('palette.dialer'),
          items: actions.filter((a) => dialerActions.has(a.key)),
        },
        { id: 'recent', heading: t('palette.recent'), items: recent },
        { id: 'pages', heading: t('palette.pages'), items: pages.filter((p) => !recentKeys.has(p.key)) },
        {
          id: 'commands',
          heading: t('palette.commands'),
          items: commands.filter((c) => !recentKeys.has(c.key)),
        },
      ];

  // the best item is the chosen one whenever it changes (rows found by name come after the first keys):
  // cmdk keeps its choice on the item it had, and Enter would run a command ranked below the person
  const shown = groups.find((g) => g.items.length);
  const firstValue = shown ? `${shown.id}:${shown.items[0]!.key}` : '';
  const [chosen, setChosen] = useState('');
  // and at each opening the first again, wherever the last one's arrows left it
  useEffect(() => setChosen(firstValue), [firstValue, closings]);

  return (
    <Command
      label={t('palette.title')}
      value={chosen}
      onValueChange={setChosen}
      shouldFilter={false}
      loop
      className="flex min-h-0 flex-1 flex-col"
      data-testid="palette"
    >
      <div className="flex h-11 shrink-0 items-center gap-2 border-b border-slate-200 px-3">
        <Icon name="search" className="size-4 text-slate-400" />
        <Command.Input
          value={query}
          onValueChange={setQuery}
          placeholder={t('palette.placeholder')}
          aria-label={t('palette.placeholder')}
          data-testid="palette-input"
          className="h-full min-w-0 flex-1 border-0 bg-transparent text-sm outline-none placeholder:text-slate-400"
        />
        {searching && <Spinner className="size-4 text-slate-400" />}
        <kbd className="rounded border border-slate-300 px-1 font-mono text-[10px] text-slate-500">Esc</kbd>
      </div>
      <Command.List
        className="max-h-[min(60vh,28rem)] overflow-y-auto p-1.5"
        aria-label={t('palette.results')}
      >
        <Command.Empty className="px-3 py-6 text-center text-sm text-slate-500">
          {searching ? t('palette.searching') : t('palette.nothing')}
        </Command.Empty>
        {groups
          .filter((g) => g.items.length)
          .map((g) => (
            <Command.Group
              key={g.id}
              heading={g.heading}
              className="mb-1 [&_[cmdk-group-heading]]:px-2 [&_[cmdk-group-heading]]:pt-1.5 [&_[cmdk-group-heading]]:pb-1 [&_[cmdk-group-heading]]:text-[11px] [&_[cmdk-group-heading]]:font-semibold [&_[cmdk-group-heading]]:tracking-wide [&_[cmdk-group-heading]]:text-slate-500 [&_[cmdk-group-heading]]:uppercase"
            >
              {g.items.map((e) => (
                <Command.Item
                  key={`${g.id}:${e.key}`}
                  value={`${g.id}:${e.key}`}
                  onSelect={e.run}
                  data-testid="palette-item"
                  data-key={e.key}
                  className="flex h-8 cursor-pointer items-center gap-2.5 rounded-md px-2 text-sm text-slate-800 [contain-intrinsic-size:auto_2rem] [content-visibility:auto] data-[selected=true]:bg-blue-700 data-[selected=true]:text-white [&[data-selected=true]_.hint]:text-white"
                >
                  <Icon name={e.icon} className="size-4 shrink-0 opacity-70" />
                  <span className="min-w-0 flex-1 overflow-clip text-ellipsis whitespace-nowrap">
                    {e.titles[0]}
                  </span>
                  {e.detail && (
                    <span className="hint min-w-0 overflow-clip font-mono text-xs text-ellipsis whitespace-nowrap text-slate-600">
                      {e.detail}
                    </span>
                  )}
                  <span className="hint shrink-0 text-xs text-slate-600">{e.hint}</span>
                </Command.Item>
              ))}
            </Command.Group>
          ))}
      </Command.List>
      <div className="flex h-8 shrink-0 items-center gap-3 border-t border-slate-200 bg-slate-50 px-3 text-[11px] text-slate-500">
        <span>{t('palette.help_move')}</span>
        <span>{t('palette.help_run')}</span>
        <span className="ml-auto">{t('palette.help_keys')}</span>
      </div>
    </Command>
  );
});

/**
 * The command palette (Ctrl/Cmd+K from anywhere, even inside a dialog): every page and every command the
 * user may run, recent ones first, fuzzy-matched in English and Russian, and rows found by name.
 */
export function Palette() {
  const [open, setOpen] = useAtom(paletteOpenAtom);
  const ref = useRef<HTMLDialogElement>(null);
  const { t } = useTranslation();
  // the list is built once the page is idle, so the first Ctrl+K only has to show it
  const [built, setBuilt] = useState(false);
  useEffect(() => {
    const idle = window.requestIdleCallback ?? ((fn: () => void) => window.setTimeout(fn, 200));
    const cancel = window.cancelIdleCallback ?? window.clearTimeout;
    const id = idle(() => setBuilt(true));
    return () => cancel(id);
  }, []);
  const close = useMemo(() => () => setOpen(false), [setOpen]);
  const [closings, setClosings] = useState(0);
  useEffect(() => {
    if (!open) setClosings((n) => n + 1);
  }, [open]);

  // The dialog element is the truth here: the browser may have closed it (Escape) before React re-rendered,
  // and a toggle of the state alone would then leave it closed with the state saying open.
  // An opening starts empty in the same event: the browser may have closed the dialog (Escape) without the state
  // hearing of it yet ('close' is a later task), and Ctrl+K then finds the state still open — no closing to
  // empty the query, which kept the last opening's text (CI: "создать группуcreate user").
  const resetRef = useRef<(() => void) | null>(null);
  const toggle = useCallback(() => {
    const dialog = ref.current;
    if (dialog?.open) {
      dialog.close();
      setOpen(false);
    } else {
      resetRef.current?.();
      dialog?.showModal();
      setOpen(true);
      dialog?.querySelector<HTMLInputElement>('[cmdk-input]')?.focus();
    }
  }, [setOpen]);
  useShortcut('mod+k', toggle, {
    labelKey: 'keys.palette',
    inInputs: true,
    inDialogs: true,
  });

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open) {
      if (!dialog.open) dialog.showModal();
      // the input mounted while the dialog was closed, so its autofocus could not take
      dialog.querySelector<HTMLInputElement>('[cmdk-input]')?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      aria-label={t('palette.title')}
      onCancel={(e) => {
        e.preventDefault();
        setOpen(false);
      }}
      // 'close' comes as a later task: by then Ctrl+K may have opened the palette again, which must stand
      onClose={() => {
        if (!ref.current?.open) setOpen(false);
      }}
      onMouseDown={(e) => {
        // a click on the backdrop closes
        if (e.target === ref.current) setOpen(false);
      }}
      className="mx-auto mt-[12vh] w-[min(640px,calc(100vw-2rem))] flex-col overflow-hidden rounded-lg border border-slate-300 bg-white p-0 text-slate-900 shadow-2xl backdrop:bg-slate-900/30 open:flex"
    >
      {(built || open) && <PaletteContent closings={closings} close={close} resetRef={resetRef} />}
    </dialog>
  );
}
