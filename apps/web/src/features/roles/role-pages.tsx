import { useMemo } from 'react';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type Role } from '@lintel/commands';
import { useCan } from '../../access/use-can';
import { deleteRows } from '../../commands/delete-rows';
import { FormPage } from '../../forms/form-page';
import { useRecord } from '../../forms/use-record';
import { usePageTitle } from '../../layout/page-title';
import { useGoBack } from '../../nav/return-to';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/field';
import { Icon, Spinner } from '../../ui/icon';
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
  const { record, error } = useRecord<Role>('role', id);
  const back = useGoBack('/roles');
  const can = useCan();
  usePageTitle(record?.name ?? t('roles.edit_title'));
  const options = useMemo(
    () => ({ record: record as unknown as Record<string, unknown>, fixed: { id } }),
    [record, id],
  );
  // a role cannot list itself among the roles its holders may assign
  const editOverrides = useMemo<Record<string, FieldOverride>>(
    () => ({ ...overrides, available_roles: { exclude: [id] } }),
    [id],
  );

  if (error) return <FormError message={error} />;
  if (!record)
    return (
      <div role="status" className="flex items-center gap-2 text-sm text-slate-500">
        <Spinner />
        {t('layout.loading')}
      </div>
    );
  const canDelete = can(getCommand('role.delete').gates).can && !record.is_system;
  return (
    <FormPage
      key={record.id}
      commandId="role.update"
      options={options}
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
            <Button
              variant="ghost"
              className="text-red-700"
              icon={<Icon name="trash" />}
              data-testid="delete-role"
              onClick={() => void deleteRows('role', [id], { gently: true }).then((done) => done && back())}
            >
              {t('delete.one')}
            </Button>
          )}
        </>
      }
    />
  );
}
