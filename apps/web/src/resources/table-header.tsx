import { useEffect, useRef } from 'react';
import type { Header } from '@tanstack/react-table';
import { focusRing } from '../ui/button';
import { Icon } from '../ui/icon';
import type { TableColumn } from './table-columns';

/** The sticky header row: select-all, then a title per column (a sort button when it sorts) and a resize edge. */
export function HeaderRow<Row>({
  headers,
  byId,
  selectAll,
  onSelectAll,
  selectAllLabel,
  sortLabel,
}: {
  headers: Header<Row, unknown>[];
  byId: ReadonlyMap<string, TableColumn<Row>>;
  selectAll: 'none' | 'some' | 'all';
  onSelectAll: () => void;
  selectAllLabel: string;
  sortLabel: (column: string, next: 'asc' | 'desc' | 'none') => string;
}) {
  const boxRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (boxRef.current) boxRef.current.indeterminate = selectAll === 'some';
  }, [selectAll]);
  return (
    <div role="rowgroup" className="sticky top-0 z-10" style={{ minWidth: 'var(--lt-width)' }}>
      <div
        role="row"
        aria-rowindex={1}
        className="grid h-8 border-b border-slate-300 bg-slate-100 text-xs font-semibold text-slate-700"
        style={{ gridTemplateColumns: 'var(--lt-cols)' }}
      >
        <div role="columnheader" className="flex items-center justify-center">
          <input
            ref={boxRef}
            type="checkbox"
            checked={selectAll !== 'none'}
            onChange={onSelectAll}
            aria-label={selectAllLabel}
            title={selectAllLabel}
            className="size-3.5 cursor-pointer accent-blue-700"
            data-testid="select-all"
          />
        </div>
        {headers.map((header) => {
          const column = header.column;
          const info = byId.get(column.id);
          if (!info) return null;
          const sorted = column.getIsSorted();
          const right = info.align === 'right';
          const center = info.align === 'center';
          const next = column.getNextSortingOrder();
          return (
            <div
              key={header.id}
              role="columnheader"
              aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}
              className="relative flex min-w-0 items-stretch border-r border-slate-200/80 last:border-r-0"
              data-column={column.id}
            >
              {info.sortable ? (
                <button
                  type="button"
                  onClick={column.getToggleSortingHandler()}
                  title={sortLabel(info.label, next === false ? 'none' : next)}
                  className={`flex min-w-0 flex-1 items-center gap-1 px-2 hover:bg-slate-200 hover:text-slate-900 ${right ? 'flex-row-reverse text-right' : center ? 'justify-center' : 'text-left'} ${focusRing} focus-visible:ring-inset focus-visible:ring-offset-0`}
                  data-testid={`sort-${column.id}`}
                >
                  <span className="truncate">{info.label}</span>
                  {sorted && (
                    <Icon
                      name={sorted === 'asc' ? 'arrow-up' : 'arrow-down'}
                      className="size-3 shrink-0 text-blue-700"
                    />
                  )}
                </button>
              ) : (
                <span
                  className={`flex min-w-0 flex-1 items-center px-2 ${right ? 'justify-end' : center ? 'justify-center' : ''}`}
                  title={info.label}
                >
                  <span className="truncate">{info.label}</span>
                </span>
              )}
              {column.getCanResize() && (
                <div
                  aria-hidden="true"
                  onMouseDown={header.getResizeHandler()}
                  onTouchStart={header.getResizeHandler()}
                  onDoubleClick={() => column.resetSize()}
                  className={`absolute top-0 -right-1 z-10 h-full w-2 cursor-col-resize touch-none select-none ${
                    column.getIsResizing() ? 'bg-blue-500/60' : 'hover:bg-blue-400/40'
                  }`}
                />
              )}
            </div>
          );
        })}
      </div>
    </div>
  );
}
