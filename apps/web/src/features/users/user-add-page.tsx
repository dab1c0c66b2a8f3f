import { useTranslation } from 'react-i18next';
import { FormPage } from '../../forms/form-page';
import { usePageTitle } from '../../layout/page-title';
import { useGoBack } from '../../nav/return-to';
import { userOverrides } from './user-form';

/** /users/add: a new user; with "send the registration link" (on by default) the person sets a password. */
export function UserAddPage() {
  const { t } = useTranslation();
  usePageTitle(t('users.add_title'));
  const back = useGoBack('/users');
  return (
    <FormPage
      commandId="user.create"
      overrides={userOverrides}
      onDone={back}
      onCancel={back}
      doneMessage={t('users.created')}
    />
  );
}
