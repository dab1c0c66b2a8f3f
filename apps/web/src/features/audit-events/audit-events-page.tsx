import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { auditEventFields, type AuditEvent } from '@lintel/commands';
import { i18next } from '../../i18n';
import { usePageTitle } from '../../layout/page-title';
import { ResourceTable } from '../../resources/resource-table';
import type { ColumnOverride } from '../../resources/table-columns';

/** The audit list is not a generic family; the table needs only its noun and fields. */
const auditResource = { noun: 'audit_event', fields: auditEventFields };

const word = (prefix: string, value: string | null) => {
  if (!value) return '';
  const key = `${prefix}.${value}`;
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : value;
};

/** /audit-events: who did what, when and from where; newest first. */
export function AuditEventsPage() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('audit.title'));
  const lang = i18n.resolvedLanguage;
  // actions and entities are codes: shown in words of the interface language
  const columns = useMemo<Partial<Record<string, ColumnOverride<AuditEvent>>>>(() => {
    void lang;
    return {
      action: {
        render: (r) => word('audit.actions', r.action),
        text: (r) => word('audit.actions', r.action),
      },
      entity: {
        render: (r) => word('audit.entities', r.entity),
        text: (r) => word('audit.entities', r.entity),
      },
    };
  }, [lang]);
  return (
    <ResourceTable<AuditEvent>
      resource={auditResource}
      listCommand="audit_event.list"
      columns={columns}
      storageKey="audit-events"
    />
  );
}
