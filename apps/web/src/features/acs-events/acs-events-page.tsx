import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { acsEventFields, type AcsEvent } from '@lintel/commands';
import { RealtimeTopics, type ListQuery, type WsServerMessage } from '@lintel/core';
import { api } from '../../api/client';
import { i18next } from '../../i18n';
import { usePageTitle } from '../../layout/page-title';
import { ResourceTable } from '../../resources/resource-table';
import type { ColumnOverride } from '../../resources/table-columns';
import { realtime } from '../../session/realtime';
import { useJumpToDay } from '../../resources/jump-to-day';

/** The ACS log journal: the table needs its noun, fields and the families its refs name. */
const acsEventResource = {
  noun: 'acs_event',
  fields: acsEventFields,
  refs: {
    device: { family: 'device' },
    domain: { family: 'group' },
    owner: { family: 'user' },
    identifier: { family: 'identifier' },
    rule: { family: 'access_rule' },
  },
};

/** The event type the server sends on `private-access-control` for each stored decision (events/define.ts). */
export const AcsEventCreated = 'AcsEventCreatedEvent';

/** A key's text in the interface language, else the code itself. */
const word = (key: string, code: string | null) => {
  if (!code) return '';
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : code;
};

/** Reloads when a decision arrives on the websocket: a counter to key a reload by. */
function useLiveAcsEvents(): number {
  const [tick, setTick] = useState(0);
  useEffect(
    () =>
      realtime.subscribe(RealtimeTopics.accessControl, (m: WsServerMessage) => {
        if (m.data.type === AcsEventCreated || m.data.type === 'resync') setTick((n) => n + 1);
      }),
    [],
  );
  return tick;
}

/** Downloads the decisions of the table's query as CSV: the server streams it (`acs_event.export`). */
async function downloadCsv(query: ListQuery, to: string | null) {
  const token = api.store.get()?.token;
  const args: Record<string, string> = { format: 'csv' };
  if (query.search) args.search = query.search;
  const filters = query.filters as unknown[] | undefined;
  if (filters?.length) args.filters = JSON.stringify(filters);
  if (query.match) args.match = query.match;
  if (query.sort) args.sort = query.sort;
  if (to) args.to = to;
  const res = await fetch(api.url('/access-control/events/export', args), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!res.ok) throw new Error(String(res.status));
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = 'access-control-events.csv';
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * /access-control/events: every decision at a door — the identifier, its owner, the device, granted or
 * denied and why (the catalogue's words) — newest first, live: a new decision reloads the table. A journal:
 * "jump to day" loads the page at the end of that day.
 */
export function AcsEventsPage() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('acs_events.title'));
  const lang = i18n.resolvedLanguage;
  const tick = useLiveAcsEvents();
  const columns = useMemo<Partial<Record<string, ColumnOverride<AcsEvent>>>>(() => {
    void lang;
    const owner = (r: AcsEvent) =>
      r.owner?.name ?? (r.owner_type === 'guest' ? word('acs_events.owner_types.guest', 'guest') : '');
    return {
      device: {
        render: (r) => r.device?.name ?? r.serial_number,
        text: (r) => r.device?.name ?? r.serial_number,
      },
      owner: { render: owner, text: owner },
      decision: {
        render: (r) => (
          <span className={r.decision === 'granted' ? 'text-emerald-700' : 'text-red-700'}>
            {word(`acs_events.decisions.${r.decision}`, r.decision)}
          </span>
        ),
        text: (r) => word(`acs_events.decisions.${r.decision}`, r.decision),
      },
      reason: {
        render: (r) => word(`errors:http.${r.reason}`, r.reason),
        text: (r) => word(`errors:http.${r.reason}`, r.reason),
      },
    };
  }, [lang]);
  const { to, listArgs, toolbar } = useJumpToDay();
  return (
    <ResourceTable<AcsEvent>
      resource={acsEventResource}
      listCommand="acs_event.list"
      columns={columns}
      storageKey="acs-events"
      toolbar={toolbar}
      listArgs={listArgs}
      refreshKey={tick}
      onExport={(query) => void downloadCsv(query, to).catch(() => undefined)}
    />
  );
}
