import { useId, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { i18next } from '../i18n';
import { EntityPicker } from '../pickers/entity-picker';
import { Button, focusRing } from '../ui/button';
import { FieldError, inputClass, LabelledField, PasswordField, TextField } from '../ui/field';
import { Icon } from '../ui/icon';
import { fieldLabelKey } from './fields';
import { PermissionsField } from './permissions-field';
import { DUMMY_PASSWORD, toFormValues, valueAt, type FormValue, type FormValues } from './shape';
import type { FieldSpec } from './schema';

const tr = (key: string, params?: Record<string, unknown>): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);

/**
 * The label of a field: `commands:fields.<noun>.<parent>_<field>` for a nested field whose name alone is
 * ambiguous (a licence period's `from`), then `commands:fields.<noun>.<field>`.
 */
export function fieldLabel(commandId: string, field: Pick<FieldSpec, 'key'>, path?: string): string {
  const parent = path
    ?.split('.')
    .filter((p) => !/^\d+$/.test(p))
    .slice(-2, -1)[0];
  const keys = [
    ...(parent ? [fieldLabelKey(commandId, { key: `${parent}_${field.key}` })] : []),
    fieldLabelKey(commandId, field),
  ];
  const found = keys.find((k) => i18next.exists(k));
  return found ? tr(found) : field.key;
}

/** The title of an enum value: `values.<field>.<value>` when the locale has one, else the value itself. */
export function valueLabel(field: Pick<FieldSpec, 'key'>, value: string): string {
  const key = `values.${field.key}.${value}`;
  return i18next.exists(key) ? tr(key) : value;
}

export interface FieldOverride {
  hidden?: boolean;
  /** a different label key (any namespace) */
  labelKey?: string;
  hint?: string;
  /** replaces the widget */
  render?: (ctx: FieldContext) => ReactNode;
  /** picker: ids that may not be chosen */
  exclude?: readonly number[];
  /** a password field offers to generate one (default: every password but the current one) */
  generate?: boolean;
  /** focus this field first */
  autoFocus?: boolean;
  /** shown but not editable, with everything inside it (a part of the record the caller may only read) */
  readOnly?: boolean;
}

export interface FieldContext {
  field: FieldSpec;
  path: string;
  label: string;
  value: FormValue | undefined;
  set: (value: FormValue) => void;
  error: string | undefined;
  disabled: boolean;
}

export interface CommandFormProps {
  commandId: string;
  fields: readonly FieldSpec[];
  values: FormValues;
  onChange: (path: string, value: FormValue) => void;
  errors: Record<string, string>;
  readOnly?: boolean;
  overrides?: Record<string, FieldOverride>;
  /** names of the related rows the record holds, by field path (chips show them at once) */
  known?: Record<string, readonly { id: number; name: string }[]>;
}

/** Wide widgets take the whole row of the two-column grid. */
function isWide(f: FieldSpec): boolean {
  return !!f.multiline || ['ids', 'object', 'list', 'strings', 'numbers'].includes(f.type);
}

/**
 * A form generated from a command's argument schema: text, number, boolean, enum, pickers for ids, nested
 * objects as fieldsets and lists of records, with per-field overrides. Values and errors are by dotted path.
 */
export function CommandForm(props: CommandFormProps) {
  return (
    <div className="grid grid-cols-1 gap-x-4 gap-y-3 sm:grid-cols-2" data-testid={`form-${props.commandId}`}>
      {props.fields.map((f) => (
        <FieldView key={f.path} form={props} field={f} path={f.path} locked={false} />
      ))}
    </div>
  );
}

function FieldView({
  form,
  field,
  path,
  locked,
}: {
  form: CommandFormProps;
  field: FieldSpec;
  path: string;
  /** a field above it is read-only */
  locked: boolean;
}) {
  const { t } = useTranslation();
  const id = useId();
  const o = form.overrides?.[path] ?? {};
  if (o.hidden) return null;
  const label = o.labelKey ? tr(o.labelKey) : fieldLabel(form.commandId, field, path);
  const value = valueAt(form.values, path);
  const error = form.errors[path];
  const disabled = !!form.readOnly || locked || !!o.readOnly;
  const set = (v: FormValue) => form.onChange(path, v);
  const required = !field.optional && !field.nullable && field.type !== 'boolean';
  const span = isWide(field) ? 'sm:col-span-2' : '';
  const ctx: FieldContext = { field, path, label, value, set, error, disabled };
  if (o.render) return <div className={span}>{o.render(ctx)}</div>;

  const errorLine = <FieldError error={error} testId={`error-${path}`} />;
  // a label above the control, its error below
  const labelled = (control: ReactNode) => (
    <LabelledField
      className={span}
      label={label}
      htmlFor={id}
      required={required}
      error={error}
      errorTestId={`error-${path}`}
    >
      {control}
    </LabelledField>
  );
  const autoFocus = o.autoFocus ? { 'data-autofocus': true } : {};
  // what every text input of the form shares: its place, name, label, setter, error and lock
  const textProps = { className: span, name: path, label, onValue: set, error, readOnly: disabled };

  switch (field.type) {
    case 'text': {
      const text = typeof value === 'string' ? value : '';
      if (field.secret)
        return (
          <PasswordField
            {...textProps}
            value={text}
            required={required}
            autoComplete="new-password"
            hint={o.hint}
            onFocus={(e) => {
              // the dummy placeholder goes away when one starts typing a new password
              if (text === DUMMY_PASSWORD) e.currentTarget.select();
            }}
            // a new password can be generated; the current one cannot
            {...((o.generate ?? field.key !== 'old') ? { onGenerate: set } : {})}
            {...autoFocus}
          />
        );
      if (field.multiline)
        return labelled(
          <textarea
            id={id}
            name={path}
            value={text}
            rows={3}
            readOnly={disabled}
            onChange={(e) => set(e.target.value)}
            aria-invalid={error ? true : undefined}
            data-testid={`field-${path}`}
            className={`${inputClass} h-auto py-1.5 ${error ? 'border-red-500' : 'border-slate-300'}`}
            {...autoFocus}
          />,
        );
      // no maxLength on the input: a browser would cut a longer paste silently; past the limit the field says
      // so, and near it a counter shows how much is left (issue 13 item 10)
      const max = field.maxLength;
      const over = max !== undefined && text.length > max;
      const near = max !== undefined && text.length >= max * 0.8;
      return (
        <TextField
          {...textProps}
          value={text}
          error={error ?? (over ? t('forms.too_long', { count: text.length, max }) : undefined)}
          required={required}
          type={field.date ? 'date' : field.email ? 'email' : 'text'}
          autoComplete="off"
          spellCheck={false}
          hint={o.hint ?? (near ? t('forms.length', { count: text.length, max }) : undefined)}
          {...autoFocus}
        />
      );
    }
    case 'number':
      if (field.timeOfDay)
        return (
          <TextField
            {...textProps}
            value={typeof value === 'string' ? value : ''}
            required={required}
            type="time"
            autoComplete="off"
            hint={o.hint}
            {...autoFocus}
          />
        );
      return (
        <TextField
          {...textProps}
          value={typeof value === 'string' ? value : ''}
          required={required}
          inputMode={field.integer ? 'numeric' : 'decimal'}
          autoComplete="off"
          hint={
            o.hint ??
            (field.min !== undefined && field.max !== undefined && field.max < 1e6
              ? t('forms.range', { min: field.min, max: field.max })
              : undefined)
          }
          {...autoFocus}
        />
      );
    case 'numbers':
      return (
        <TextField
          {...textProps}
          value={typeof value === 'string' ? value : ''}
          autoComplete="off"
          hint={o.hint ?? t('forms.numbers_hint')}
          {...autoFocus}
        />
      );
    case 'boolean':
      return (
        <div className={`${span} flex items-end`}>
          <label className="flex min-h-8 cursor-pointer items-center gap-2 text-sm text-slate-800">
            <input
              type="checkbox"
              name={path}
              checked={value === true}
              disabled={disabled}
              onChange={(e) => set(e.target.checked)}
              data-testid={`field-${path}`}
              className={`size-4 accent-blue-700 ${focusRing}`}
              {...autoFocus}
            />
            {label}
          </label>
          {errorLine}
        </div>
      );
    case 'enum':
      return labelled(
        <select
          id={id}
          name={path}
          value={typeof value === 'string' ? value : ''}
          disabled={disabled}
          onChange={(e) => set(e.target.value)}
          aria-invalid={error ? true : undefined}
          data-testid={`field-${path}`}
          className={`${inputClass} ${error ? 'border-red-500' : 'border-slate-300'}`}
          {...autoFocus}
        >
          {(field.optional || field.nullable || !value) && <option value="">{t('forms.not_set')}</option>}
          {(field.options ?? []).map((opt) => (
            <option key={opt} value={opt}>
              {valueLabel(field, opt)}
            </option>
          ))}
        </select>,
      );
    case 'id':
    case 'ids':
      return (
        <div className={span}>
          <EntityPicker
            family={field.family!}
            multiple={field.type === 'ids'}
            value={
              field.type === 'ids'
                ? Array.isArray(value)
                  ? (value as number[])
                  : []
                : typeof value === 'number'
                  ? value
                  : null
            }
            onChange={(v) => set(v as FormValue)}
            label={label}
            name={path}
            error={error}
            disabled={disabled}
            required={required || (field.type === 'ids' && (field.minLength ?? 0) > 0)}
            known={form.known?.[path]}
            exclude={o.exclude}
            placeholder={
              field.key === 'parent_id'
                ? t('forms.none_root')
                : field.type === 'id' && (field.nullable || field.optional)
                  ? t('forms.not_set')
                  : undefined
            }
          />
        </div>
      );
    case 'strings':
      if (field.key === 'permissions')
        return (
          <div className={span}>
            <PermissionsField
              name={path}
              label={label}
              value={Array.isArray(value) ? (value as string[]) : []}
              onChange={set}
              disabled={disabled}
              error={error}
            />
          </div>
        );
      // a list of codes the schema enumerates (a schedule's days of the week): a checkbox per code, in the
      // schema's order, named by its words
      if (field.options?.length) {
        const chosen = Array.isArray(value) ? (value as string[]) : [];
        return (
          <fieldset className={span} data-testid={`field-${path}`}>
            <legend className="mb-1 text-xs font-medium text-slate-700">{label}</legend>
            <div className="flex flex-wrap gap-x-4 gap-y-1">
              {field.options.map((opt) => (
                <label
                  key={opt}
                  className="flex min-h-8 cursor-pointer items-center gap-2 text-sm text-slate-800"
                >
                  <input
                    type="checkbox"
                    name={path}
                    value={opt}
                    checked={chosen.includes(opt)}
                    disabled={disabled}
                    onChange={(e) =>
                      set(
                        field.options!.filter((o2) => (o2 === opt ? e.target.checked : chosen.includes(o2))),
                      )
                    }
                    className={`size-4 accent-blue-700 ${focusRing}`}
                  />
                  {valueLabel(field, opt)}
                </label>
              ))}
            </div>
            {errorLine}
          </fieldset>
        );
      }
      return labelled(
        <textarea
          id={id}
          name={path}
          rows={3}
          value={Array.isArray(value) ? (value as string[]).join('\n') : ''}
          readOnly={disabled}
          onChange={(e) =>
            set(
              e.target.value
                .split('\n')
                .map((s) => s.trim())
                .filter(Boolean),
            )
          }
          data-testid={`field-${path}`}
          className={`${inputClass} h-auto py-1.5 ${error ? 'border-red-500' : 'border-slate-300'}`}
        />,
      );
    case 'object':
      return (
        <details
          className={`${span} group rounded-md border border-slate-200`}
          open={!field.optional || !!error || hasErrorUnder(form.errors, path) || undefined}
          data-testid={`fieldset-${path}`}
        >
          <summary
            className={`flex h-8 cursor-pointer list-none items-center gap-1.5 rounded-md px-2 text-xs font-semibold text-slate-700 select-none hover:bg-slate-50 ${focusRing}`}
          >
            {/* turned by its own details only: a details inside an open one stays closed (group-open reads any) */}
            <Icon
              name="chevron-right"
              className="size-3.5 transition-transform [[open]>summary>&]:rotate-90"
            />
            {label}
          </summary>
          <fieldset className="grid grid-cols-1 gap-x-4 gap-y-3 border-t border-slate-100 px-3 py-3 sm:grid-cols-2">
            <legend className="sr-only">{label}</legend>
            {(field.fields ?? []).map((f) => (
              <FieldView key={f.key} form={form} field={f} path={`${path}.${f.key}`} locked={disabled} />
            ))}
          </fieldset>
          {errorLine}
        </details>
      );
    case 'list': {
      const items = Array.isArray(value) ? (value as FormValues[]) : [];
      return (
        <fieldset
          className={`${span} rounded-md border border-slate-200 px-3 pt-1 pb-3`}
          data-testid={`fieldset-${path}`}
        >
          <legend className="px-1 text-xs font-semibold text-slate-700">{label}</legend>
          {items.length === 0 && <p className="text-xs text-slate-500">{t('forms.list_empty')}</p>}
          {items.map((_, i) => (
            <div
              key={i}
              className="mb-2 grid grid-cols-1 gap-x-4 gap-y-2 border-b border-slate-100 pb-2 sm:grid-cols-2"
            >
              {(field.fields ?? []).map((f) => (
                <FieldView
                  key={f.key}
                  form={form}
                  field={f}
                  path={`${path}.${i}.${f.key}`}
                  locked={disabled}
                />
              ))}
              {!disabled && (
                <div className="sm:col-span-2">
                  <Button size="sm" variant="ghost" onClick={() => set(items.filter((__, j) => j !== i))}>
                    {t('forms.remove_item')}
                  </Button>
                </div>
              )}
            </div>
          ))}
          {!disabled && (
            <Button size="sm" onClick={() => set([...items, toFormValues(field.fields ?? [])])}>
              {t('forms.add_item')}
            </Button>
          )}
          {errorLine}
        </fieldset>
      );
    }
    case 'file':
      return labelled(
        <input
          id={id}
          type="file"
          name={path}
          disabled={disabled}
          accept={field.key === 'image' ? 'image/*' : undefined}
          onChange={(e) => set(e.target.files?.[0] ?? null)}
          aria-invalid={error ? true : undefined}
          data-testid={`field-${path}`}
          className={`block w-full text-sm text-slate-700 file:mr-2 file:h-8 file:rounded-md file:border file:border-slate-300 file:bg-white file:px-3 file:text-sm file:font-medium ${focusRing}`}
        />,
      );
    default:
      return null;
  }
}

function hasErrorUnder(errors: Record<string, string>, path: string): boolean {
  return Object.keys(errors).some((k) => k.startsWith(`${path}.`));
}
