import { useMemo } from 'react';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type Role } from '@lintel/commands';
import { useCan } from '../../access/use-can';
import { DeleteRecordButton } from '../../commands/delete-button';
import { FormPage } from '../../forms/form-page';
import { useRecord } from '../../forms/use-record';
import { usePageTitle } from '../../layout/page-title';
import { useGoBack } from '../../nav/return-to';
import { FormError, Loading } from '../../ui/field';
import type { FieldOverride } from '../../forms/command-form';

const overrides: Record<string, FieldOverride> = { name: { autoFocus: true } };

/** /roles/add: name, description, permissions by category, the roles its holders may assign. */
export function RoleAddPage() {
  const { t } = useTranslation();
  usePageTitle(t('roles.add_title'));
  const back = useGoBack('/roles');
  return (
    <FormPage
      commandId="role.create"
      overrides={overrides}
      onDone={back}
      onCancel={back}
      doneMessage={t('roles.created')}
    />
  );
}

/** /roles/:id/edit. A built-in role cannot be deleted (the server keeps it); its permissions may change. */
export function RoleEditPage() {
  const { t } = useTranslation();
  const id = Number(useParams().id);
  const { record, error, formOptions } = useRecord<Role>('role', id);
  const back = useGoBack('/roles');
  const can = useCan();
  usePageTitle(record?.name ?? t('roles.edit_title'));
  // a role cannot list itself among the roles its holders may assign
  const editOverrides = useMemo<Record<string, FieldOverride>>(
    () => ({ ...overrides, available_roles: { exclude: [id] } }),
    [id],
  );

  if (error) return <FormError message={error} />;
  if (!record) return <Loading />;
  const canDelete = can(getCommand('role.delete').gates).can && !record.is_system;
  return (
    <FormPage
      key={record.id}
      commandId="role.update"
      options={formOptions}
      overrides={editOverrides}
      readOnly={!can(getCommand('role.update').gates).can}
      onDone={back}
      onCancel={back}
      actions={
        <>
          <span className="text-xs text-slate-500" data-testid="role-users">
            {t('roles.held_by', { count: record.users_count })}
          </span>
          {canDelete && (
            <DeleteRecordButton
              family="role"
              id={id}
              onDeleted={back}
              extra={{ gently: true }}
              testId="delete-role"
            />
          )}
        </>
      }
    />
  );
}
