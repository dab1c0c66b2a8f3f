import { getCommand, type AnyResource, type CommandId } from '@lintel/commands';
import type { IconName } from '../ui/icon';
import type { PageDef } from '../nav/pages';

/** The id of a family's list page: the last word of its path (`/general-settings/markers` → markers). */
export const pageIdOf = (r: AnyResource): string => r.ui!.path.split('/').pop()!;

/** The locale key of a family's page texts: `ui.key` (web namespace), else `commands:pages.<noun>`. */
export const pageKeyOf = (r: AnyResource): string => r.ui!.key ?? `commands:pages.${r.noun}`;

const gatesOf = (r: AnyResource, verb: 'list' | 'create' | 'get') =>
  getCommand(`${r.noun}.${verb}` as CommandId).gates;

/**
 * The list, add and edit pages of every family that declares `ui`, in declaration order: the routes, the
 * menu, the palette and the breadcrumbs read them through nav/pages.ts.
 */
export function familyPageDefs(resources: readonly AnyResource[]): PageDef[] {
  return resources.flatMap((r): PageDef[] => {
    const ui = r.ui;
    if (!ui) return [];
    const key = pageKeyOf(r);
    const id = pageIdOf(r);
    const common = { icon: ui.icon, section: ui.section, family: r.noun };
    return [
      {
        id,
        path: ui.path,
        titleKey: `${key}.title`,
        ...common,
        gates: gatesOf(r, 'list'),
        menu: true,
        view: 'list',
        ...(ui.goKey ? { goKey: ui.goKey } : {}),
      },
      {
        id: `${id}.add`,
        path: `${ui.path}/add`,
        titleKey: `${key}.add_title`,
        ...common,
        gates: gatesOf(r, 'create'),
        menu: false,
        parent: id,
        view: 'add',
      },
      {
        id: `${id}.edit`,
        path: `${ui.path}/:id/edit`,
        titleKey: `${key}.edit_title`,
        ...common,
        gates: gatesOf(r, 'get'),
        menu: false,
        parent: id,
        view: 'edit',
      },
    ];
  });
}

/** `<noun>.list` → the family's list page: choosing the command in the palette opens the page. */
export function familyCommandPages(resources: readonly AnyResource[]): Record<string, string> {
  return Object.fromEntries(resources.filter((r) => r.ui).map((r) => [`${r.noun}.list`, r.ui!.path]));
}

/** noun → its edit page: choosing a row (or `<noun>.get`) opens it. */
export function familyEditPages(resources: readonly AnyResource[]): Record<string, (id: number) => string> {
  return Object.fromEntries(
    resources.filter((r) => r.ui).map((r) => [r.noun, (id: number) => `${r.ui!.path}/${id}/edit`]),
  );
}

/** noun → its icon, for the palette's entries. */
export function familyIcons(resources: readonly AnyResource[]): Record<string, IconName> {
  return Object.fromEntries(resources.filter((r) => r.ui).map((r) => [r.noun, r.ui!.icon]));
}

/** The families whose rows the palette finds by name. */
export function searchedFamilies(resources: readonly AnyResource[]): string[] {
  return resources.filter((r) => r.ui && r.ui.search !== false).map((r) => r.noun);
}

/**
 * Which screen a page shows: its own (by page id, from the router's overrides), else its family's generated
 * list, add or edit page, else none.
 */
export function screenChoice(
  page: PageDef,
  overrides: Readonly<Record<string, unknown>>,
  families: readonly AnyResource[],
): { own: true } | { own: false; resource: AnyResource; view: 'list' | 'add' | 'edit' } | null {
  if (overrides[page.id]) return { own: true };
  const resource = families.find((r) => r.noun === page.family);
  return resource ? { own: false, resource, view: page.view ?? 'list' } : null;
}
