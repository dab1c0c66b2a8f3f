import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { acsEventFields, type AcsEvent } from '@lintel/commands';
import { RealtimeTopics } from '@lintel/core';
import { codeWord, JournalPage, type Journal } from '../../resources/journal-page';
import type { ColumnOverride } from '../../resources/table-columns';

/** The event type the server sends on `private-access-control` for each stored decision (events/define.ts). */
export const AcsEventCreated = 'AcsEventCreatedEvent';

/**
 * /access-control/events: every decision at a door — the identifier, its owner, the device, granted or
 * denied and why (the catalogue's words) — newest first, live: a new decision reloads the table.
 */
const acsJournal: Journal = {
  resource: {
    noun: 'acs_event',
    fields: acsEventFields,
    refs: {
      device: { family: 'device' },
      domain: { family: 'group' },
      owner: { family: 'user' },
      identifier: { family: 'identifier' },
      rule: { family: 'access_rule' },
    },
  },
  listCommand: 'acs_event.list',
  title: 'acs_events.title',
  storageKey: 'acs-events',
  live: { topic: RealtimeTopics.accessControl, eventType: AcsEventCreated },
  export: { path: '/access-control/events/export', file: 'access-control-events.csv' },
};

export function AcsEventsPage() {
  const { i18n } = useTranslation();
  const lang = i18n.resolvedLanguage;
  const columns = useMemo<Partial<Record<string, ColumnOverride<AcsEvent>>>>(() => {
    void lang;
    const owner = (r: AcsEvent) =>
      r.owner?.name ?? (r.owner_type === 'guest' ? codeWord('acs_events.owner_types.guest', 'guest') : '');
    const decision = (r: AcsEvent) => codeWord(`acs_events.decisions.${r.decision}`, r.decision);
    const reason = (r: AcsEvent) => codeWord(`errors:http.${r.reason}`, r.reason);
    const type = (r: AcsEvent) => codeWord(`values.type.${r.identifier_type}`, r.identifier_type);
    // the widths fit a 1280-pixel screen's table: the time whole, and the reason, which says why, readable
    return {
      created_at: { width: 176 },
      device: {
        render: (r) => r.device?.name ?? r.serial_number,
        text: (r) => r.device?.name ?? r.serial_number,
        width: 150,
      },
      identifier_number: { width: 130 },
      identifier_type: { render: type, text: type, width: 112 },
      owner: { render: owner, text: owner, width: 110 },
      decision: {
        render: (r) => (
          <span className={r.decision === 'granted' ? 'text-emerald-700' : 'text-red-700'}>
            {decision(r)}
          </span>
        ),
        text: decision,
        width: 90,
      },
      reason: { render: reason, text: reason, width: 214 },
    };
  }, [lang]);
  return <JournalPage<AcsEvent> journal={acsJournal} columns={columns} />;
}
