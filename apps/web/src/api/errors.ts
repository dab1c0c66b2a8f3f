import { ApiError, errorLookupKey, fieldErrors, type FieldError } from '@lintel/core';
import { getCommand, type CommandId } from '@lintel/commands';
import { i18next } from '../i18n';
import type { ArgsOf } from './client';

/** A failure as a form shows it: one message for the form, and messages by field name. */
export interface Failure {
  message: string;
  fields: Record<string, string>;
}

// Catalogue keys are built at run time, so they go through an untyped `t`.
const tr = (key: string, params?: Record<string, unknown>): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);
/** Whether the text exists, looked up with its parameters as `t` looks it up. */
const has = (key: string, params?: Record<string, unknown>): boolean => i18next.exists(key, params);

/**
 * `errors:validation.<rule>` with the rule's parameters (spec part 2 §5); a rule named like a catalogue
 * message (e.g. `value_not_unique`) falls back to `errors:http.<rule>`.
 */
export function ruleMessage(error: Pick<FieldError, 'rule' | 'params'>): string {
  for (const key of [`errors:validation.${error.rule}`, `errors:http.${error.rule}`]) {
    if (has(key, error.params)) return tr(key, error.params ?? {});
  }
  return tr('errors:validation.invalid_value');
}

function fieldMap(list: readonly FieldError[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of list) if (!(f.field in out)) out[f.field] = ruleMessage(f);
  return out;
}

function isFieldErrorList(v: unknown): v is FieldError[] {
  return (
    Array.isArray(v) &&
    v.every((f) => f && typeof f === 'object' && typeof f.field === 'string' && typeof f.rule === 'string')
  );
}

/** Catalogue messages that name no field: a form adds the fields they mark. */
const UNNAMED = new Set(['check_fields_data', 'value_not_unique', 'wrong_parameters']);

/** A field's label in a command's form (`commands:fields.<noun>.<field>`), else its name. */
function labelOf(commandId: string, field: string): string {
  const noun = commandId.slice(0, commandId.indexOf('.'));
  const last =
    field
      .split('.')
      .filter((p) => !/^\d+$/.test(p))
      .pop() ?? field;
  const key = `commands:fields.${noun}.${last}`;
  return has(key) ? tr(key) : last;
}

/**
 * A form's message with the fields it is about (issue 13 item 10): "Check fields data: Login, Name",
 * "Value is not unique: Name «North»". Unchanged without a command or without fields.
 */
export function namingFields(
  failure: Failure,
  commandId?: string,
  data: Record<string, unknown> = {},
): Failure {
  const names = Object.keys(failure.fields);
  if (!commandId || !names.length) return failure;
  const fields = names
    .map((f) => {
      const label = labelOf(commandId, f);
      const value = f === data.field && typeof data.value === 'string' ? data.value : undefined;
      return value === undefined ? label : `${label} «${value}»`;
    })
    .join(', ');
  return { ...failure, message: tr('errors:with_fields', { message: failure.message, fields }) };
}

/**
 * The lookup of spec part 2 §8: the reply's message, lowercased and without quotes, under `errors:http.`,
 * with the reply's data as parameters; then its error code; otherwise `errors:default`. With the command,
 * the message names the fields it marks.
 */
export function describeError(err: unknown, commandId?: string): Failure {
  const failure = describe(err);
  // only the messages that do not say what they are about ("This login is already used" does)
  const generic =
    err instanceof ApiError &&
    [errorLookupKey(err.message), errorLookupKey(err.code)].some((k) => k && UNNAMED.has(k));
  return generic ? namingFields(failure, commandId, (err as ApiError).data ?? {}) : failure;
}

function describe(err: unknown): Failure {
  if (err instanceof ApiError) {
    const data = err.data ?? {};
    const fields = isFieldErrorList(data.fields) ? fieldMap(data.fields) : {};
    // a catalogue error about one field (`login_already_used {field: 'login'}`) marks that field with its text
    const withField = (message: string) =>
      typeof data.field === 'string' && !(data.field in fields)
        ? { message, fields: { ...fields, [data.field]: message } }
        : { message, fields };
    for (const candidate of [errorLookupKey(err.message), errorLookupKey(err.code)]) {
      const key = `errors:http.${candidate}`;
      if (candidate && has(key)) return withField(tr(key, data));
    }
    return withField(tr('errors:default'));
  }
  if (err instanceof Error) console.error(err);
  return { message: tr('errors:default'), fields: {} };
}

/**
 * Checks a command's arguments with the command's own schema, so the form marks the same fields with the
 * same rules as the server would. Null when they pass.
 */
export function validateArgs<Id extends CommandId>(id: Id, args: ArgsOf<Id>): Failure | null {
  const result = getCommand(id).args.safeParse(args);
  if (result.success) return null;
  return namingFields(
    { message: tr('errors:http.check_fields_data'), fields: fieldMap(fieldErrors(result.error, args)) },
    id,
  );
}

/** A form failure from local checks only (e.g. two passwords that differ). */
export function localFailure(fields: Record<string, string>): Failure {
  return { message: tr('errors:http.check_fields_data'), fields };
}
