import { useMemo } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, roleResource, type Role } from '@lintel/commands';
import { useCan } from '../../access/use-can';
import { deleteRows } from '../../commands/delete-rows';
import { dataVersionAtom } from '../../commands/execute';
import { useFloatingAction } from '../../layout/fab';
import { usePageTitle } from '../../layout/page-title';
import { useOpenWithReturn } from '../../nav/return-to';
import { ResourceTable, type BulkAction } from '../../resources/resource-table';

/** /roles: the roles (profiles) the caller may see. */
export function RolesPage() {
  const { t } = useTranslation();
  usePageTitle(t('roles.title'));
  const can = useCan();
  const open = useOpenWithReturn();
  const version = useAtomValue(dataVersionAtom);
  const mayCreate = can(getCommand('role.create').gates).can;
  const mayDelete = can(getCommand('role.delete_all').gates).can;

  useFloatingAction(
    mayCreate ? { labelKey: 'roles.add', onClick: () => open('/roles/add'), testId: 'add-role' } : null,
  );

  const bulk = useMemo<BulkAction[]>(
    // gently: a role that users hold is kept and reported (docs/decisions.md)
    () =>
      mayDelete
        ? [
            {
              id: 'delete',
              labelKey: 'delete.selected',
              danger: true,
              run: async (ids) => void (await deleteRows('role', ids, { gently: true })),
            },
          ]
        : [],
    [mayDelete],
  );

  return (
    <ResourceTable<Role>
      resource={roleResource}
      onOpen={(row) => open(`/roles/${row.id}/edit`)}
      rowHref={(row) => `/roles/${row.id}/edit`}
      bulkActions={bulk}
      storageKey="roles"
      refreshKey={version}
    />
  );
}
