import { getCommand, type CommandId, type Gates } from '@lintel/commands';
import type { IconName } from '../ui/icon';

/** Menu sections of spec part 1 §2.3 that hold pages so far, in menu order. */
export const Sections = ['common', 'users', 'settings'] as const;
export type Section = (typeof Sections)[number];

export interface PageDef {
  id: string;
  /** the route pattern */
  path: string;
  /** web locale key of the title */
  titleKey: string;
  icon: IconName;
  section: Section;
  /** who may open it: the gates of the command that fills it */
  gates: Gates;
  /** shown in the side menu (add and edit screens are not) */
  menu: boolean;
  /** the page above it, for breadcrumbs and "back" */
  parent?: string;
  /** a key sequence that opens it: `g` then this key */
  goKey?: string;
}

const gatesOf = (id: CommandId): Gates => getCommand(id).gates;

/**
 * Every signed-in page that exists, once: the menu, the palette, the routes' guards and the breadcrumbs read
 * this list. A page is gated like the command that fills it, so a page and its command never disagree.
 */
export const Pages: readonly PageDef[] = [
  {
    id: 'home',
    path: '/home',
    titleKey: 'home.title',
    icon: 'home',
    section: 'common',
    gates: {},
    menu: true,
    goKey: 'h',
  },
  {
    id: 'users',
    path: '/users',
    titleKey: 'users.title',
    icon: 'user',
    section: 'users',
    gates: gatesOf('user.list'),
    menu: true,
    goKey: 'u',
  },
  {
    id: 'users.add',
    path: '/users/add',
    titleKey: 'users.add_title',
    icon: 'user',
    section: 'users',
    gates: gatesOf('user.create'),
    menu: false,
    parent: 'users',
  },
  {
    id: 'users.edit',
    path: '/users/:id/edit',
    titleKey: 'users.edit_title',
    icon: 'user',
    section: 'users',
    gates: gatesOf('user.get'),
    menu: false,
    parent: 'users',
  },
  {
    id: 'roles',
    path: '/roles',
    titleKey: 'roles.title',
    icon: 'shield',
    section: 'users',
    gates: gatesOf('role.list'),
    menu: true,
    goKey: 'r',
  },
  {
    id: 'roles.add',
    path: '/roles/add',
    titleKey: 'roles.add_title',
    icon: 'shield',
    section: 'users',
    gates: gatesOf('role.create'),
    menu: false,
    parent: 'roles',
  },
  {
    id: 'roles.edit',
    path: '/roles/:id/edit',
    titleKey: 'roles.edit_title',
    icon: 'shield',
    section: 'users',
    gates: gatesOf('role.get'),
    menu: false,
    parent: 'roles',
  },
  {
    id: 'groups',
    path: '/groups',
    titleKey: 'groups.title',
    icon: 'building',
    section: 'users',
    gates: gatesOf('group.list'),
    menu: true,
    goKey: 'g',
  },
  {
    id: 'groups.add',
    path: '/groups/add',
    titleKey: 'groups.add_title',
    icon: 'building',
    section: 'users',
    gates: gatesOf('group.create'),
    menu: false,
    parent: 'groups',
  },
  {
    id: 'groups.edit',
    path: '/groups/:id/edit',
    titleKey: 'groups.edit_title',
    icon: 'building',
    section: 'users',
    gates: gatesOf('group.get'),
    menu: false,
    parent: 'groups',
  },
  {
    id: 'audit-events',
    path: '/audit-events',
    titleKey: 'audit.title',
    icon: 'list',
    section: 'settings',
    gates: gatesOf('audit_event.list'),
    menu: true,
    goKey: 'a',
  },
  {
    id: 'profile',
    path: '/profile',
    titleKey: 'profile.title',
    icon: 'user',
    section: 'common',
    gates: gatesOf('profile.get'),
    menu: false,
    goKey: 'p',
  },
];

export function pageById(id: string): PageDef {
  const page = Pages.find((p) => p.id === id);
  if (!page) throw new Error(`unknown page ${id}`);
  return page;
}

/** The page a location shows (`/users/12/edit` → users.edit). */
export function pageOfPath(pathname: string): PageDef | undefined {
  return Pages.find((p) => new RegExp(`^${p.path.replace(/:[a-z_]+/g, '[^/]+')}/?$`).test(pathname));
}
