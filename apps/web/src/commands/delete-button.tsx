import { useTranslation } from 'react-i18next';
import { Button } from '../ui/button';
import { Icon } from '../ui/icon';
import { deleteRows } from './delete-rows';

/** The edit screen's "Delete": asks, deletes the one record through the family's delete_all, then goes back. */
export function DeleteRecordButton({
  family,
  id,
  onDeleted,
  extra,
  testId,
}: {
  family: string;
  id: number;
  onDeleted: () => void;
  extra?: Record<string, unknown>;
  testId: string;
}) {
  const { t } = useTranslation();
  return (
    <Button
      variant="ghost"
      className="text-red-700"
      icon={<Icon name="trash" />}
      data-testid={testId}
      onClick={() => void deleteRows(family, [id], extra).then((done) => done && onDeleted())}
    >
      {t('delete.one')}
    </Button>
  );
}
