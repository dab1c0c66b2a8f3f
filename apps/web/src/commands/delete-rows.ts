import { familyCommandId } from '@lintel/commands';
import { pushAlert } from '../alerts/alerts';
import { inChunks } from '../resources/bulk-ids';
import { i18next } from '../i18n';
import { knownName, rememberName } from '../pickers/names';
import { runCommand } from '../api/client';
import type { Family } from '../forms/schema';
import { confirmAction } from './dialogs';
import { execute } from './execute';
import { offerUndo } from './undo';

const tr = (key: string, params?: Record<string, unknown>): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);

interface DeleteAllReply {
  deleted: number[];
  not_deleted: { id: number; reason: string; dependencies?: Record<string, number> }[];
}

/** Asks for the names of the first few rows not seen yet, so the question can name them (`#id` if that fails). */
async function learnNames(family: string, ids: number[]): Promise<void> {
  await Promise.all(
    ids
      .slice(0, 5)
      .filter((id) => !knownName(family as Family, id))
      .map((id) =>
        runCommand(familyCommandId(family, 'get'), { id })
          .then((r) => {
            const name = (r as { name?: unknown }).name;
            if (typeof name === 'string') rememberName(family as Family, id, name);
          })
          .catch(() => undefined),
      ),
  );
}

/** What a delete names: the rows' names as seen in lists and pickers (`#id` for one not seen), a few at most. */
export function namesOf(family: string, ids: number[]): string {
  const shown = ids.slice(0, 5).map((id) => {
    const name = knownName(family as Family, id);
    return name ? `«${name}»` : `#${id}`;
  });
  return ids.length > shown.length ? `${shown.join(', ')} …` : shown.join(', ');
}

/** Why rows stay, in words: the catalogue reason and what depends on them, each reason once. */
function reasonsOf(notDeleted: DeleteAllReply['not_deleted']): string {
  return [
    ...new Set(
      notDeleted.map((n) => {
        const key =
          [`errors:http.${n.reason}`, `delete.reasons.${n.reason}`].find((k) => i18next.exists(k)) ?? '';
        const deps = Object.entries(n.dependencies ?? {})
          .map(([what, count]) => tr('delete.dependency', { what: tr(`delete.dependencies.${what}`), count }))
          .join(', ');
        return `${key ? tr(key) : n.reason}${deps ? ` (${deps})` : ''}`;
      }),
    ),
  ].join('; ');
}

/** `delete_all` over many ids, a chunk at a time (resources/bulk-ids.ts), as one reply. */
async function deleteAll(
  family: string,
  ids: number[],
  extra: Record<string, unknown>,
): Promise<DeleteAllReply> {
  const replies = await inChunks(
    ids,
    async (items) =>
      (await execute(familyCommandId(family, 'delete_all'), { items, ...extra }, 'ui')) as DeleteAllReply,
  );
  return {
    deleted: replies.flatMap((r) => r.deleted),
    not_deleted: replies.flatMap((r) => r.not_deleted),
  };
}

/**
 * Deletes rows with the family's `delete_all` after asking (the question names them; Cancel has the focus,
 * so a reflex Enter keeps them), waits UNDO_MS with Undo in an alert, then sends and says what happened: how
 * many went, and for the rest why not (the catalogue reason and what depends on them). What would stay is
 * known before the question — a dry run of the same call —, so the question says it, and rows none of which
 * can go are not asked about at all (a role in use was refused only after the question and the undo).
 * `onConfirmed` runs as soon as the person said yes (an edit page goes back to its list). True when anything
 * was deleted.
 */
export async function deleteRows(
  family: string,
  ids: number[],
  extra: Record<string, unknown> = {},
  onConfirmed?: () => void,
): Promise<boolean> {
  if (!ids.length) return false;
  const [dry] = await Promise.all([
    deleteAll(family, ids, { ...extra, dry_run: true }),
    learnNames(family, ids),
  ]);
  if (!dry.deleted.length) {
    pushAlert(
      'warning',
      tr('delete.none_possible', {
        count: ids.length,
        names: namesOf(family, ids),
        reasons: reasonsOf(dry.not_deleted),
      }),
    );
    return false;
  }
  const going = dry.deleted;
  const names = namesOf(family, going);
  const kept = dry.not_deleted.length
    ? `\n\n${tr('delete.will_keep', {
        count: dry.not_deleted.length,
        names: namesOf(
          family,
          dry.not_deleted.map((n) => n.id),
        ),
        reasons: reasonsOf(dry.not_deleted),
      })}`
    : '';
  const ok = await confirmAction({
    title: tr(`commands:${family}.delete_all.label`),
    message: tr('delete.confirm', { count: going.length, names }) + kept,
    approveLabel: tr('delete.approve'),
    danger: true,
  });
  if (!ok) return false;
  onConfirmed?.();
  if (await offerUndo(tr('delete.pending', { count: going.length, names }))) {
    pushAlert('info', tr('delete.undone', { names }));
    return false;
  }
  // what changed since the dry run (another user, a new member) is still said after
  const reply = await deleteAll(family, going, extra);
  if (reply.deleted.length) pushAlert('success', tr('delete.deleted', { count: reply.deleted.length }));
  if (reply.not_deleted.length)
    pushAlert(
      'warning',
      tr('delete.not_deleted', { count: reply.not_deleted.length, reasons: reasonsOf(reply.not_deleted) }),
    );
  return reply.deleted.length > 0;
}
