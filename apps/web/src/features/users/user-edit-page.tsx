import type { ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getCommand, type User } from '@lintel/commands';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { DeleteRecordButton } from '../../commands/delete-button';
import { openCommandForm } from '../../commands/dialogs';
import { execute } from '../../commands/execute';
import { FormPage } from '../../forms/form-page';
import { useRecord } from '../../forms/use-record';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { useGoBack } from '../../nav/return-to';
import { profileAtom } from '../../session/session';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';
import { userOverrides } from './user-form';
import { AvatarPanel } from './avatar-panel';

function Fact({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[7rem_1fr] gap-2 px-3 py-1.5 text-xs">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 truncate text-slate-900" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/**
 * /users/:id/edit: the user's fields, groups, role and markers; send the registration link, set a password,
 * delete, the photo. Read-only for those who may see but not edit the user.
 */
export function UserEditPage() {
  const { t } = useTranslation();
  const id = Number(useParams().id);
  const { record, setRecord, error, reload, formOptions } = useRecord<User>('user', id);
  const back = useGoBack('/users');
  const can = useCan();
  const me = useAtomValue(profileAtom);
  const formatDate = useFormatDate();
  usePageTitle(record?.name ?? t('users.edit_title'));

  const canEdit =
    can(getCommand('user.update').gates).can &&
    (me?.role.permissions.includes('users.edit_all') || me?.id === id);
  const canLink = can(getCommand('user.send_registration_link').gates).can;
  const canPassword = can(getCommand('user.password').gates).can && canEdit;
  const canDelete = can(getCommand('user.delete').gates).can && me?.id !== id;

  if (error) return <FormError message={error} />;
  if (!record) return <Loading />;

  async function sendLink() {
    try {
      await execute('user.send_registration_link', { id }, 'ui');
      pushAlert('success', t('users.link_sent', { email: record?.email ?? record?.login }));
      reload();
    } catch (err) {
      pushAlert('error', describeError(err).message);
    }
  }

  const aside = (
    <>
      <AvatarPanel user={record} onChange={(avatar_url) => setRecord({ ...record, avatar_url })} />
      <section className="rounded-lg border border-slate-200 bg-white" aria-label={t('users.status')}>
        <h2 className="border-b border-slate-200 px-3 py-2 text-xs font-semibold tracking-wide text-slate-600 uppercase">
          {t('users.status')}
        </h2>
        <dl className="py-1">
          <Fact label={t('users.state')} testId="user-state">
            {record.is_activated
              ? t('users.activated')
              : record.is_invited
                ? t('users.invited')
                : t('users.not_activated')}
          </Fact>
          <Fact label={t('users.created_at')}>{formatDate(record.created_at)}</Fact>
          <Fact label={t('users.created_by')}>{record.created_by_user?.name ?? '—'}</Fact>
          <Fact label={t('users.group_admin')}>
            {record.is_group_admin ? t('values.yes') : t('values.no')}
          </Fact>
        </dl>
      </section>
    </>
  );

  return (
    <FormPage
      key={record.id}
      commandId="user.update"
      options={formOptions}
      overrides={userOverrides}
      readOnly={!canEdit}
      onDone={back}
      onCancel={back}
      aside={aside}
      actions={
        <>
          {canLink && !record.is_activated && (
            <Button onClick={() => void sendLink()} icon={<Icon name="send" />} data-testid="send-link">
              {t('users.send_link')}
            </Button>
          )}
          {canPassword && (
            <Button
              onClick={() => openCommandForm('user.password', { fixed: { id } })}
              icon={<Icon name="key" />}
              data-testid="change-password"
            >
              {t('users.change_password')}
            </Button>
          )}
          {canDelete && <DeleteRecordButton family="user" id={id} onDeleted={back} testId="delete-user" />}
        </>
      }
    />
  );
}
