import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { auditEventFields, type AuditEvent } from '@lintel/commands';
import { i18next } from '../../i18n';
import { usePageTitle } from '../../layout/page-title';
import { ResourceTable } from '../../resources/resource-table';
import type { ColumnOverride } from '../../resources/table-columns';
import { useJumpToDay } from '../../resources/jump-to-day';

/** The audit list is not a generic family; the table needs only its noun and fields. */
const auditResource = {
  noun: 'audit_event',
  fields: auditEventFields,
  // who did it: filtered with the users' picker, read by name
  refs: { user: { family: 'user' } },
};

/** An action or entity code in words of the interface language (`audit.actions.login`), else the code. */
export const auditWord = (prefix: 'audit.actions' | 'audit.entities', value: string | null) => {
  if (!value) return '';
  const key = `${prefix}.${value}`;
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : value;
};

/**
 * /audit-events: who did what, when and from where; newest first. The log is a journal: "jump to day"
 * loads the page at the end of that day (the server's `to`) without reading the rows after it.
 */
export function AuditEventsPage() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('audit.title'));
  const lang = i18n.resolvedLanguage;
  // actions and entities are codes: shown in words of the interface language
  const columns = useMemo<Partial<Record<string, ColumnOverride<AuditEvent>>>>(() => {
    void lang;
    return {
      action: {
        render: (r) => auditWord('audit.actions', r.action),
        text: (r) => auditWord('audit.actions', r.action),
      },
      entity: {
        render: (r) => auditWord('audit.entities', r.entity),
        text: (r) => auditWord('audit.entities', r.entity),
      },
    };
  }, [lang]);
  const { listArgs, toolbar } = useJumpToDay();
  return (
    <ResourceTable<AuditEvent>
      resource={auditResource}
      listCommand="audit_event.list"
      columns={columns}
      storageKey="audit-events"
      toolbar={toolbar}
      listArgs={listArgs}
    />
  );
}
