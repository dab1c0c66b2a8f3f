import { memo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { focusRing } from '../ui/button';
import { Popover } from './table-popover';
import { Icon } from '../ui/icon';

interface ColumnChoice {
  id: string;
  label: string;
}

/** Which columns show; "reset" goes back to the family's defaults and widths. */
function ColumnChooserInner({
  columns,
  visible,
  onToggle,
  onReset,
}: {
  columns: ColumnChoice[];
  visible: readonly string[];
  onToggle: (id: string) => void;
  onReset: () => void;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const anchor = useRef<HTMLButtonElement>(null);
  const shown = new Set(visible);
  return (
    <div className="relative">
      <button
        ref={anchor}
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        className={`inline-flex h-7 items-center gap-1.5 rounded-md px-2 text-xs font-medium text-slate-700 hover:bg-slate-100 ${focusRing}`}
        data-testid="columns-button"
      >
        <Icon name="columns" className="size-3.5" />
        {t('table.columns.button')}
      </button>
      {open && (
        <Popover
          label={t('table.columns.title')}
          anchorRef={anchor}
          onClose={() => setOpen(false)}
          align="right"
          className="w-60"
          testId="columns-panel"
        >
          <fieldset>
            <legend className="mb-1.5 text-xs font-semibold text-slate-600">
              {t('table.columns.title')}
            </legend>
            <ul className="max-h-96 space-y-0.5 overflow-y-auto">
              {columns.map((c) => (
                <li key={c.id}>
                  <label className="flex h-7 cursor-pointer items-center gap-2 rounded px-1.5 hover:bg-slate-50">
                    <input
                      type="checkbox"
                      className="size-3.5 accent-blue-700"
                      checked={shown.has(c.id)}
                      disabled={shown.has(c.id) && shown.size === 1}
                      onChange={() => onToggle(c.id)}
                    />
                    <span className="truncate">{c.label}</span>
                  </label>
                </li>
              ))}
            </ul>
          </fieldset>
          <div className="mt-2 border-t border-slate-100 pt-2">
            <button
              type="button"
              onClick={onReset}
              className={`h-7 rounded-md px-2 text-xs font-medium text-slate-700 hover:bg-slate-100 ${focusRing}`}
            >
              {t('table.columns.reset')}
            </button>
          </div>
        </Popover>
      )}
    </div>
  );
}

export const ColumnChooser = memo(ColumnChooserInner);
