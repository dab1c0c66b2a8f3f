import { useState } from 'react';
import { Link, useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';
import { useCan } from '../access/use-can';
import { Pages, Sections, type Section } from '../nav/pages';
import { focusRing } from '../ui/button';
import { Icon } from '../ui/icon';

const KEY = 'lintel.menu';

/**
 * The one menu item of a location (issue 25 item 7): the item whose path is the longest that the location is
 * or is under — `/devices/tasks` is Device tasks, not Devices too; `/devices/3/edit` is Devices.
 */
export function activeMenuPath(pathname: string, paths: readonly string[]): string | null {
  let best: string | null = null;
  for (const p of paths)
    if ((pathname === p || pathname.startsWith(`${p}/`)) && (!best || p.length > best.length)) best = p;
  return best;
}

/** The side menu state is a stored browser setting (spec part 2 §9): sections start expanded. */
function storedCollapsed(): Partial<Record<Section, boolean>> {
  try {
    const v = JSON.parse(window.localStorage.getItem(KEY) ?? '{}') as unknown;
    return v && typeof v === 'object' ? (v as Partial<Record<Section, boolean>>) : {};
  } catch (err) {
    console.warn('lintel: menu state unreadable', err);
    return {};
  }
}

/**
 * The menu of spec part 1 §2.3: sections in order, each item shown only when the user may open its page
 * (the same gate evaluator as routes and the palette), empty sections left out.
 */
export function SideMenu() {
  const { t } = useTranslation();
  const can = useCan();
  const [collapsed, setCollapsed] = useState(storedCollapsed);
  const tr = t as unknown as (k: string) => string;
  const { pathname } = useLocation();
  const active = activeMenuPath(
    pathname,
    Pages.filter((p) => p.menu).map((p) => p.path),
  );

  function toggle(section: Section) {
    setCollapsed((c) => {
      const next = { ...c, [section]: !c[section] };
      try {
        window.localStorage.setItem(KEY, JSON.stringify(next));
      } catch {
        // not remembered
      }
      return next;
    });
  }

  return (
    <nav aria-label={t('menu.label')} className="flex-1 overflow-y-auto px-2 py-2" data-testid="side-menu">
      {Sections.map((section) => {
        const items = Pages.filter((p) => p.menu && p.section === section && can(p.gates).can);
        if (!items.length) return null;
        const open = !collapsed[section];
        const listId = `menu-${section}`;
        return (
          <div key={section} className="mb-1">
            <button
              type="button"
              aria-expanded={open}
              aria-controls={listId}
              onClick={() => toggle(section)}
              data-testid={`menu-section-${section}`}
              className={`flex h-7 w-full items-center gap-1 rounded px-2 text-[11px] font-semibold tracking-wider text-slate-400 uppercase hover:text-slate-200 ${focusRing} focus-visible:ring-offset-slate-900`}
            >
              <Icon
                name="chevron-right"
                className={`size-3 transition-transform ${open ? 'rotate-90' : ''}`}
              />
              {/* one line whatever the language: a long heading ends in an ellipsis, whole on hover */}
              <span className="min-w-0 truncate" title={t(`menu.section.${section}`)}>
                {t(`menu.section.${section}`)}
              </span>
            </button>
            {open && (
              <ul id={listId}>
                {items.map((item) => (
                  <li key={item.id}>
                    <Link
                      to={item.path}
                      data-testid={`menu-${item.id}`}
                      aria-current={item.path === active ? 'page' : undefined}
                      className={`flex h-8 items-center gap-2 rounded-md px-2 text-sm ${focusRing} focus-visible:ring-offset-slate-900 ${
                        item.path === active
                          ? 'bg-slate-700 font-medium text-white'
                          : 'text-slate-300 hover:bg-slate-800 hover:text-white'
                      }`}
                    >
                      <Icon name={item.icon} />
                      {tr(item.titleKey)}
                    </Link>
                  </li>
                ))}
              </ul>
            )}
          </div>
        );
      })}
    </nav>
  );
}
