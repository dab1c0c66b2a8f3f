import { DUMMY_PASSWORD, clockOfSeconds, secondsOfClock } from '@lintel/core';
import type { FieldSpec } from './schema';

/**
 * The data shaping of spec part 2 §5 ("Data shaping before sending"), in one place: every form of the
 * console turns what was typed into command arguments here, and turns a stored record into form values here.
 *
 * - numeric strings become numbers (ports, counts, limits, durations; a comma decimal separator becomes a
 *   point, as for device coordinates);
 * - an emptied number or choice that may be null is sent as null (empty licence counts, guest limits);
 * - a stored password stands as the dummy placeholder and is not sent unless it was changed;
 * - lists typed as text (`1, 5, 7`) become arrays of numbers;
 * - an update sends only what changed.
 */

/** Marks a stored password that was not changed (spec part 2 §5): the server's placeholder too. Never sent. */
export { DUMMY_PASSWORD };

export type FormValue =
  string | boolean | number | null | number[] | string[] | Blob | FormValues | FormValues[];
export interface FormValues {
  [key: string]: FormValue;
}

type Rec = Record<string, unknown>;
const isBlob = (v: unknown): v is Blob => typeof Blob !== 'undefined' && v instanceof Blob;
const isRec = (v: unknown): v is Rec =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !isBlob(v);

/** The id of `{id, name}` or of a plain number. */
function idOf(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (isRec(v) && typeof v.id === 'number') return v.id;
  return null;
}

/** A form value for one field, from a stored value (or the field's default when there is none). */
export function formValue(field: FieldSpec, stored: unknown, storedPassword = false): FormValue {
  const v = stored === undefined ? field.defaultValue : stored;
  switch (field.type) {
    case 'text':
      if (field.secret) return storedPassword ? DUMMY_PASSWORD : typeof v === 'string' ? v : '';
      return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
    case 'enum':
      return typeof v === 'string' ? v : '';
    case 'number':
      // a time input's value: `HH:MM` (the day's end, 86,400, is midnight in a time input)
      if (field.timeOfDay && typeof v === 'number') return clockOfSeconds(v % 86_400);
      return typeof v === 'number' ? String(v) : typeof v === 'string' ? v : '';
    case 'boolean':
      return v === true;
    case 'id':
      return idOf(v);
    case 'ids':
      return Array.isArray(v) ? v.map(idOf).filter((x): x is number => x !== null) : [];
    case 'numbers':
      return Array.isArray(v) ? v.join(', ') : typeof v === 'string' ? v : '';
    case 'strings':
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    case 'object':
      return toFormValues(field.fields ?? [], isRec(v) ? v : undefined);
    case 'list':
      return Array.isArray(v) ? v.filter(isRec).map((item) => toFormValues(field.fields ?? [], item)) : [];
    case 'file':
      return isBlob(v) ? v : null;
    default:
      return null;
  }
}

/**
 * Form values from a stored record (edit) or from the schema's defaults (create). `storedPasswords` names
 * the password fields that hold a value on the server: they start as the dummy placeholder.
 */
export function toFormValues(
  fields: readonly FieldSpec[],
  record?: Rec,
  storedPasswords: readonly string[] = [],
): FormValues {
  const out: FormValues = {};
  for (const f of fields) {
    if (f.type === 'unknown') continue;
    out[f.key] = formValue(f, record?.[f.key], storedPasswords.includes(f.path));
  }
  return out;
}

/** A number typed by a person: `1 000,5` → 1000.5; what is not a number stays as typed for the check to name. */
export function parseNumber(text: string): number | string {
  const cleaned = text.trim().replace(/\s+/g, '').replace(',', '.');
  if (cleaned === '' || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(cleaned)) return text;
  return Number(cleaned);
}

/** The argument value of one field; undefined leaves it out. */
export function shapeValue(
  field: FieldSpec,
  value: FormValue | undefined,
  mode: 'create' | 'update',
): unknown {
  const absent = () => (field.nullable ? null : undefined);
  switch (field.type) {
    case 'text': {
      const s = typeof value === 'string' ? value : '';
      if (field.secret) return s === DUMMY_PASSWORD || (s === '' && field.optional) ? undefined : s;
      if (s.trim() === '') {
        if (field.nullable) return null;
        // an optional text left empty is not sent on create; on update it clears the stored text
        if (field.optional && !field.email) return mode === 'create' ? undefined : '';
        if (field.optional && field.email) return '';
      }
      return s;
    }
    case 'enum':
      return typeof value === 'string' && value !== '' ? value : absent();
    case 'number': {
      const s = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
      if (s.trim() === '') return absent();
      if (field.timeOfDay) return secondsOfClock(s) ?? parseNumber(s);
      return parseNumber(s);
    }
    case 'boolean':
      return value === true;
    case 'id':
      return typeof value === 'number' ? value : absent();
    case 'ids':
      return Array.isArray(value) ? value : [];
    case 'numbers': {
      const s = typeof value === 'string' ? value : '';
      if (s.trim() === '') return [];
      return s
        .split(/[,;\s]+/)
        .filter(Boolean)
        .map((part) => parseNumber(part));
    }
    case 'strings':
      return Array.isArray(value) ? value : [];
    case 'object': {
      const nested = isRec(value) ? (value as FormValues) : {};
      const shaped = shapeArgs(field.fields ?? [], nested, 'create');
      return Object.keys(shaped).length || !field.optional ? shaped : undefined;
    }
    case 'list':
      return Array.isArray(value)
        ? value.filter(isRec).map((item) => shapeArgs(field.fields ?? [], item as FormValues, 'create'))
        : [];
    case 'file':
      return isBlob(value) ? value : undefined;
    default:
      return undefined;
  }
}

function same(a: unknown, b: unknown): boolean {
  if (isBlob(a) || isBlob(b)) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Command arguments from form values. With `initial` (the values the form started from) only what changed
 * is sent, as an update should.
 */
export function shapeArgs(
  fields: readonly FieldSpec[],
  values: FormValues,
  mode: 'create' | 'update',
  initial?: FormValues,
): Rec {
  const out: Rec = {};
  for (const f of fields) {
    if (f.type === 'unknown') continue;
    const v = shapeValue(f, values[f.key], mode);
    if (v === undefined) continue;
    if (initial && mode === 'update' && same(v, shapeValue(f, initial[f.key], mode))) continue;
    out[f.key] = v;
  }
  return out;
}

/** The value at a dotted path of form values. */
export function valueAt(values: FormValues, path: string): FormValue | undefined {
  let cur: FormValue | undefined = values;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || isBlob(cur)) return undefined;
    cur = (cur as Record<string, FormValue>)[key];
  }
  return cur;
}

/** A copy of the values with the one at a dotted path replaced. */
export function setAt(values: FormValues, path: string, value: FormValue): FormValues {
  const [head, ...rest] = path.split('.');
  if (!head) return values;
  if (!rest.length) return { ...values, [head]: value };
  const child = values[head];
  if (Array.isArray(child)) {
    const index = Number(rest[0]);
    const list = [...(child as FormValues[])];
    list[index] =
      rest.length > 1 ? setAt(list[index] ?? {}, rest.slice(1).join('.'), value) : (value as FormValues);
    return { ...values, [head]: list };
  }
  return { ...values, [head]: setAt(isRec(child) ? (child as FormValues) : {}, rest.join('.'), value) };
}
