import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { FamilyCommandId } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { formatCount } from '../../resources/format';
import { focusRing } from '../../ui/button';
import { Icon, type IconName } from '../../ui/icon';
import { useReply } from './use-reply';

export const COUNTED: {
  id: string;
  list: FamilyCommandId<'list'>;
  path: string;
  titleKey: 'users.title' | 'groups.title' | 'roles.title';
  icon: IconName;
}[] = [
  { id: 'users', list: 'user.list', path: '/users', titleKey: 'users.title', icon: 'users' },
  { id: 'groups', list: 'group.list', path: '/groups', titleKey: 'groups.title', icon: 'building' },
  { id: 'roles', list: 'role.list', path: '/roles', titleKey: 'roles.title', icon: 'shield' },
];

/** How many rows a family has, a link into its table. */
export function CountCard({ item }: { item: (typeof COUNTED)[number] }) {
  const { t, i18n } = useTranslation();
  const total = useReply(() => runCommand(item.list, { limit: 1 }).then((r) => r.meta.total), item.list);
  return (
    <Link
      to={item.path}
      data-testid={`count-${item.id}`}
      className={`flex items-center gap-3 rounded-lg border border-slate-200 bg-white px-4 py-3 hover:border-blue-300 hover:bg-blue-50/40 ${focusRing}`}
    >
      <span className="flex size-9 items-center justify-center rounded-md bg-slate-100 text-slate-600">
        <Icon name={item.icon} className="size-5" />
      </span>
      <span className="min-w-0">
        <span className="block text-xs text-slate-500">{t(item.titleKey)}</span>
        <span
          className="block text-xl font-semibold text-slate-900 tabular-nums"
          data-testid={`count-${item.id}-value`}
        >
          {total === null
            ? '…'
            : total === 'failed'
              ? '—'
              : formatCount(total, i18n.resolvedLanguage ?? 'en')}
        </span>
      </span>
    </Link>
  );
}
