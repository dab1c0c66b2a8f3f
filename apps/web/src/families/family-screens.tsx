import { useMemo, type ReactNode } from 'react';
import { useParams } from 'react-router';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, resources, type AnyResource, type CommandId } from '@lintel/commands';
import { useCan } from '../access/use-can';
import { DeleteRecordButton } from '../commands/delete-button';
import { deleteRows } from '../commands/delete-rows';
import { dataVersionAtom } from '../commands/execute';
import { FormPage } from '../forms/form-page';
import { useRecord } from '../forms/use-record';
import type { Family } from '../forms/schema';
import type { FieldOverride } from '../forms/command-form';
import { useFloatingAction } from '../layout/fab';
import { usePageTitle } from '../layout/page-title';
import { useGoBack, useOpenWithReturn } from '../nav/return-to';
import { ResourceTable, type BulkAction } from '../resources/resource-table';
import { FormError, Loading } from '../ui/field';
import type { PageDef } from '../nav/pages';
import { pageKeyOf, screenChoice } from './family-pages';
import { QrPreviewButton } from '../features/identifiers/qr-preview';
import { FacePhotoButton } from '../features/identifiers/face-photo';
import { revokeAction } from '../features/identifiers/revoke-rows';

const gates = (r: AnyResource, verb: string) => getCommand(`${r.noun}.${verb}` as CommandId).gates;

/** The first field of the create form takes the cursor. */
function firstFieldFocus(r: AnyResource): Record<string, FieldOverride> {
  const first = Object.keys(r.createArgs.shape)[0];
  return first ? { [first]: { autoFocus: true } } : {};
}

/** A family's list page from its declaration: its table, Add (with the permission), delete of the selected rows. */
export function FamilyListPage({ resource }: { resource: AnyResource }) {
  const { t } = useTranslation();
  // keys of the family's pages, named by its declaration
  const tr = t as unknown as (k: string) => string;
  const key = pageKeyOf(resource);
  usePageTitle(tr(`${key}.title`));
  const can = useCan();
  const open = useOpenWithReturn();
  const version = useAtomValue(dataVersionAtom);
  const path = resource.ui!.path;
  const mayCreate = can(gates(resource, 'create')).can;
  const mayDelete = can(gates(resource, 'delete_all')).can;
  // identifiers are also revoked from their list (spec part 1 §4: active → revoked)
  const mayRevoke = resource.noun === 'identifier' && can(getCommand('identifier.revoke').gates).can;

  useFloatingAction(
    mayCreate
      ? { labelKey: `${key}.add`, onClick: () => open(`${path}/add`), testId: `add-${resource.noun}` }
      : null,
  );

  const bulk = useMemo<BulkAction[]>(
    () => [
      ...(mayRevoke ? [revokeAction] : []),
      ...(mayDelete
        ? [
            {
              id: 'delete',
              labelKey: 'delete.selected',
              danger: true,
              run: async (ids: number[]) => void (await deleteRows(resource.noun, ids)),
            },
          ]
        : []),
    ],
    [mayDelete, mayRevoke, resource],
  );

  return (
    <ResourceTable<{ id: number }>
      resource={resource}
      onOpen={(row) => open(`${path}/${row.id}/edit`)}
      rowHref={(row) => `${path}/${row.id}/edit`}
      bulkActions={bulk}
      storageKey={resource.noun}
      refreshKey={version}
    />
  );
}

/** A family's add page: the generated form of `<noun>.create`. */
export function FamilyAddPage({ resource }: { resource: AnyResource }) {
  const { t } = useTranslation();
  // keys of the family's pages, named by its declaration
  const tr = t as unknown as (k: string) => string;
  const key = pageKeyOf(resource);
  usePageTitle(tr(`${key}.add_title`));
  const back = useGoBack(resource.ui!.path);
  const overrides = useMemo(() => firstFieldFocus(resource), [resource]);
  return (
    <FormPage
      commandId={`${resource.noun}.create`}
      overrides={overrides}
      onDone={back}
      onCancel={back}
      doneMessage={tr(`${key}.created`)}
    />
  );
}

/** A family's edit page: the row loaded into `<noun>.update`'s form, read-only without the permission, Delete. */
export function FamilyEditPage({ resource }: { resource: AnyResource }) {
  const { t } = useTranslation();
  // keys of the family's pages, named by its declaration
  const tr = t as unknown as (k: string) => string;
  const key = pageKeyOf(resource);
  const id = Number(useParams().id);
  const { record, error, formOptions } = useRecord<{ id: number; name: string; type?: string }>(
    resource.noun as Family,
    id,
  );
  const back = useGoBack(resource.ui!.path);
  const can = useCan();
  // a record without a name (an identifier may have none) is titled by its family: never an empty heading
  usePageTitle(record?.name || tr(`${key}.edit_title`));
  const overrides = useMemo(() => firstFieldFocus(resource), [resource]);

  if (error) return <FormError message={error} />;
  if (!record) return <Loading />;
  return (
    <FormPage
      key={record.id}
      commandId={`${resource.noun}.update`}
      options={formOptions}
      overrides={overrides}
      readOnly={!can(gates(resource, 'update')).can}
      onDone={back}
      onCancel={back}
      actions={
        <>
          {/* a QR identifier's code, files and wallet pass (spec part 1 §2.4 "QR preview") */}
          {resource.noun === 'identifier' && record.type === 'qr' && <QrPreviewButton id={id} />}
          {/* a face identifier's photo, shown and uploaded (checked like an avatar) */}
          {resource.noun === 'identifier' && record.type === 'face' && <FacePhotoButton id={id} />}
          {can(gates(resource, 'delete')).can && (
            <DeleteRecordButton
              family={resource.noun}
              id={id}
              onDeleted={back}
              testId={`delete-${resource.noun}`}
            />
          )}
        </>
      }
    />
  );
}

/** A page's screen: its own (`overrides`, by page id), else the generated list, add or edit page of its family. */
export function screenOf(
  page: PageDef,
  overrides: Readonly<Record<string, ReactNode>>,
  families: readonly AnyResource[] = resources,
): ReactNode {
  const choice = screenChoice(page, overrides, families);
  if (!choice) return null;
  if (choice.own) return overrides[page.id];
  if (choice.view === 'add') return <FamilyAddPage resource={choice.resource} />;
  if (choice.view === 'edit') return <FamilyEditPage resource={choice.resource} />;
  return <FamilyListPage resource={choice.resource} />;
}
