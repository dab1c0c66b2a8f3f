import {
  getCommand,
  MenuSections,
  resources,
  type CommandId,
  type Gates,
  type MenuSection,
} from '@lintel/commands';
import type { IconName } from '../ui/icon';
import { familyPageDefs } from '../families/family-pages';

/** Menu sections of spec part 1 §2.3, in menu order: the declarations' vocabulary (packages/commands). */
export const Sections = MenuSections;
export type Section = MenuSection;

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
  /** a family's page (from its declaration's `ui`): which family, and which of its three screens */
  family?: string;
  view?: 'list' | 'add' | 'edit';
}

const gatesOf = (id: CommandId): Gates => getCommand(id).gates;

/** The list, add and edit pages of every family that declares `ui` (packages/commands: `defineResource`). */
const families = familyPageDefs(resources);

/**
 * Every signed-in page that exists, once: the menu, the palette, the routes' guards and the breadcrumbs read
 * this list. The families' pages come from their declarations; the others are listed here. A page is gated like the command that fills it, so a page and its command never disagree.
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
    id: 'notifications',
    path: '/notifications',
    titleKey: 'notifications.title',
    icon: 'bell',
    section: 'common',
    gates: gatesOf('notification.list'),
    menu: true,
    goKey: 'n',
  },
  {
    id: 'notifications.settings',
    path: '/notifications/settings',
    titleKey: 'notifications.settings_title',
    icon: 'bell',
    section: 'common',
    gates: gatesOf('notification.settings_get'),
    menu: false,
    parent: 'notifications',
  },
  ...families.filter((p) => p.section !== 'settings'),
  {
    id: 'call-history',
    path: '/call-history',
    titleKey: 'call_history.title',
    icon: 'list',
    section: 'phone',
    gates: gatesOf('call_history.list'),
    menu: true,
  },
  {
    id: 'guest-access',
    path: '/guest-access',
    titleKey: 'commands:pages.guest_access.title',
    icon: 'key',
    section: 'access',
    gates: gatesOf('guest_access.create'),
    menu: true,
  },
  {
    id: 'access-matrix',
    path: '/access-matrix',
    titleKey: 'commands:pages.access_matrix.title',
    icon: 'table',
    section: 'access',
    gates: gatesOf('access_matrix.list'),
    menu: true,
  },
  {
    id: 'access-control.events',
    path: '/access-control/events',
    titleKey: 'acs_events.title',
    icon: 'list',
    section: 'access',
    gates: gatesOf('acs_event.list'),
    menu: true,
  },
  {
    id: 'devices.events',
    path: '/devices/events',
    titleKey: 'device_events.title',
    icon: 'list',
    section: 'devices',
    gates: gatesOf('device_event.list'),
    menu: true,
  },
  {
    id: 'devices.tasks',
    path: '/devices/tasks',
    titleKey: 'device_tasks.title',
    icon: 'list',
    section: 'devices',
    gates: gatesOf('device.tasks'),
    menu: true,
  },
  {
    id: 'devices.search',
    path: '/devices/search',
    titleKey: 'device_search.title',
    icon: 'search',
    section: 'devices',
    gates: gatesOf('device.search'),
    menu: true,
  },
  {
    id: 'reports-licenses',
    path: '/reports/licenses',
    titleKey: 'reports.title',
    icon: 'table',
    section: 'reports',
    gates: gatesOf('reports.licences_used'),
    menu: true,
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
  ...families.filter((p) => p.section === 'settings'),
  {
    id: 'backups',
    path: '/backups',
    titleKey: 'backups.title',
    icon: 'download',
    section: 'settings',
    gates: gatesOf('backup.list'),
    menu: true,
  },
  {
    id: 'general-settings',
    path: '/general-settings',
    titleKey: 'general_settings.title',
    icon: 'wand',
    section: 'settings',
    gates: gatesOf('settings.general_get'),
    menu: true,
  },
  {
    id: 'system-info',
    path: '/system-info',
    titleKey: 'system_info.title',
    icon: 'info',
    section: 'settings',
    gates: gatesOf('system.info'),
    menu: true,
  },
  {
    id: 'logs',
    path: '/logs',
    titleKey: 'logs.title',
    icon: 'list',
    section: 'settings',
    gates: gatesOf('log.available'),
    menu: true,
  },
  {
    id: 'licenses',
    path: '/licenses',
    titleKey: 'licences.title',
    icon: 'certificate',
    section: 'settings',
    gates: gatesOf('licence.list'),
    menu: true,
    goKey: 'l',
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
