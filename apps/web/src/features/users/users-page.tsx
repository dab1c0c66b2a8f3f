import { useCallback, useMemo, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, userResource, type User } from '@lintel/commands';
import type { ListQuery } from '@lintel/core';
import { useCan } from '../../access/use-can';
import { deleteRows } from '../../commands/delete-rows';
import { dataVersionAtom } from '../../commands/execute';
import { useFloatingAction } from '../../layout/fab';
import { usePageTitle } from '../../layout/page-title';
import { useOpenWithReturn } from '../../nav/return-to';
import { ResourceTable, type BulkAction } from '../../resources/resource-table';
import { ExportUsersDialog } from './export-dialog';

/** /users: every user the caller may see, dense, with add, delete and export of what the table shows. */
export function UsersPage() {
  const { t } = useTranslation();
  usePageTitle(t('users.title'));
  const can = useCan();
  const open = useOpenWithReturn();
  const version = useAtomValue(dataVersionAtom);
  const mayCreate = can(getCommand('user.create').gates).can;
  const mayDelete = can(getCommand('user.delete_all').gates).can;
  // export reads the list page by page: the list's own gates, as the CLI's `users export`
  const mayExport = can(getCommand('user.list').gates).can;
  const [exporting, setExporting] = useState<{ query: ListQuery; key: number } | null>(null);
  const onExport = useCallback(
    (query: ListQuery) => setExporting((e) => ({ query, key: (e?.key ?? 0) + 1 })),
    [],
  );

  useFloatingAction(
    mayCreate ? { labelKey: 'users.add', onClick: () => open('/users/add'), testId: 'add-user' } : null,
  );

  const bulk = useMemo<BulkAction[]>(
    () =>
      mayDelete
        ? [
            {
              id: 'delete',
              labelKey: 'delete.selected',
              danger: true,
              run: async (ids) => void (await deleteRows('user', ids)),
            },
          ]
        : [],
    [mayDelete],
  );

  return (
    <>
      <ResourceTable<User>
        resource={userResource}
        onOpen={(row) => open(`/users/${row.id}/edit`)}
        rowHref={(row) => `/users/${row.id}/edit`}
        bulkActions={bulk}
        storageKey="users"
        refreshKey={version}
        onExport={mayExport ? onExport : undefined}
      />
      {exporting && (
        <ExportUsersDialog key={exporting.key} query={exporting.query} onClose={() => setExporting(null)} />
      )}
    </>
  );
}
