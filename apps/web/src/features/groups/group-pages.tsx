import { useMemo } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type Group } from '@lintel/commands';
import { useCan } from '../../access/use-can';
import { DeleteRecordButton } from '../../commands/delete-button';
import { FormPage } from '../../forms/form-page';
import { useRecord } from '../../forms/use-record';
import type { FieldOverride } from '../../forms/command-form';
import { usePageTitle } from '../../layout/page-title';
import { useGoBack } from '../../nav/return-to';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';
import { openGenerateDialog } from './generate-dialog';
import { useLicenceOverrides } from './licence-fields';
import { GroupWhiteLabel } from './group-whitelabel';

const overrides: Record<string, FieldOverride> = { name: { autoFocus: true } };

/** /groups/add, with `?parent=<id>` when added from the tree. */
export function GroupAddPage() {
  const { t } = useTranslation();
  usePageTitle(t('groups.add_title'));
  const back = useGoBack('/groups');
  const parent = Number(useSearchParams()[0].get('parent'));
  const options = useMemo(() => (parent > 0 ? { preset: { parent_id: parent } } : {}), [parent]);
  const licence = useLicenceOverrides('group.create');
  const addOverrides = useMemo(() => ({ ...overrides, ...licence }), [licence]);
  return (
    <FormPage
      commandId="group.create"
      options={options}
      overrides={addOverrides}
      onDone={back}
      onCancel={back}
      doneMessage={t('groups.created')}
    />
  );
}

/** /groups/:id/edit: the group's fields; generate child groups; delete (a group with children or users is kept). */
export function GroupEditPage() {
  const { t } = useTranslation();
  const id = Number(useParams().id);
  const { record, error, formOptions } = useRecord<Group>('group', id);
  const back = useGoBack('/groups');
  const can = useCan();
  usePageTitle(record?.name ?? t('groups.edit_title'));
  const licence = useLicenceOverrides('group.update');
  // a group cannot be its own parent
  const editOverrides = useMemo<Record<string, FieldOverride>>(
    () => ({ ...overrides, ...licence, parent_id: { exclude: [id] } }),
    [id, licence],
  );

  if (error) return <FormError message={error} />;
  if (!record) return <Loading />;
  return (
    <div className="flex flex-col gap-4">
      <FormPage
        key={record.id}
        commandId="group.update"
        options={formOptions}
        overrides={editOverrides}
        readOnly={!can(getCommand('group.update').gates).can}
        onDone={back}
        onCancel={back}
        actions={
          <>
            <span className="text-xs text-slate-500">
              {t('groups.counts', { users: record.users_count, children: record.children_count })}
            </span>
            {can(getCommand('group.save_generated').gates).can && (
              <Button
                icon={<Icon name="wand" />}
                onClick={() => openGenerateDialog(id)}
                data-testid="generate-children"
              >
                {t('groups.generate')}
              </Button>
            )}
            {can(getCommand('group.delete').gates).can && (
              <DeleteRecordButton family="group" id={id} onDeleted={back} testId="delete-group" />
            )}
          </>
        }
      />
      {can(getCommand('group.whitelabel_get').gates).can && <GroupWhiteLabel id={id} />}
    </div>
  );
}
