import { Pages } from '../nav/pages';

/**
 * Every key binding of the console, once, with the scope it acts in. `useShortcut` takes its keys from
 * here by the binding's locale key (`labelKey`), `?` groups its sheet by these scopes, and
 * `bindings.test.ts` fails when two bindings share a key in one scope (or in a scope and one it sits in).
 */
export type KeyScope =
  'global' | 'page' | 'table' | 'tree' | 'form' | 'remote' | 'dialer' | 'keypad' | 'doors' | 'contacts';

/**
 * The scopes in force together: a table's keys act on a page that also has the page's keys (`n`) and the
 * global ones (`?`, `g` then a letter), so a key must be unique over a scope and the scopes it sits in.
 */
export const SCOPE_PARENTS: Record<KeyScope, KeyScope[]> = {
  global: [],
  page: ['global'],
  table: ['page', 'global'],
  tree: ['page', 'global'],
  form: ['global'],
  // the remote-control tab: its own page, outside the main layout (no table, no page keys)
  remote: ['global'],
  // the web dialer's keys act on every screen of the console, over whatever page, table, tree or form is there
  dialer: ['global', 'page', 'table', 'tree', 'form'],
  // the dialer's number field has the focus
  keypad: ['dialer', 'global'],
  // the dialer's door search has the focus
  doors: ['dialer', 'global'],
  // the dialer's contact search has the focus
  contacts: ['dialer', 'global'],
};

/** In the `?` sheet, in this order. */
export const SCOPE_ORDER: KeyScope[] = [
  'keypad',
  'doors',
  'contacts',
  'form',
  'table',
  'tree',
  'page',
  'remote',
  'dialer',
  'global',
];

export interface KeyBinding {
  /** react-hotkeys-hook syntax: `mod+k`, `g>u` (a sequence), `j, down` (either) */
  keys: string;
  /** locale key (namespace `web`) of what it does; names the binding */
  labelKey: string;
  scope: KeyScope;
}

const STATIC: KeyBinding[] = [
  { keys: 'shift+slash', labelKey: 'keys.help', scope: 'global' },
  { keys: 'mod+k', labelKey: 'keys.palette', scope: 'global' },
  { keys: 'n', labelKey: 'keys.new', scope: 'page' },
  { keys: 'mod+enter', labelKey: 'keys.approve', scope: 'form' },
  { keys: 'shift+enter', labelKey: 'keys.add_child', scope: 'tree' },
  { keys: 'j, down', labelKey: 'table.keys.next', scope: 'table' },
  { keys: 'k, up', labelKey: 'table.keys.previous', scope: 'table' },
  { keys: 'pagedown', labelKey: 'table.keys.page_down', scope: 'table' },
  { keys: 'pageup', labelKey: 'table.keys.page_up', scope: 'table' },
  { keys: 'g>g', labelKey: 'table.keys.first', scope: 'table' },
  { keys: 'shift+g', labelKey: 'table.keys.last', scope: 'table' },
  { keys: 'enter', labelKey: 'table.keys.open', scope: 'table' },
  { keys: 'x', labelKey: 'table.keys.select', scope: 'table' },
  { keys: 'shift+x', labelKey: 'table.keys.select_range', scope: 'table' },
  { keys: 'slash', labelKey: 'table.keys.search', scope: 'table' },
  { keys: 'f', labelKey: 'table.keys.filter', scope: 'table' },
  { keys: 'shift+f', labelKey: 'table.keys.filter_text', scope: 'table' },
  { keys: '1', labelKey: 'remote.keys.lock1', scope: 'remote' },
  { keys: '2', labelKey: 'remote.keys.lock2', scope: 'remote' },
  { keys: 'r', labelKey: 'remote.keys.reboot', scope: 'remote' },
  { keys: 'f', labelKey: 'remote.keys.refresh', scope: 'remote' },
  { keys: 'escape', labelKey: 'table.keys.clear', scope: 'table' },
  // /logs: read the log again, and its older lines
  { keys: 'r', labelKey: 'logs.keys.refresh', scope: 'page' },
  { keys: 'o', labelKey: 'logs.keys.older', scope: 'page' },
  // the important notifications' popups: Alt and a letter, so it works while typing too
  { keys: 'alt+i', labelKey: 'notifications.keys.popups', scope: 'global' },
  // the web dialer (issue 23): Alt and a letter, so they work on every screen and while typing a number
  { keys: 'alt+p', labelKey: 'dialer.keys.toggle', scope: 'dialer' },
  { keys: 'alt+a', labelKey: 'dialer.keys.answer', scope: 'dialer' },
  { keys: 'alt+x', labelKey: 'dialer.keys.end', scope: 'dialer' },
  { keys: 'alt+h', labelKey: 'dialer.keys.hold', scope: 'dialer' },
  { keys: 'alt+m', labelKey: 'dialer.keys.mute_mic', scope: 'dialer' },
  { keys: 'alt+s', labelKey: 'dialer.keys.mute_volume', scope: 'dialer' },
  { keys: 'alt+o', labelKey: 'dialer.keys.door', scope: 'dialer' },
  { keys: 'alt+n', labelKey: 'dialer.keys.next', scope: 'dialer' },
  { keys: 'alt+j', labelKey: 'dialer.keys.join', scope: 'dialer' },
  { keys: 'alt+t', labelKey: 'dialer.keys.intercept', scope: 'dialer' },
  { keys: 'enter', labelKey: 'dialer.keys.call', scope: 'keypad' },
  { keys: 'shift+enter', labelKey: 'dialer.keys.video_call', scope: 'keypad' },
  { keys: 'escape', labelKey: 'dialer.keys.close', scope: 'keypad' },
  // the dialer's doors and contacts (issue 23 item 4): arrows choose, Enter acts on the chosen row
  { keys: 'down', labelKey: 'dialer.keys.door_next', scope: 'doors' },
  { keys: 'up', labelKey: 'dialer.keys.door_previous', scope: 'doors' },
  { keys: 'enter', labelKey: 'dialer.keys.door_open', scope: 'doors' },
  { keys: 'shift+enter', labelKey: 'dialer.keys.door_call', scope: 'doors' },
  { keys: 'down', labelKey: 'dialer.keys.contact_next', scope: 'contacts' },
  { keys: 'up', labelKey: 'dialer.keys.contact_previous', scope: 'contacts' },
  { keys: 'enter', labelKey: 'dialer.keys.contact_call', scope: 'contacts' },
];

/** The table: the fixed keys, and `g` then a letter for every page that declares one (families included). */
export const KEY_BINDINGS: readonly KeyBinding[] = [
  ...STATIC,
  ...Pages.filter((p) => p.goKey).map((p): KeyBinding => ({
    keys: `g>${p.goKey}`,
    labelKey: `keys.go.${p.id}`,
    scope: 'global',
  })),
];

const byLabel = new Map(KEY_BINDINGS.map((b) => [b.labelKey, b]));

/** The binding named by its locale key; throws for one not in the table (keys are declared once, here). */
export function binding(labelKey: string): KeyBinding {
  const b = byLabel.get(labelKey);
  if (!b) throw new Error(`key binding ${labelKey} is not in keys/bindings.ts`);
  return b;
}

/** `j, down` → [`j`, `down`]: each key (or sequence) a binding answers to. */
export const keysOf = (keys: string): string[] =>
  keys
    .split(',')
    .map((k) => k.trim().toLowerCase())
    .filter(Boolean);

/** Pairs of bindings that answer to the same key where both are in force; empty when the table is sound. */
export function clashes(table: readonly KeyBinding[] = KEY_BINDINGS): string[] {
  const out: string[] = [];
  for (const [i, a] of table.entries())
    for (const b of table.slice(i + 1)) {
      const together =
        a.scope === b.scope ||
        SCOPE_PARENTS[a.scope].includes(b.scope) ||
        SCOPE_PARENTS[b.scope].includes(a.scope);
      if (!together) continue;
      const shared = keysOf(a.keys).filter((k) => keysOf(b.keys).includes(k));
      // a sequence's first step also clashes with a single key: `g` alone would swallow `g>u`
      const prefix = keysOf(a.keys).flatMap((k) =>
        keysOf(b.keys).filter((l) => k.startsWith(`${l}>`) || l.startsWith(`${k}>`)),
      );
      for (const k of [...shared, ...prefix])
        out.push(`${k}: ${a.labelKey} (${a.scope}) and ${b.labelKey} (${b.scope})`);
    }
  return out;
}
