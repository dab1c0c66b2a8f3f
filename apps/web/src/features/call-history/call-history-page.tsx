import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { callHistoryFields, type CallHistoryItem } from '@lintel/commands';
import { i18next } from '../../i18n';
import { usePageTitle } from '../../layout/page-title';
import { ResourceTable } from '../../resources/resource-table';
import type { ColumnOverride } from '../../resources/table-columns';
import { useJumpToDay } from '../../resources/jump-to-day';

/** The call history journal: the table needs its noun and fields. */
const callHistoryResource = { noun: 'call_history', fields: callHistoryFields, refs: {} };

/** A call's result or direction in words of the interface language, else the code. */
const word = (prefix: 'call_history.results' | 'call_history.directions', value: string) => {
  const key = `${prefix}.${value}`;
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : value;
};

/** A party of a call: its number and, when the number has one, its person's name. */
const party = (p: CallHistoryItem['from']) => (p.user ? `${p.number} · ${p.user.name}` : p.number);

/**
 * /call-history (spec part 1 §2.1, "Phone settings"): every call of the project, newest first — who called
 * whom, how it ended (answered, cancelled, busy, no answer, failed), incoming or outgoing, and how long it
 * lasted. A journal: "jump to day" loads the page at the end of that day.
 */
export function CallHistoryPage() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('call_history.title'));
  const lang = i18n.resolvedLanguage;
  const columns = useMemo<Partial<Record<string, ColumnOverride<CallHistoryItem>>>>(() => {
    void lang;
    return {
      from_number: { render: (r) => party(r.from), text: (r) => party(r.from) },
      to_number: { render: (r) => party(r.to), text: (r) => party(r.to) },
      status: {
        render: (r) => word('call_history.results', r.status),
        text: (r) => word('call_history.results', r.status),
      },
      direction: {
        render: (r) => word('call_history.directions', r.direction),
        text: (r) => word('call_history.directions', r.direction),
      },
    };
  }, [lang]);
  const { listArgs, toolbar } = useJumpToDay();
  return (
    <ResourceTable<CallHistoryItem>
      resource={callHistoryResource}
      listCommand="call_history.list"
      columns={columns}
      storageKey="call-history"
      toolbar={toolbar}
      listArgs={listArgs}
    />
  );
}
