/**
 * The console's words a declaration may use, as types, so a family's `ui.icon` or `ui.section` with a typo
 * does not compile (issue 19 item 3). The web console draws each icon (`apps/web/src/ui/icon.tsx`, whose
 * paths must cover exactly these names) and orders the side menu by `MenuSections`.
 */

/** The icons of the console's own set. */
export const IconNames = [
  'error',
  'warning',
  'check',
  'info',
  'close',
  'eye',
  'eye-off',
  'dice',
  'chevron-down',
  'chevron-right',
  'logout',
  'home',
  'building',
  'swap',
  'mail',
  'user',
  'users',
  'shield',
  'list',
  'plus',
  'search',
  'trash',
  'key',
  'tree',
  'table',
  'keyboard',
  'command',
  'send',
  'arrow-left',
  'refresh',
  'download',
  'lock',
  'device',
  'wand',
  'arrow-up',
  'arrow-down',
  'filter',
  'columns',
  'code',
  'inbox',
  'phone',
  'certificate',
  'upload',
  'copy',
  'bell',
  'alarm',
  'chat',
] as const;
export type IconName = (typeof IconNames)[number];

/** The side menu's sections (spec part 1 §2.3), in menu order. */
export const MenuSections = ['common', 'reports', 'users', 'phone', 'devices', 'settings'] as const;
export type MenuSection = (typeof MenuSections)[number];
