import type { RefObject } from 'react';
import { useShortcut } from '../keys/shortcuts';
import type { GridHandle } from './table-grid';

/** What the table's keys act on; read through a ref so the bindings never change while the table lives. */
export interface TableActions {
  root: HTMLElement | null;
  grid: GridHandle | null;
  search: HTMLInputElement | null;
  addFilter(): void;
  editFilterText(): void;
  /** clears the selection, else the search; false when there was nothing to clear */
  escape(): boolean;
}

const OVERLAY = '[role="dialog"],[role="alertdialog"],[role="menu"],[role="listbox"],[aria-modal="true"]';
const CONTROL =
  'a[href],button,input,select,textarea,summary,[contenteditable="true"],[role="button"],[role="link"],[role="checkbox"],[role="menuitem"],[role="tab"],[role="option"],[role="switch"]';

function targetOf(e: KeyboardEvent): Element | null {
  return e.target instanceof Element ? e.target : null;
}

/** Not while a dialog, a menu or the palette has the keys, nor while another modal is open. */
function free(e: KeyboardEvent, root: HTMLElement | null): boolean {
  const t = targetOf(e);
  if (t?.closest(OVERLAY)) return false;
  const modal = document.querySelector('[aria-modal="true"]');
  return !modal || !!(root && modal.contains(root));
}

/**
 * Keys that act on the focused row (Enter, x) only when no other control has the focus: Enter on a
 * button or a link elsewhere stays that control's.
 */
function onRow(e: KeyboardEvent, a: TableActions): boolean {
  if (!free(e, a.root)) return false;
  const t = targetOf(e);
  const grid = a.grid?.element() ?? null;
  if (!t || t === document.body || t === document.documentElement) return true;
  // in the grid: the grid itself and a row's checkbox, not the header's sort buttons
  if (grid && grid.contains(t)) return t === grid || t.matches('input[data-select]') || !t.closest(CONTROL);
  return !t.closest(CONTROL);
}

function act(e: KeyboardEvent, ok: boolean, run: () => void) {
  if (!ok) return;
  e.preventDefault();
  run();
}

/**
 * The table's keys, each with its label for `?`: j/k and the arrows move the focused row, Enter opens it,
 * x selects it (shift+x up to it), / searches, f adds a filter, Esc clears, g g and G jump.
 */
export function TableKeys({
  actions,
  enabled,
  canOpen,
}: {
  actions: RefObject<TableActions>;
  enabled: boolean;
  canOpen: boolean;
}) {
  const a = () => actions.current;
  const opts = { enabled, preventDefault: false };
  useShortcut('j, down', (e) => act(e, free(e, a().root), () => a().grid?.move(1)), {
    ...opts,
    labelKey: 'table.keys.next',
  });
  useShortcut('k, up', (e) => act(e, free(e, a().root), () => a().grid?.move(-1)), {
    ...opts,
    labelKey: 'table.keys.previous',
  });
  useShortcut('pagedown', (e) => act(e, free(e, a().root), () => a().grid?.page(1)), {
    ...opts,
    labelKey: 'table.keys.page_down',
  });
  useShortcut('pageup', (e) => act(e, free(e, a().root), () => a().grid?.page(-1)), {
    ...opts,
    labelKey: 'table.keys.page_up',
  });
  useShortcut('g>g', (e) => act(e, !e.shiftKey && free(e, a().root), () => a().grid?.moveTo(0)), {
    ...opts,
    labelKey: 'table.keys.first',
  });
  useShortcut('shift+g', (e) => act(e, free(e, a().root), () => a().grid?.moveTo(-1)), {
    ...opts,
    labelKey: 'table.keys.last',
  });
  useShortcut('enter', (e) => act(e, onRow(e, a()), () => a().grid?.open()), {
    ...opts,
    enabled: enabled && canOpen,
    labelKey: 'table.keys.open',
  });
  useShortcut('x', (e) => act(e, onRow(e, a()), () => a().grid?.toggle()), {
    ...opts,
    labelKey: 'table.keys.select',
  });
  useShortcut('shift+x', (e) => act(e, onRow(e, a()), () => a().grid?.toggleRange()), {
    ...opts,
    labelKey: 'table.keys.select_range',
  });
  useShortcut(
    'slash',
    (e) =>
      act(e, free(e, a().root), () => {
        a().search?.focus();
        a().search?.select();
      }),
    { ...opts, labelKey: 'table.keys.search' },
  );
  useShortcut('f', (e) => act(e, free(e, a().root), () => a().addFilter()), {
    ...opts,
    labelKey: 'table.keys.filter',
  });
  useShortcut('shift+f', (e) => act(e, free(e, a().root), () => a().editFilterText()), {
    ...opts,
    labelKey: 'table.keys.filter_text',
  });
  useShortcut(
    'escape',
    (e) => {
      const t = targetOf(e);
      const cur = a();
      // in a field, only the table's own search box
      if (t && t.closest('input,select,textarea') && t !== cur.search) return;
      if (!free(e, cur.root)) return;
      if (t && t !== document.body && cur.root && !cur.root.contains(t) && t.closest(CONTROL)) return;
      if (cur.escape()) e.preventDefault();
    },
    { ...opts, inInputs: true, labelKey: 'table.keys.clear' },
  );
  return null;
}
