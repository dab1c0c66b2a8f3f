import { useTranslation } from 'react-i18next';
import { Button } from '../ui/button';
import { Icon } from '../ui/icon';
import { deleteRows } from './delete-rows';

/**
 * The edit screen's "Delete": asks, goes back, and deletes the one record through the family's delete_all
 * once the Undo time is over.
 */
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
      onClick={() => void deleteRows(family, [id], extra, onDeleted)}
    >
      {t('delete.one')}
    </Button>
  );
}
