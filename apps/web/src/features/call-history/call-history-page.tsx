import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { callHistoryFields, type CallHistoryItem } from '@lintel/commands';
import { codeWord, JournalPage, type Journal } from '../../resources/journal-page';
import type { ColumnOverride } from '../../resources/table-columns';

/**
 * /call-history (spec part 1 §2.1, "Phone settings"): every call of the project, newest first — who called
 * whom, how it ended (answered, cancelled, busy, no answer, failed — and why a refused one was: a wrong
 * number…), incoming or outgoing, the SIP trunk it came in from or went out through, and how long it lasted.
 */
const callJournal: Journal = {
  resource: { noun: 'call_history', fields: callHistoryFields, refs: {} },
  listCommand: 'call_history.list',
  title: 'call_history.title',
  storageKey: 'call-history',
};

/** A party of a call: its number and, when the number has one, its person's name. */
const party = (p: CallHistoryItem['from']) => (p.user ? `${p.number} · ${p.user.name}` : p.number);

export function CallHistoryPage() {
  const { i18n } = useTranslation();
  const lang = i18n.resolvedLanguage;
  const columns = useMemo<Partial<Record<string, ColumnOverride<CallHistoryItem>>>>(() => {
    void lang;
    const status = (r: CallHistoryItem) => codeWord(`call_history.results.${r.status}`, r.status);
    const direction = (r: CallHistoryItem) => codeWord(`call_history.directions.${r.direction}`, r.direction);
    const reason = (r: CallHistoryItem) => codeWord(`call_history.reasons.${r.reason ?? ''}`, r.reason);
    const trunk = (r: CallHistoryItem) => r.trunk?.name ?? '';
    return {
      from_number: { render: (r) => party(r.from), text: (r) => party(r.from) },
      reason: { render: reason, text: reason },
      trunk_id: { render: trunk, text: trunk },
      to_number: { render: (r) => party(r.to), text: (r) => party(r.to) },
      status: { render: status, text: status },
      direction: { render: direction, text: direction },
    };
  }, [lang]);
  return <JournalPage<CallHistoryItem> journal={callJournal} columns={columns} />;
}
