import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { GroupTreeNode } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { useShortcut } from '../../keys/shortcuts';
import { naturalCompare } from '../../format/natural';
import { rememberName } from '../../pickers/names';
import { focusRing } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';
import { inputClass } from '../../ui/field';

interface Visible {
  node: GroupTreeNode;
  depth: number;
  hasChildren: boolean;
  parent: number | null;
}

const KEY = 'lintel.groups.expanded';
/** letters typed closer together than this find one name (typeahead) */
const TYPEAHEAD_MS = 700;

function storedExpanded(): Set<number> | null {
  try {
    const raw = window.localStorage.getItem(KEY);
    return raw ? new Set(JSON.parse(raw) as number[]) : null;
  } catch {
    return null;
  }
}

/** Nodes matching the filter, with their ancestors so the match shows where it sits. */
function keepMatching(nodes: GroupTreeNode[], needle: string): GroupTreeNode[] {
  if (!needle) return nodes;
  const out: GroupTreeNode[] = [];
  for (const n of nodes) {
    const children = keepMatching(n.children, needle);
    const hit =
      n.name.toLowerCase().includes(needle) || (n.logic_address ?? '').toLowerCase().includes(needle);
    if (hit || children.length) out.push({ ...n, children: hit ? n.children : children });
  }
  return out;
}

/** A key pressed in a field (the filter): text, not a command. */
const typing = (e: globalThis.KeyboardEvent) =>
  e.target instanceof Element && !!e.target.closest('input,textarea,select,[contenteditable="true"]');

/**
 * The group hierarchy as a keyboard tree (WAI-ARIA tree view): ↑ ↓ move, → opens or goes to the first child,
 * ← closes or goes to the parent, Enter opens the group; `a` adds a child group to the chosen one.
 */
export function GroupTree({
  toolbar,
  refreshKey,
  onOpen,
  onAddChild,
}: {
  toolbar: ReactNode;
  refreshKey: unknown;
  onOpen: (id: number) => void;
  onAddChild?: (id: number) => void;
}) {
  const { t } = useTranslation();
  const [roots, setRoots] = useState<GroupTreeNode[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [expanded, setExpanded] = useState<Set<number> | null>(storedExpanded);
  const [active, setActive] = useState<number | null>(null);
  const [filter, setFilter] = useState('');
  const listRef = useRef<HTMLUListElement>(null);
  const filterRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let live = true;
    runCommand('group.tree', {})
      .then((r) => {
        if (!live) return;
        const walk = (ns: GroupTreeNode[]) =>
          ns.forEach((n) => (rememberName('group', n.id, n.name), walk(n.children)));
        walk(r.data);
        // names as people read them, whatever order the server sent (issue 13 point 8)
        const sorted = (ns: GroupTreeNode[]): GroupTreeNode[] =>
          [...ns]
            .sort((a, b) => naturalCompare(a.name, b.name) || a.id - b.id)
            .map((n) => ({ ...n, children: sorted(n.children) }));
        setRoots(sorted(r.data));
        // first visit: the top two levels open
        setExpanded((e) => e ?? new Set(r.data.flatMap((n) => [n.id, ...n.children.map((c) => c.id)])));
      })
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [refreshKey]);

  useEffect(() => {
    if (!expanded) return;
    try {
      window.localStorage.setItem(KEY, JSON.stringify([...expanded]));
    } catch {
      // not remembered
    }
  }, [expanded]);

  const needle = filter.trim().toLowerCase();
  const visible = useMemo(() => {
    const out: Visible[] = [];
    const walk = (ns: GroupTreeNode[], depth: number, parent: number | null) => {
      for (const n of ns) {
        out.push({ node: n, depth, hasChildren: n.children.length > 0, parent });
        if ((needle || expanded?.has(n.id)) && n.children.length) walk(n.children, depth + 1, n.id);
      }
    };
    walk(keepMatching(roots ?? [], needle), 0, null);
    return out;
  }, [roots, expanded, needle]);

  const activeIndex = Math.max(
    0,
    visible.findIndex((v) => v.node.id === active),
  );
  const current = visible[activeIndex];

  // Shift+Enter adds a group under the chosen one, wherever the focus is on this screen but in a field. It
  // was `a`, and a name typed into the tree ("apartment") opened "New group": letters in the tree now find
  // a group by its name (issue 25 item 4)
  useShortcut(
    'shift+enter',
    (e) => {
      if (typing(e)) return;
      e.preventDefault();
      if (current) onAddChild?.(current.node.id);
    },
    { labelKey: 'keys.add_child', enabled: !!onAddChild && !!current, preventDefault: false },
    [current?.node.id, onAddChild],
  );
  // `/` goes to the filter, as in every table
  useShortcut(
    'slash',
    (e) => {
      if (typing(e)) return;
      e.preventDefault();
      filterRef.current?.focus();
      filterRef.current?.select();
    },
    { labelKey: 'table.keys.search', preventDefault: false },
  );

  // the tree takes the keys as soon as it is drawn (issue 13 point 7), unless something else has the focus
  const loaded = roots !== null;
  useEffect(() => {
    if (!loaded) return;
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) listRef.current?.focus();
  }, [loaded]);

  useEffect(() => {
    listRef.current
      ?.querySelector<HTMLElement>(`[data-id="${current?.node.id}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [current?.node.id]);

  function toggle(id: number, open?: boolean) {
    setExpanded((e) => {
      const next = new Set(e ?? []);
      if (open ?? !next.has(id)) next.add(id);
      else next.delete(id);
      return next;
    });
  }

  // typeahead (WAI-ARIA tree pattern): letters typed in quick succession find the next group whose name
  // starts with them; the keys are the tree's own while it has the focus (not `n` or `g` then a letter)
  const typed = useRef({ text: '', at: 0 });
  function typeahead(e: KeyboardEvent): boolean {
    if (e.key.length !== 1 || e.ctrlKey || e.metaKey || e.altKey || !/[\p{L}\p{N} ]/u.test(e.key))
      return false;
    if (e.key === ' ' && typed.current.text === '') return false;
    const fresh = e.timeStamp - typed.current.at > TYPEAHEAD_MS;
    typed.current = { text: (fresh ? '' : typed.current.text) + e.key.toLowerCase(), at: e.timeStamp };
    const text = typed.current.text;
    // one letter again and again steps through the groups starting with it; more letters refine in place
    const from = text.length === 1 ? activeIndex + 1 : activeIndex;
    for (let k = 0; k < visible.length; k++) {
      const v = visible[(from + k) % visible.length]!;
      if (v.node.name.toLowerCase().startsWith(text)) {
        setActive(v.node.id);
        break;
      }
    }
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  function onKeyDown(e: KeyboardEvent) {
    if (!current) return;
    if (typeahead(e)) return;
    const move = (i: number) => setActive(visible[Math.max(0, Math.min(visible.length - 1, i))]!.node.id);
    const open = needle !== '' || expanded?.has(current.node.id);
    switch (e.key) {
      case 'ArrowDown':
        move(activeIndex + 1);
        break;
      case 'ArrowUp':
        move(activeIndex - 1);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(visible.length - 1);
        break;
      case 'ArrowRight':
        if (current.hasChildren && !open) toggle(current.node.id, true);
        else if (current.hasChildren) move(activeIndex + 1);
        break;
      case 'ArrowLeft':
        if (current.hasChildren && open && !needle) toggle(current.node.id, false);
        else if (current.parent !== null) setActive(current.parent);
        break;
      case 'Enter':
        // Shift+Enter is "add a group under it" (the shortcut above)
        if (e.shiftKey) return;
        onOpen(current.node.id);
        break;
      default:
        return;
    }
    e.preventDefault();
  }

  return (
    <div
      className="flex h-full flex-col rounded-lg border border-slate-200 bg-white"
      data-testid="group-tree"
    >
      <div className="flex h-10 shrink-0 items-center gap-2 border-b border-slate-200 px-2">
        <label className="relative">
          <span className="sr-only">{t('groups.filter')}</span>
          <Icon name="search" className="pointer-events-none absolute top-2 left-2 size-3.5 text-slate-400" />
          <input
            ref={filterRef}
            type="search"
            value={filter}
            aria-keyshortcuts="/"
            onChange={(e) => setFilter(e.target.value)}
            onKeyDown={(e) => {
              // Enter or ↓ goes into the tree, on the first group left by the filter; Esc clears
              if (e.key === 'Enter' || e.key === 'ArrowDown') {
                e.preventDefault();
                if (visible[0]) setActive(visible[0].node.id);
                listRef.current?.focus();
              } else if (e.key === 'Escape' && filter) {
                e.preventDefault();
                e.stopPropagation();
                setFilter('');
              }
            }}
            placeholder={t('groups.filter')}
            data-testid="tree-filter"
            className={`${inputClass} h-7 w-56 border-slate-300 pl-7 text-xs`}
          />
        </label>
        <span className="text-xs text-slate-500">{roots && t('groups.tree_hint')}</span>
        <div className="ml-auto flex items-center gap-2">{toolbar}</div>
      </div>
      {error && (
        <div className="p-3">
          <FormError message={error} />
        </div>
      )}
      {!roots && !error && <Loading className="p-3" />}
      {roots && (
        <ul
          ref={listRef}
          role="tree"
          aria-label={t('groups.title')}
          tabIndex={0}
          aria-activedescendant={current ? `group-node-${current.node.id}` : undefined}
          onKeyDown={onKeyDown}
          className={`min-h-0 flex-1 overflow-y-auto py-1 text-[13px] ${focusRing}`}
        >
          {visible.length === 0 && (
            <li role="none" className="px-3 py-2 text-slate-500">
              {t('groups.none')}
            </li>
          )}
          {visible.map((v, i) => {
            const isOpen = needle !== '' || !!expanded?.has(v.node.id);
            return (
              <li
                key={v.node.id}
                id={`group-node-${v.node.id}`}
                data-id={v.node.id}
                role="treeitem"
                aria-level={v.depth + 1}
                aria-expanded={v.hasChildren ? isOpen : undefined}
                aria-selected={i === activeIndex}
                onClick={() => setActive(v.node.id)}
                onDoubleClick={() => onOpen(v.node.id)}
                className={`flex h-7 cursor-default items-center gap-1.5 pr-3 ${i === activeIndex ? 'bg-blue-50 text-blue-950' : 'hover:bg-slate-50'}`}
                style={{ paddingLeft: `${8 + v.depth * 18}px` }}
              >
                <button
                  type="button"
                  tabIndex={-1}
                  aria-hidden="true"
                  onClick={(e) => {
                    e.stopPropagation();
                    if (v.hasChildren) toggle(v.node.id);
                  }}
                  className={`flex size-4 items-center justify-center rounded text-slate-500 ${v.hasChildren ? 'hover:bg-slate-200' : 'invisible'}`}
                >
                  <Icon
                    name="chevron-right"
                    className={`size-3 transition-transform ${isOpen ? 'rotate-90' : ''}`}
                  />
                </button>
                <Icon name="building" className="size-3.5 text-slate-400" />
                <span className="min-w-0 truncate font-medium">{v.node.name}</span>
                {v.node.logic_address && (
                  <span className="font-mono text-[11px] text-slate-500">{v.node.logic_address}</span>
                )}
                {v.hasChildren && (
                  <span
                    className="rounded-full bg-slate-100 px-1.5 text-[11px] text-slate-600 tabular-nums"
                    title={t('groups.children_count', { count: v.node.children.length })}
                  >
                    {v.node.children.length}
                  </span>
                )}
                {v.node.type && (
                  <span className="ml-auto rounded bg-slate-100 px-1.5 text-[11px] text-slate-600">
                    {v.node.type}
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
