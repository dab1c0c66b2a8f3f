import type { BulkAction } from '../../resources/resource-table';
import { pushAlert } from '../../alerts/alerts';
import { confirmAction } from '../../commands/dialogs';
import { execute } from '../../commands/execute';
import { namesOf } from '../../commands/delete-rows';
import { i18next } from '../../i18n';

const tr = (key: string, params?: Record<string, unknown>): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);

/**
 * Revokes the selected identifiers (spec part 1 §4: active → revoked) after asking — Cancel has the focus — one
 * `identifier.revoke` each: the device sync takes each off its devices, which refuse it from then on.
 */
export async function revokeRows(ids: number[]): Promise<void> {
  if (!ids.length) return;
  const names = namesOf('identifier', ids);
  const ok = await confirmAction({
    title: tr('identifiers.revoke.title'),
    message: tr('identifiers.revoke.confirm', { count: ids.length, names }),
    approveLabel: tr('identifiers.revoke.approve'),
    danger: true,
  });
  if (!ok) return;
  for (const id of ids) await execute('identifier.revoke', { id }, 'ui');
  pushAlert('success', tr('identifiers.revoke.done', { count: ids.length, names }));
}

/** The identifiers list's bulk action "Revoke" (beside Delete). */
export const revokeAction: BulkAction = {
  id: 'revoke',
  labelKey: 'identifiers.revoke.selected',
  danger: true,
  run: revokeRows,
};
