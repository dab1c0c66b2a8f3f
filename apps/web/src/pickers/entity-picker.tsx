import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { familyCommandId, pickerQuery, pickerRow, type PickerRow } from '@lintel/commands';
import { runCommand } from '../api/client';
import { describeError } from '../api/errors';
import type { Family } from '../forms/schema';
import { Icon, Spinner } from '../ui/icon';
import { knownName, rememberName } from './names';

const PAGE = 20;

/** One page of a family's list command, searched on the server. */
export async function searchFamily(
  family: Family,
  search: string,
  page = 1,
  limit = PAGE,
): Promise<{ rows: PickerRow[]; total: number }> {
  const reply = (await runCommand(
    familyCommandId(family, 'list'),
    pickerQuery(search, page, limit),
  )) as unknown as { data: Record<string, unknown>[]; meta: { total: number } };
  const rows = reply.data.map((r) => pickerRow(family, r));
  for (const r of rows) rememberName(family, r.id, r.name);
  return { rows, total: reply.meta.total };
}

export interface EntityPickerProps {
  family: Family;
  multiple?: boolean;
  value: number | null | number[];
  onChange: (value: number | null | number[]) => void;
  label: string;
  /** the field path: test ids and error wiring */
  name: string;
  error?: string | undefined;
  disabled?: boolean;
  required?: boolean;
  /** rows known from the record being edited */
  known?: readonly { id: number; name: string }[];
  /** ids that may not be chosen (a group as its own parent) */
  exclude?: readonly number[];
  placeholder?: string;
}

/**
 * The picker of spec part 1 §2.4 over any family's list command: single or multiple choice, server-side
 * search, load more. A combobox: type to search, arrows to move, Enter to choose, Backspace on an empty
 * search removes the last choice, Escape closes the list (not the dialog around it).
 */
export function EntityPicker({
  family,
  multiple = false,
  value,
  onChange,
  label,
  name,
  error,
  disabled = false,
  required = false,
  known,
  exclude,
  placeholder,
}: EntityPickerProps) {
  const { t } = useTranslation();
  const auto = useId();
  const inputId = `${auto}-input`;
  const listId = `${auto}-list`;
  const errorId = `${auto}-error`;
  const [open, setOpen] = useState(false);
  const [search, setSearch] = useState('');
  const [rows, setRows] = useState<PickerRow[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [loading, setLoading] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const [, setNamesVersion] = useState(0);
  const request = useRef(0);
  const inputRef = useRef<HTMLInputElement>(null);

  const selected: number[] = Array.isArray(value)
    ? value
    : value === null || value === undefined
      ? []
      : [value];

  for (const k of known ?? []) rememberName(family, k.id, k.name);

  // chips need names: ask for the ones nobody has seen yet
  const missing = selected.filter((id) => knownName(family, id) === undefined);
  const missingKey = missing.join(',');
  useEffect(() => {
    if (!missingKey) return;
    let live = true;
    void Promise.all(
      missingKey.split(',').map((id) =>
        runCommand(familyCommandId(family, 'get'), { id: Number(id) })
          .then((r) => rememberName(family, Number(id), String((r as { name?: unknown }).name ?? id)))
          .catch(() => rememberName(family, Number(id), `#${id}`)),
      ),
    ).then(() => live && setNamesVersion((v) => v + 1));
    return () => {
      live = false;
    };
  }, [family, missingKey]);

  const load = useCallback(
    async (text: string, pageNo: number) => {
      const ticket = ++request.current;
      setLoading(true);
      setFailure(null);
      try {
        const got = await searchFamily(family, text, pageNo);
        if (ticket !== request.current) return;
        setRows((prev) => (pageNo === 1 ? got.rows : [...prev, ...got.rows]));
        setTotal(got.total);
        setPage(pageNo);
        if (pageNo === 1) setActive(0);
      } catch (err) {
        if (ticket === request.current) setFailure(describeError(err).message);
      } finally {
        if (ticket === request.current) setLoading(false);
      }
    },
    [family],
  );

  // search as the person types (debounced), from the first page
  useEffect(() => {
    if (!open) return;
    const timer = window.setTimeout(() => void load(search, 1), search ? 150 : 0);
    return () => window.clearTimeout(timer);
  }, [open, search, load]);

  const visible = rows.filter((r) => !exclude?.includes(r.id));
  const hasMore = rows.length < total;
  const optionCount = visible.length + (hasMore ? 1 : 0);

  function choose(row: PickerRow) {
    rememberName(family, row.id, row.name);
    if (multiple) {
      onChange(selected.includes(row.id) ? selected.filter((id) => id !== row.id) : [...selected, row.id]);
      setSearch('');
    } else {
      onChange(row.id);
      setSearch('');
      setOpen(false);
    }
  }

  function remove(id: number) {
    if (multiple) onChange(selected.filter((x) => x !== id));
    else onChange(null);
    inputRef.current?.focus();
  }

  function pickActive() {
    if (active < visible.length) choose(visible[active]!);
    else if (hasMore) void load(search, page + 1);
  }

  function onKeyDown(e: KeyboardEvent<HTMLInputElement>) {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      if (!open) setOpen(true);
      else setActive((a) => Math.min(a + 1, Math.max(optionCount - 1, 0)));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((a) => Math.max(a - 1, 0));
    } else if (e.key === 'Enter') {
      // Ctrl/Cmd+Enter is the form's approve, not a choice
      if (open && optionCount > 0 && !e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey) {
        e.preventDefault();
        pickActive();
      }
    } else if (e.key === 'Escape') {
      if (open) {
        // close the list only; the dialog around stays
        e.preventDefault();
        e.stopPropagation();
        setOpen(false);
      }
    } else if (e.key === 'Backspace' && search === '' && selected.length) {
      remove(selected[selected.length - 1]!);
    } else if (e.key === 'Tab') {
      setOpen(false);
    }
  }

  const optionId = (i: number) => `${auto}-opt-${i}`;

  return (
    <div className="relative" data-testid={`picker-${name}`}>
      <label htmlFor={inputId} className="mb-1 block text-xs font-medium text-slate-700">
        {label}
        {required && (
          <span aria-hidden="true" className="text-red-600">
            {' '}
            *
          </span>
        )}
      </label>
      <div
        className={`flex min-h-8 flex-wrap items-center gap-1 rounded-md border bg-white px-1.5 py-1 shadow-xs focus-within:border-blue-600 focus-within:ring-2 focus-within:ring-blue-600/25 ${
          error ? 'border-red-500' : 'border-slate-300'
        } ${disabled ? 'bg-slate-100' : ''}`}
        onClick={() => inputRef.current?.focus()}
      >
        {selected.map((id) => (
          <span
            key={id}
            className="inline-flex h-6 max-w-full items-center gap-1 rounded bg-slate-100 pr-0.5 pl-1.5 text-xs text-slate-800"
            data-testid={`chip-${name}`}
          >
            <span className="truncate">{knownName(family, id) ?? '…'}</span>
            {!disabled && (
              <button
                type="button"
                tabIndex={-1}
                aria-label={t('picker.remove', { name: knownName(family, id) ?? id })}
                onClick={(e) => {
                  e.stopPropagation();
                  remove(id);
                }}
                className="rounded p-0.5 text-slate-500 hover:bg-slate-200 hover:text-slate-900"
              >
                <Icon name="close" className="size-3" />
              </button>
            )}
          </span>
        ))}
        <input
          ref={inputRef}
          id={inputId}
          role="combobox"
          aria-expanded={open}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={open && optionCount ? optionId(active) : undefined}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          aria-required={required || undefined}
          data-testid={`field-${name}`}
          disabled={disabled}
          value={search}
          placeholder={selected.length ? '' : (placeholder ?? t('picker.search'))}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => {
            setSearch(e.target.value);
            setOpen(true);
          }}
          onKeyDown={onKeyDown}
          onBlur={() => window.setTimeout(() => setOpen(false), 120)}
          onMouseDown={() => setOpen(true)}
          className="h-6 min-w-24 flex-1 border-0 bg-transparent px-1 text-sm outline-none placeholder:text-slate-400"
        />
        {loading && <Spinner className="size-3.5 text-slate-400" />}
      </div>
      {open && (
        <ul
          id={listId}
          role="listbox"
          aria-label={label}
          aria-multiselectable={multiple || undefined}
          className="absolute z-30 mt-1 max-h-64 w-full overflow-y-auto rounded-md border border-slate-200 bg-white py-1 text-sm shadow-lg"
        >
          {visible.map((row, i) => {
            const isSelected = selected.includes(row.id);
            return (
              <li
                key={row.id}
                id={optionId(i)}
                role="option"
                aria-selected={isSelected}
                data-active={i === active || undefined}
                data-name={row.name}
                onMouseDown={(e) => {
                  e.preventDefault();
                  choose(row);
                }}
                onMouseEnter={() => setActive(i)}
                className={`flex cursor-pointer items-center gap-2 px-2 py-1 ${i === active ? 'bg-blue-50 text-blue-900' : 'text-slate-800'}`}
              >
                <span className="flex size-4 shrink-0 items-center justify-center text-blue-700">
                  {isSelected && <Icon name="check" className="size-3.5" />}
                </span>
                {row.color && (
                  <span
                    aria-hidden="true"
                    className="size-3 shrink-0 rounded-sm"
                    style={{ background: row.color }}
                  />
                )}
                <span className="min-w-0 truncate">{row.name}</span>
                {row.hint && (
                  <span className="ml-auto min-w-0 truncate pl-2 text-xs text-slate-500">{row.hint}</span>
                )}
              </li>
            );
          })}
          {hasMore && (
            <li
              id={optionId(visible.length)}
              role="option"
              aria-selected={false}
              data-active={active === visible.length || undefined}
              onMouseDown={(e) => {
                e.preventDefault();
                void load(search, page + 1);
              }}
              className={`cursor-pointer px-2 py-1 text-xs font-medium text-blue-700 ${active === visible.length ? 'bg-blue-50' : ''}`}
            >
              {t('picker.load_more', { shown: rows.length, total })}
            </li>
          )}
          {!loading && !failure && visible.length === 0 && (
            <li className="px-2 py-1 text-slate-500" role="presentation">
              {t('picker.nothing')}
            </li>
          )}
          {failure && (
            <li className="px-2 py-1 text-red-700" role="presentation">
              {failure}
            </li>
          )}
        </ul>
      )}
      {error && (
        <p
          id={errorId}
          className="mt-1 flex items-center gap-1 text-xs text-red-700"
          data-testid={`error-${name}`}
        >
          <Icon name="error" className="size-3.5 shrink-0" />
          {error}
        </p>
      )}
    </div>
  );
}
