import { enumWord } from './enum-word';
import {
  memo,
  useId,
  useImperativeHandle,
  useRef,
  useState,
  type ReactNode,
  type Ref,
  type RefObject,
} from 'react';
import { useTranslation } from 'react-i18next';
import type { Filter, FilterableField, FilterRule } from '@lintel/core';
import type { Family } from '../forms/schema';
import { EntityPicker } from '../pickers/entity-picker';
import { useNames } from '../pickers/use-names';
import { focusRing } from '../ui/button';
import { inputClass } from '../ui/field';
import { Popover } from './table-popover';
import { Icon } from '../ui/icon';
import {
  filtersToWhere,
  MAX_FILTERS,
  normaliseFilter,
  rulesFor,
  whereToFilters,
  type FilterProblem,
  type Match,
} from './table-query';

export interface FilterBarHandle {
  /** opens the editor of a new chip */
  add(): void;
  /** opens the chips as `--where` text */
  editText(): void;
}

interface FilterBarProps {
  fields: Readonly<Record<string, FilterableField>>;
  labelOf: (field: string) => string;
  filters: Filter[];
  match: Match;
  onChange: (filters: Filter[], match: Match) => void;
  /** focus goes here after a change (the grid) */
  onDone: () => void;
  handleRef: Ref<FilterBarHandle>;
  /** the family behind each reference field: its value is chosen in a picker and read as a name */
  families?: Readonly<Record<string, string>>;
}

const selectClass = `${inputClass} border-slate-300 pr-7`;
const chipButton = `inline-flex h-6 items-center rounded-sm px-1.5 text-xs ${focusRing}`;

/** Text fields filter best by "contains"; many-valued ones only know "has". */
/** the label of a filter editor's field */
const editorLabelClass = 'text-xs font-medium text-slate-600';

function defaultRule(rules: readonly FilterRule[]): FilterRule {
  return rules.includes('contains') ? 'contains' : rules[0]!;
}

function useProblemText() {
  const { t } = useTranslation();
  return (p: FilterProblem, labelOf: (f: string) => string): string => {
    switch (p.kind) {
      case 'syntax':
        return t('table.filter.problem_syntax', { at: p.at });
      case 'field':
        return t('table.filter.problem_field', { field: p.field });
      case 'rule':
        return t('table.filter.problem_rule', { field: labelOf(p.field), rules: p.rules.join(', ') });
      case 'value':
        return p.value.trim() === ''
          ? t('table.filter.problem_empty', { field: labelOf(p.field) })
          : t('table.filter.problem_value', { field: labelOf(p.field), value: p.value });
      case 'too_many':
        return t('table.filter.problem_limit', { max: p.max });
    }
  };
}

/**
 * The form of a filter editor (a chip's, the `--where` text's) in its popover: the fields, the problem that
 * stops it, Cancel and Apply.
 */
function EditorForm({
  label,
  anchorRef,
  onCancel,
  className,
  testId,
  onSubmit,
  submitFromSelect,
  problem,
  footerClassName,
  children,
}: {
  label: string;
  anchorRef: RefObject<HTMLElement | null>;
  onCancel: () => void;
  className: string;
  testId: string;
  onSubmit: () => void;
  /** Enter in a select submits too */
  submitFromSelect?: boolean;
  problem: string | null;
  footerClassName?: string;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <Popover label={label} anchorRef={anchorRef} onClose={onCancel} className={className} testId={testId}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onSubmit();
        }}
        onKeyDown={
          submitFromSelect
            ? (e) => {
                if (e.key === 'Enter' && (e.target as HTMLElement).tagName === 'SELECT') {
                  e.preventDefault();
                  onSubmit();
                }
              }
            : undefined
        }
        className="space-y-2"
      >
        {children}
        {problem && (
          <p role="alert" className="text-xs text-red-700">
            {problem}
          </p>
        )}
        <div className={`flex justify-end gap-2${footerClassName ? ` ${footerClassName}` : ''}`}>
          <button
            type="button"
            onClick={onCancel}
            className={`h-7 rounded-md border border-slate-300 bg-white px-2.5 text-xs font-medium text-slate-700 hover:bg-slate-50 ${focusRing}`}
          >
            {t('table.filter.cancel')}
          </button>
          <button
            type="submit"
            className={`h-7 rounded-md bg-blue-700 px-2.5 text-xs font-medium text-white hover:bg-blue-800 ${focusRing}`}
          >
            {t('table.filter.apply')}
          </button>
        </div>
      </form>
    </Popover>
  );
}

function FilterEditor({
  fields,
  labelOf,
  initial,
  onApply,
  onCancel,
  anchorRef,
  families,
}: {
  families?: Readonly<Record<string, string>>;
  fields: Readonly<Record<string, FilterableField>>;
  labelOf: (field: string) => string;
  initial: Filter | null;
  onApply: (f: Filter) => void;
  onCancel: () => void;
  anchorRef: RefObject<HTMLElement | null>;
}) {
  const { t } = useTranslation();
  const id = useId();
  const names = Object.keys(fields);
  // a new chip starts on the first text field: what people filter by most
  const [field, setField] = useState(
    initial?.field ?? names.find((n) => fields[n]?.kind === 'text') ?? names[0] ?? '',
  );
  const kind = fields[field]?.kind ?? 'text';
  const rules = rulesFor(kind);
  const [rule, setRule] = useState<FilterRule>(initial?.rule ?? defaultRule(rules));
  const [value, setValue] = useState(initial ? (initial.value === null ? '' : String(initial.value)) : '');
  const [problem, setProblem] = useState<string | null>(null);
  const problemText = useProblemText();

  const chooseField = (name: string) => {
    setField(name);
    const k = fields[name]?.kind ?? 'text';
    const r = rulesFor(k);
    if (!r.includes(rule)) setRule(defaultRule(r));
    if (k === 'boolean') setValue('true');
    else if (k === 'enum') setValue(fields[name]?.values?.[0] ?? '');
    else if (kind === 'boolean' || kind === 'enum') setValue('');
    setProblem(null);
  };

  const submit = () => {
    const r = normaliseFilter({ field, rule, value }, fields);
    if ('problem' in r) setProblem(problemText(r.problem, labelOf));
    else onApply(r.filter);
  };

  let input: ReactNode;
  const valueId = `${id}-value`;
  const family = families?.[field] as Family | undefined;
  if (family)
    input = (
      <EntityPicker
        family={family}
        label={t('table.filter.value')}
        name={`filter-${field}`}
        value={value !== '' && Number.isFinite(Number(value)) ? Number(value) : null}
        onChange={(v) => {
          setValue(typeof v === 'number' ? String(v) : '');
          setProblem(null);
        }}
      />
    );
  else if (kind === 'boolean' || kind === 'enum') {
    const options: [string, string][] =
      kind === 'boolean'
        ? [
            ['true', t('table.value.yes')],
            ['false', t('table.value.no')],
          ]
        : (fields[field]?.values ?? []).map((v) => [v, enumWord(field, v)]);
    input = (
      <select id={valueId} className={selectClass} value={value} onChange={(e) => setValue(e.target.value)}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    );
  } else
    input = (
      <input
        id={valueId}
        className={`${inputClass} border-slate-300`}
        type={kind === 'date' ? 'date' : kind === 'text' ? 'text' : 'number'}
        inputMode={kind === 'number' || kind === 'ref' || kind === 'refs' ? 'numeric' : undefined}
        placeholder={kind === 'ref' || kind === 'refs' ? t('table.filter.id_placeholder') : undefined}
        value={value}
        autoComplete="off"
        spellCheck={false}
        onChange={(e) => {
          setValue(e.target.value);
          setProblem(null);
        }}
      />
    );

  return (
    <EditorForm
      label={t(initial ? 'table.filter.edit_title' : 'table.filter.add_title')}
      anchorRef={anchorRef}
      onCancel={onCancel}
      className="w-80"
      testId="filter-editor"
      onSubmit={submit}
      // Enter in a select applies too (a browser submits only from text fields)
      submitFromSelect
      problem={problem}
      footerClassName="pt-1"
    >
      <div className="grid grid-cols-[4.5rem_1fr] items-center gap-x-2 gap-y-2">
        <label htmlFor={`${id}-field`} className={editorLabelClass}>
          {t('table.filter.field')}
        </label>
        <select
          id={`${id}-field`}
          data-autofocus=""
          className={selectClass}
          value={field}
          onChange={(e) => chooseField(e.target.value)}
        >
          {names.map((n) => (
            <option key={n} value={n}>
              {labelOf(n)}
            </option>
          ))}
        </select>
        <label htmlFor={`${id}-rule`} className={editorLabelClass}>
          {t('table.filter.rule')}
        </label>
        <select
          id={`${id}-rule`}
          className={selectClass}
          value={rule}
          onChange={(e) => setRule(e.target.value as FilterRule)}
        >
          {rules.map((r) => (
            <option key={r} value={r}>
              {t(`table.rule.${r}`)}
            </option>
          ))}
        </select>
        {family ? (
          // the picker has its own label
          <div className="col-span-2">{input}</div>
        ) : (
          <>
            <label htmlFor={valueId} className={editorLabelClass}>
              {t('table.filter.value')}
            </label>
            {input}
          </>
        )}
      </div>
    </EditorForm>
  );
}

function WhereEditor({
  fields,
  labelOf,
  initial,
  onApply,
  onCancel,
  anchorRef,
}: {
  fields: Readonly<Record<string, FilterableField>>;
  labelOf: (field: string) => string;
  initial: string;
  onApply: (filters: Filter[], match: Match) => void;
  onCancel: () => void;
  anchorRef: RefObject<HTMLElement | null>;
}) {
  const { t } = useTranslation();
  const id = useId();
  const [text, setText] = useState(initial);
  const [problem, setProblem] = useState<string | null>(null);
  const problemText = useProblemText();
  return (
    <EditorForm
      label={t('table.filter.text_title')}
      anchorRef={anchorRef}
      onCancel={onCancel}
      className="w-[28rem]"
      testId="where-editor"
      onSubmit={() => {
        const r = whereToFilters(text, fields);
        if ('problem' in r) setProblem(problemText(r.problem, labelOf));
        else onApply(r.filters, r.match);
      }}
      problem={problem}
    >
      <label htmlFor={id} className={`block ${editorLabelClass}`}>
        {t('table.filter.text_label')}
      </label>
      <input
        id={id}
        className={`${inputClass} border-slate-300 font-mono text-xs`}
        value={text}
        autoComplete="off"
        spellCheck={false}
        placeholder="name contains ann and is_activated equals true"
        aria-describedby={`${id}-hint`}
        onChange={(e) => {
          setText(e.target.value);
          setProblem(null);
        }}
      />
      <p id={`${id}-hint`} className="text-xs text-slate-500">
        {t('table.filter.text_hint', { fields: Object.keys(fields).join(', ') })}
      </p>
    </EditorForm>
  );
}

/** The chips "field rule value", the add button, all/any, and the `--where` text behind them. */
function FilterBarInner({
  fields,
  labelOf,
  filters,
  match,
  onChange,
  onDone,
  handleRef,
  families,
}: FilterBarProps) {
  const { t } = useTranslation();
  const nameOf = useNames(
    filters.flatMap((f) =>
      families?.[f.field] && typeof f.value === 'number'
        ? [{ family: families[f.field] as Family, id: f.value }]
        : [],
    ),
  );
  // null: closed; -1: a new chip; n: editing chip n
  const [editing, setEditing] = useState<number | null>(null);
  const [textOpen, setTextOpen] = useState(false);
  const addRef = useRef<HTMLButtonElement>(null);
  const textRef = useRef<HTMLButtonElement>(null);
  const chipRefs = useRef<Array<HTMLButtonElement | null>>([]);
  const editAnchor = useRef<HTMLElement | null>(null);
  const hasFields = Object.keys(fields).length > 0;
  const where = filtersToWhere(filters, match);

  useImperativeHandle(handleRef, () => ({
    add: () => {
      if (!hasFields || filters.length >= MAX_FILTERS) return;
      setTextOpen(false);
      editAnchor.current = addRef.current;
      setEditing(-1);
    },
    editText: () => {
      if (!hasFields) return;
      setEditing(null);
      setTextOpen(true);
    },
  }));

  const valueText = (f: Filter) => {
    if (f.value === true) return t('table.value.yes');
    if (f.value === false) return t('table.value.no');
    if (f.value === null) return t('table.value.empty');
    const family = families?.[f.field] as Family | undefined;
    if (family && typeof f.value === 'number') return nameOf(family, f.value);
    if (fields[f.field]?.kind === 'enum' && typeof f.value === 'string') return enumWord(f.field, f.value);
    return String(f.value);
  };

  if (!hasFields) return null;
  return (
    <div
      className="flex min-w-0 flex-wrap items-center gap-1.5"
      title={where ? `--where ${JSON.stringify(where)}` : undefined}
      data-testid="filter-chips"
    >
      {filters.length > 1 && (
        <div
          role="group"
          aria-label={t('table.filter.match_label')}
          className="inline-flex h-7 items-center rounded-md border border-slate-300 bg-white p-0.5 text-xs"
        >
          {(['all', 'any'] as const).map((m) => (
            <button
              key={m}
              type="button"
              aria-pressed={match === m}
              onClick={() => onChange(filters, m)}
              className={`h-5.5 rounded px-1.5 font-medium ${focusRing} ${match === m ? 'bg-slate-800 text-white' : 'text-slate-600 hover:bg-slate-100'}`}
            >
              {t(`table.filter.match_${m}`)}
            </button>
          ))}
        </div>
      )}
      {filters.map((f, i) => {
        const text = filtersToWhere([f], 'all');
        return (
          <span
            key={`${i}:${text}`}
            className="inline-flex h-7 max-w-80 items-center rounded-md border border-blue-200 bg-blue-50 pl-0.5 text-blue-950"
            data-testid="filter-chip"
          >
            <button
              ref={(el) => {
                chipRefs.current[i] = el;
              }}
              type="button"
              title={text}
              aria-label={t('table.filter.edit', {
                filter: `${labelOf(f.field)} ${t(`table.rule.${f.rule}`)} ${valueText(f)}`,
              })}
              onClick={() => {
                editAnchor.current = chipRefs.current[i] ?? null;
                setTextOpen(false);
                setEditing(i);
              }}
              className={`${chipButton} min-w-0 gap-1 hover:bg-blue-100`}
            >
              <span className="font-medium">{labelOf(f.field)}</span>
              <span className="text-blue-800">{t(`table.rule.${f.rule}`)}</span>
              <span className="truncate font-semibold">{valueText(f)}</span>
            </button>
            <button
              type="button"
              aria-label={t('table.filter.remove', { filter: text })}
              title={t('table.filter.remove', { filter: text })}
              onClick={() => {
                onChange(
                  filters.filter((_, j) => j !== i),
                  match,
                );
                onDone();
              }}
              className={`${chipButton} px-1 text-blue-800 hover:bg-blue-100`}
            >
              <Icon name="close" className="size-3" />
            </button>
          </span>
        );
      })}
      <div className="relative">
        <button
          ref={addRef}
          type="button"
          disabled={filters.length >= MAX_FILTERS}
          aria-keyshortcuts="f"
          onClick={() => {
            editAnchor.current = addRef.current;
            setTextOpen(false);
            setEditing((e) => (e === -1 ? null : -1));
          }}
          className={`inline-flex h-7 items-center gap-1 rounded-md border border-dashed border-slate-300 px-2 text-xs font-medium text-slate-700 hover:border-slate-400 hover:bg-slate-50 disabled:opacity-50 ${focusRing}`}
          data-testid="filter-add"
        >
          <Icon name="plus" className="size-3" />
          {t('table.filter.add')}
        </button>
        {editing !== null && (
          <FilterEditor
            key={editing}
            families={families}
            fields={fields}
            labelOf={labelOf}
            initial={editing >= 0 ? (filters[editing] ?? null) : null}
            anchorRef={editAnchor}
            onCancel={() => setEditing(null)}
            onApply={(f) => {
              const next = editing >= 0 ? filters.map((g, j) => (j === editing ? f : g)) : [...filters, f];
              setEditing(null);
              onChange(next, match);
              onDone();
            }}
          />
        )}
      </div>
      <div className="relative">
        <button
          ref={textRef}
          type="button"
          aria-keyshortcuts="Shift+F"
          aria-label={t('table.filter.text_title')}
          title={where ? `${t('table.filter.text_title')}: ${where}` : t('table.filter.text_title')}
          onClick={() => {
            setEditing(null);
            setTextOpen((o) => !o);
          }}
          className={`inline-flex h-7 items-center rounded-md px-1.5 text-slate-600 hover:bg-slate-100 hover:text-slate-900 ${focusRing}`}
          data-testid="filter-text"
        >
          <Icon name="code" className="size-3.5" />
        </button>
        {textOpen && (
          <WhereEditor
            fields={fields}
            labelOf={labelOf}
            initial={where}
            anchorRef={textRef}
            onCancel={() => setTextOpen(false)}
            onApply={(next, m) => {
              setTextOpen(false);
              onChange(next, m);
              onDone();
            }}
          />
        )}
      </div>
      {filters.length > 0 && (
        <button
          type="button"
          onClick={() => {
            onChange([], 'all');
            onDone();
          }}
          className={`h-7 rounded-md px-1.5 text-xs font-medium text-slate-600 hover:bg-slate-100 hover:text-slate-900 ${focusRing}`}
        >
          {t('table.filter.clear')}
        </button>
      )}
    </div>
  );
}

export const FilterBar = memo(FilterBarInner);
