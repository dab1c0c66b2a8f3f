import type { ReactNode } from 'react';
import { clockOfSeconds, type FieldKind } from '@lintel/core';
import type { Tone } from '@lintel/commands';
import { formatDate, type DateStyle } from './format';
import type { ColumnInfo } from './column-prefs';
import type { TableResource } from './table-query';

/** A screen's own cell for a field, or a column of its own (then with a label key). */
export interface ColumnOverride<Row> {
  render?: (row: Row) => ReactNode;
  /** the cell's text for its tooltip, when `render` draws something else */
  text?: (row: Row) => string;
  width?: number;
  /** for a column that is not a field of the family: its title (namespace `web`, or `ns:key`) */
  labelKey?: string;
  /** for a column that is not a field: shown when nothing was chosen */
  default?: boolean;
}

/** A column as the grid draws it. */
export interface TableColumn<Row> extends ColumnInfo {
  label: string;
  sortable: boolean;
  align: 'left' | 'right' | 'center';
  /** the screen's own drawing of the cell; without it the cell shows `text` (booleans as ✓ and —) */
  render?: (row: Row) => ReactNode;
  /** the raw value, for booleans */
  value: (row: Row) => unknown;
  /** the cell's full text (its tooltip), '' when there is none */
  text: (row: Row) => string;
  /** an enum of states: the cell is a badge of the value's tone */
  tones?: Readonly<Partial<Record<string, Tone>>>;
}

export interface CellText {
  yes: string;
  no: string;
  /** an enum value in words (`web:values.<field>.<value>`), else the value */
  value?: (field: string, value: string) => string;
}

type Loose = Record<string, unknown>;

/**
 * A field's value in a record: the record's own property, else the same name one level down (a user's
 * `phone` lives in `profile.phone`).
 */
export function fieldValue(row: unknown, name: string): unknown {
  if (!row || typeof row !== 'object') return undefined;
  const r = row as Loose;
  if (Object.hasOwn(r, name)) return r[name];
  for (const v of Object.values(r))
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, name)) return (v as Loose)[name];
  return undefined;
}

const refName = (v: unknown): string => {
  if (v && typeof v === 'object') {
    const o = v as Loose;
    if (typeof o.name === 'string') return o.name;
    if (typeof o.id === 'number' || typeof o.id === 'string') return `#${o.id}`;
  }
  return v === null || v === undefined ? '' : String(v);
};

/** The text of a value by the field's kind: refs as names, dates in the user's format. */
export function valueText(
  kind: FieldKind | undefined,
  value: unknown,
  style: DateStyle,
  words: CellText,
): string {
  if (value === null || value === undefined || value === '') return '';
  switch (kind) {
    case 'boolean':
      return value ? words.yes : words.no;
    case 'date':
      return formatDate(value, style);
    case 'ref':
      return refName(value);
    case 'refs':
      return Array.isArray(value) ? value.map(refName).filter(Boolean).join(', ') : refName(value);
    default:
      if (typeof value === 'object')
        return Array.isArray(value) ? value.map(refName).join(', ') : refName(value);
      return String(value);
  }
}

const withNamespace = (key: string, ns: string) => (key.includes(':') ? key : `${ns}:${key}`);

export const alignOf = (kind: FieldKind | undefined, id: string): TableColumn<unknown>['align'] =>
  kind === 'number' || id === 'id' ? 'right' : kind === 'boolean' ? 'center' : 'left';

/** Every column the table can show: the family's fields in their order, then the screen's own. */
export function buildColumns<Row>(
  resource: TableResource,
  overrides: Partial<Record<string, ColumnOverride<Row>>> | undefined,
  sortable: readonly string[],
  label: (labelKey: string) => string,
  style: DateStyle,
  words: CellText,
): TableColumn<Row>[] {
  const out: TableColumn<Row>[] = [];
  for (const [id, field] of Object.entries(resource.fields)) {
    const o = overrides?.[id];
    const kind = field.kind;
    const value = (row: Row) => fieldValue(row, id);
    // an id field beside the record's `{id, name}` of it (a group's `parent_id` and `parent`) reads as the
    // name (issue 13 point 5)
    const named = kind === 'ref' && id.endsWith('_id') ? id.slice(0, -3) : null;
    const text =
      o?.text ??
      ((row: Row) => {
        const v = value(row);
        if (named && typeof v === 'number') {
          const ref = fieldValue(row, named);
          if (ref && typeof ref === 'object' && typeof (ref as Loose).name === 'string')
            return (ref as Loose).name as string;
        }
        if (kind === 'enum' && typeof v === 'string' && words.value) return words.value(id, v);
        if (field.timeOfDay && typeof v === 'number') return clockOfSeconds(v);
        return valueText(kind, v, style, words);
      });
    out.push({
      id,
      kind,
      default: field.default,
      wide: field.wide,
      width: o?.width,
      // a field's label key lives in the `commands` namespace (defineResource: `fields.<noun>.<name>`)
      label: label(withNamespace(field.labelKey ?? `fields.${resource.noun}.${id}`, 'commands')),
      sortable: sortable.includes(id),
      align: alignOf(kind, id),
      render: o?.render,
      value,
      text: o?.render && !o.text ? () => '' : text,
      ...(field.tones ? { tones: field.tones } : {}),
    });
  }
  for (const [id, o] of Object.entries(overrides ?? {})) {
    if (!o || Object.hasOwn(resource.fields, id)) continue;
    out.push({
      id,
      default: o.default ?? true,
      width: o.width,
      label: label(o.labelKey ?? `commands:fields.${resource.noun}.${id}`),
      sortable: false,
      align: 'left',
      render: o.render,
      value: (row: Row) => fieldValue(row, id),
      text:
        o.text ??
        (o.render ? () => '' : (row: Row) => valueText(undefined, fieldValue(row, id), style, words)),
    });
  }
  return out;
}
