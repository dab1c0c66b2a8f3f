import type { CommandId } from '@lintel/commands';
import { pushAlert } from '../alerts/alerts';
import { i18next } from '../i18n';
import { confirmAction } from './dialogs';
import { execute } from './execute';

const tr = (key: string, params?: Record<string, unknown>): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);

interface DeleteAllReply {
  deleted: number[];
  not_deleted: { id: number; reason: string; dependencies?: Record<string, number> }[];
}

/**
 * Deletes rows with the family's `delete_all` after asking, and says what happened: how many went, and for
 * the rest why not (the catalogue reason and what depends on them). True when anything was deleted.
 */
export async function deleteRows(
  family: string,
  ids: number[],
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  if (!ids.length) return false;
  const ok = await confirmAction({
    title: tr(`commands:${family}.delete_all.label`),
    message: tr('delete.confirm', { count: ids.length }),
    approveLabel: tr('delete.approve'),
    danger: true,
  });
  if (!ok) return false;
  const reply = (await execute(
    `${family}.delete_all` as CommandId as 'user.delete_all',
    { items: ids, ...extra },
    'ui',
  )) as DeleteAllReply;
  if (reply.deleted.length) pushAlert('success', tr('delete.deleted', { count: reply.deleted.length }));
  if (reply.not_deleted.length) {
    const reasons = [
      ...new Set(
        reply.not_deleted.map((n) => {
          const key =
            [`errors:http.${n.reason}`, `delete.reasons.${n.reason}`].find((k) => i18next.exists(k)) ?? '';
          const deps = Object.entries(n.dependencies ?? {})
            .map(([what, count]) =>
              tr('delete.dependency', { what: tr(`delete.dependencies.${what}`), count }),
            )
            .join(', ');
          return `${key ? tr(key) : n.reason}${deps ? ` (${deps})` : ''}`;
        }),
      ),
    ];
    pushAlert(
      'warning',
      tr('delete.not_deleted', { count: reply.not_deleted.length, reasons: reasons.join('; ') }),
    );
  }
  return reply.deleted.length > 0;
}
