import { useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PermissionCategories, permissionCategoryTitleKey, permissionTitleKey } from '@lintel/core';
import { focusRing } from '../ui/button';
import { inputClass } from '../ui/field';
import { Icon } from '../ui/icon';

const tr = (t: (k: string) => string, key: string) => t(key);

/**
 * A role's permissions (spec part 1 §3 "Role"): checkboxes grouped by category, titles from the permission
 * codes, a category box that takes or leaves the whole category, and a filter by title.
 */
export function PermissionsField({
  label,
  value,
  onChange,
  disabled = false,
  error,
  name,
}: {
  label: string;
  value: readonly string[];
  onChange: (next: string[]) => void;
  disabled?: boolean;
  error?: string | undefined;
  name: string;
}) {
  const { t } = useTranslation();
  const untyped = t as unknown as (k: string) => string;
  const [filter, setFilter] = useState('');
  const filterId = useId();
  const chosen = useMemo(() => new Set(value), [value]);

  const groups = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    return Object.entries(PermissionCategories)
      .map(([category, codes]) => {
        const title = tr(untyped, permissionCategoryTitleKey(category));
        const items = (codes as readonly string[])
          .map((code) => ({ code, title: tr(untyped, permissionTitleKey(code)) }))
          .filter(
            (i) =>
              !needle ||
              i.title.toLowerCase().includes(needle) ||
              i.code.includes(needle) ||
              title.toLowerCase().includes(needle),
          );
        return { category, title, items };
      })
      .filter((g) => g.items.length);
  }, [filter, untyped]);

  const total = Object.values(PermissionCategories).flat().length;

  function setMany(codes: string[], on: boolean) {
    const next = new Set(chosen);
    for (const c of codes) {
      if (on) next.add(c);
      else next.delete(c);
    }
    onChange([...next]);
  }

  return (
    <fieldset className="min-w-0" data-testid={`field-${name}`} aria-invalid={error ? true : undefined}>
      <legend className="mb-1 flex w-full items-center gap-2 text-xs font-medium text-slate-700">
        {label}
        <span className="font-normal text-slate-500" data-testid="permissions-count">
          {t('permissions_field.count', { chosen: chosen.size, total })}
        </span>
      </legend>
      <label htmlFor={filterId} className="sr-only">
        {t('permissions_field.filter')}
      </label>
      <input
        id={filterId}
        type="search"
        value={filter}
        onChange={(e) => setFilter(e.target.value)}
        placeholder={t('permissions_field.filter')}
        data-testid="permissions-filter"
        className={`${inputClass} mb-2 max-w-xs border-slate-300`}
      />
      {error && (
        <p className="mb-1 flex items-center gap-1 text-xs text-red-700" data-testid={`error-${name}`}>
          <Icon name="error" className="size-3.5 shrink-0" />
          {error}
        </p>
      )}
      <div className="columns-1 gap-3 md:columns-2 xl:columns-3">
        {groups.map((g) => {
          const codes = g.items.map((i) => i.code);
          const on = codes.filter((c) => chosen.has(c)).length;
          return (
            <div
              key={g.category}
              className="mb-3 break-inside-avoid rounded-md border border-slate-200"
              data-testid={`permissions-${g.category}`}
            >
              <label className="flex h-7 items-center gap-2 border-b border-slate-100 bg-slate-50 px-2 text-xs font-semibold text-slate-700">
                <input
                  type="checkbox"
                  disabled={disabled}
                  checked={on === codes.length}
                  ref={(el) => {
                    if (el) el.indeterminate = on > 0 && on < codes.length;
                  }}
                  onChange={(e) => setMany(codes, e.target.checked)}
                  className={`size-3.5 accent-blue-700 ${focusRing}`}
                />
                <span className="min-w-0 flex-1 truncate">{g.title}</span>
                <span className="font-normal text-slate-500 tabular-nums">
                  {on}/{codes.length}
                </span>
              </label>
              <ul className="px-2 py-1">
                {g.items.map((i) => (
                  <li key={i.code}>
                    <label className="flex items-start gap-2 py-0.5 text-xs text-slate-800" title={i.code}>
                      <input
                        type="checkbox"
                        disabled={disabled}
                        checked={chosen.has(i.code)}
                        onChange={(e) => setMany([i.code], e.target.checked)}
                        data-code={i.code}
                        className={`mt-px size-3.5 shrink-0 accent-blue-700 ${focusRing}`}
                      />
                      <span>{i.title}</span>
                    </label>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
      </div>
    </fieldset>
  );
}
