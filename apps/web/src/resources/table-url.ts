import type { Filter, FilterableField } from '@lintel/core';
import { emptyQuery, filtersToWhere, whereToFilters, type Match, type TableQuery } from './table-query';

/**
 * A table's view in the address (issue 13 point 9): the search (`q`), the filter chips as the CLI's
 * `--where` text (`where`), the sort (`sort`, `-name` descending) and the chosen columns (`cols`), so a
 * reload or a copied link opens the same rows. Other parameters of the page (`view=table`) are kept.
 */
export interface TableView {
  query: TableQuery;
  /** chosen columns in order; null: the person's remembered choice or the family's defaults */
  columns: string[] | null;
}

export const URL_KEYS = ['q', 'where', 'sort', 'cols'] as const;

/** The parameters of a view, written into `base` (a copy): empty parts are left out. */
export function writeView(base: URLSearchParams, view: TableView): URLSearchParams {
  const out = new URLSearchParams(base);
  for (const k of URL_KEYS) out.delete(k);
  const search = view.query.search.trim();
  if (search) out.set('q', search);
  const where = filtersToWhere(view.query.filters, view.query.match);
  if (where) out.set('where', where);
  if (view.query.sort) out.set('sort', view.query.sort);
  if (view.columns?.length) out.set('cols', view.columns.join(','));
  return out;
}

/**
 * The view an address asks for, checked against the family: a filter, sort or column the table does not
 * know is dropped (an old or hand-edited link still opens, with what can be read of it).
 */
export function readView(
  params: URLSearchParams,
  fields: Readonly<Record<string, FilterableField>>,
  sortable: readonly string[],
  columnIds: readonly string[],
): TableView {
  const query: TableQuery = { ...emptyQuery, filters: [] };
  query.search = (params.get('q') ?? '').slice(0, 255);
  const where = params.get('where');
  if (where) {
    const r = whereToFilters(where, fields);
    if (!('problem' in r)) {
      query.filters = r.filters;
      query.match = r.match;
    }
  }
  const sort = params.get('sort');
  if (sort && sortable.includes(sort.replace(/^-/, ''))) query.sort = sort;
  const known = new Set(columnIds);
  const cols = (params.get('cols') ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => known.has(c));
  return { query, columns: cols.length ? [...new Set(cols)] : null };
}

/** Does the address carry a view of its own (then it wins over the remembered column choice)? */
export const hasView = (params: URLSearchParams) => URL_KEYS.some((k) => params.has(k));

/**
 * The address of a table opened on these filters (`/audit-events?where=action+equals+login`): how a page
 * such as the home dashboard links into the rows behind what it shows.
 */
export function tableHref(path: string, filters: readonly Filter[], match: Match = 'all'): string {
  const params = writeView(new URLSearchParams(), {
    query: { ...emptyQuery, filters: [...filters], match },
    columns: null,
  });
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
