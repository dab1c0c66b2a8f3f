import { useMemo } from 'react';
import { useAtomValue } from 'jotai';
import { useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, groupResource, type Group } from '@lintel/commands';
import { useCan } from '../../access/use-can';
import { deleteRows } from '../../commands/delete-rows';
import { dataVersionAtom } from '../../commands/execute';
import { useFloatingAction } from '../../layout/fab';
import { usePageTitle } from '../../layout/page-title';
import { useOpenWithReturn } from '../../nav/return-to';
import { ResourceTable, type BulkAction } from '../../resources/resource-table';
import { Button, focusRing } from '../../ui/button';
import { Icon } from '../../ui/icon';
import { openGenerateDialog } from './generate-dialog';
import { GroupTree } from './group-tree';

/** /groups: the hierarchy as a tree, or every group as a table; add, generate, delete. */
export function GroupsPage() {
  const { t } = useTranslation();
  usePageTitle(t('groups.title'));
  const [params, setParams] = useSearchParams();
  const view = params.get('view') === 'table' ? 'table' : 'tree';
  const can = useCan();
  const open = useOpenWithReturn();
  const version = useAtomValue(dataVersionAtom);
  const mayCreate = can(getCommand('group.create').gates).can;
  const mayGenerate = can(getCommand('group.save_generated').gates).can;
  const mayDelete = can(getCommand('group.delete_all').gates).can;

  useFloatingAction(
    mayCreate ? { labelKey: 'groups.add', onClick: () => open('/groups/add'), testId: 'add-group' } : null,
  );

  const bulk = useMemo<BulkAction[]>(
    () =>
      mayDelete
        ? [
            {
              id: 'delete',
              labelKey: 'delete.selected',
              danger: true,
              run: async (ids) => void (await deleteRows('group', ids)),
            },
          ]
        : [],
    [mayDelete],
  );

  const tools = (
    <>
      <div
        role="group"
        aria-label={t('groups.view')}
        className="inline-flex rounded-md border border-slate-300 bg-white p-0.5"
      >
        {(['tree', 'table'] as const).map((v) => (
          <button
            key={v}
            type="button"
            aria-pressed={view === v}
            data-testid={`view-${v}`}
            onClick={() =>
              setParams(
                (p) => {
                  const next = new URLSearchParams(p);
                  next.set('view', v);
                  return next;
                },
                { replace: true },
              )
            }
            className={`inline-flex h-6 items-center gap-1 rounded px-2 text-xs font-medium ${focusRing} ${view === v ? 'bg-slate-800 text-white' : 'text-slate-600 hover:bg-slate-100'}`}
          >
            <Icon name={v} className="size-3.5" />
            {t(`groups.view_${v}`)}
          </button>
        ))}
      </div>
      {mayGenerate && (
        <Button
          size="sm"
          icon={<Icon name="wand" className="size-3.5" />}
          onClick={() => openGenerateDialog(null)}
          data-testid="generate-groups"
        >
          {t('groups.generate')}
        </Button>
      )}
    </>
  );

  if (view === 'table')
    return (
      <ResourceTable<Group>
        resource={groupResource}
        onOpen={(row) => open(`/groups/${row.id}/edit`)}
        rowHref={(row) => `/groups/${row.id}/edit`}
        bulkActions={bulk}
        toolbar={tools}
        storageKey="groups"
        refreshKey={version}
      />
    );
  return (
    <GroupTree
      toolbar={tools}
      refreshKey={version}
      onOpen={(id) => open(`/groups/${id}/edit`)}
      onAddChild={mayCreate ? (id) => open(`/groups/add?parent=${id}`) : undefined}
    />
  );
}
