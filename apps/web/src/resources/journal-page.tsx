import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ParseKeys } from 'i18next';
import type { ListQuery, WsServerMessage } from '@lintel/core';
import { api } from '../api/client';
import { i18next } from '../i18n';
import { usePageTitle } from '../layout/page-title';
import { realtime } from '../session/realtime';
import { ResourceTable } from './resource-table';
import type { TableResource } from './table-query';
import type { ColumnOverride } from './table-columns';
import { useJumpToDay } from './jump-to-day';

/**
 * A journal of the console (device events, the ACS log, call history, and the journals to come): a table of
 * rows newest first, with "jump to day", optionally live (an event of its topic reloads it) and exportable
 * (the server streams the table's query as CSV). A journal page is this declaration and its columns.
 */
export interface Journal {
  /** the table's family: noun, fields and the families its refs name */
  resource: TableResource;
  /** its list command */
  listCommand: string;
  /** the page title's key */
  title: ParseKeys<'web'>;
  /** column choice and widths remembered under this key */
  storageKey: string;
  /** live: the websocket topic and the event type the server sends on it for each new row */
  live?: { topic: string; eventType: string };
  /** the export: the API path that streams the rows, and the downloaded file's name */
  export?: { path: string; file: string };
}

/** A code in words of the interface language (the key under which the locales hold it), else the code. */
export const codeWord = (key: string, code: string | null | undefined): string => {
  if (!code) return '';
  return i18next.exists(key) ? (i18next.t as unknown as (k: string) => string)(key) : code;
};

/** Reloads when a new row arrives on the websocket (or it asks for a resync): a counter to key a reload by. */
export function useLiveJournal(live: Journal['live']): number {
  const [tick, setTick] = useState(0);
  const topic = live?.topic;
  const type = live?.eventType;
  useEffect(() => {
    if (!topic) return;
    return realtime.subscribe(topic, (m: WsServerMessage) => {
      if (m.data.type === type || m.data.type === 'resync') setTick((n) => n + 1);
    });
  }, [topic, type]);
  return tick;
}

/** Downloads the rows of the table's query as CSV, streamed by the server; `to`: the day jumped to. */
async function downloadCsv(exp: NonNullable<Journal['export']>, query: ListQuery, to: string | null) {
  const token = api.store.get()?.token;
  const args: Record<string, string> = { format: 'csv' };
  if (query.search) args.search = query.search;
  const filters = query.filters as unknown[] | undefined;
  if (filters?.length) args.filters = JSON.stringify(filters);
  if (query.match) args.match = query.match;
  if (query.sort) args.sort = query.sort;
  if (to) args.to = to;
  const res = await fetch(api.url(exp.path, args), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!res.ok) throw new Error(String(res.status));
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = exp.file;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The page of a journal: its title, its table with "jump to day", live reloads and the export it declares. */
export function JournalPage<Row extends { id: number }>({
  journal,
  columns,
}: {
  journal: Journal;
  /** the journal's own cells (a stable object: useMemo) */
  columns?: Partial<Record<string, ColumnOverride<Row>>>;
}) {
  const { t } = useTranslation();
  usePageTitle(t(journal.title));
  const tick = useLiveJournal(journal.live);
  const { to, listArgs, toolbar } = useJumpToDay();
  const exp = journal.export;
  return (
    <ResourceTable<Row>
      resource={journal.resource}
      listCommand={journal.listCommand}
      columns={columns}
      storageKey={journal.storageKey}
      toolbar={toolbar}
      listArgs={listArgs}
      refreshKey={tick}
      onExport={exp ? (query) => void downloadCsv(exp, query, to).catch(() => undefined) : undefined}
    />
  );
}
