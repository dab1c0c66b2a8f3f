import { useTranslation } from 'react-i18next';
import { resourceOf } from '@lintel/commands';
import { fieldLabel } from '../forms/command-form';
import { useFormatDate } from '../format/use-format-date';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A cell: names of related rows, dates in the user's format, yes/no, plain values. */
function Cell({ name, value }: { name: string; value: unknown }) {
  const { t } = useTranslation();
  const formatDate = useFormatDate();
  if (value === null || value === undefined || value === '') return <span className="text-slate-400">—</span>;
  if (typeof value === 'boolean') return <>{value ? t('values.yes') : t('values.no')}</>;
  if (typeof value === 'string' && /(_at|^time)$/.test(name) && !Number.isNaN(Date.parse(value)))
    return <>{formatDate(value)}</>;
  if (Array.isArray(value))
    return (
      <>
        {value
          .map((v) =>
            isRec(v) && 'name' in v ? String(v.name) : typeof v === 'object' ? JSON.stringify(v) : String(v),
          )
          .join(', ')}
      </>
    );
  if (isRec(value)) return <>{'name' in value ? String(value.name) : JSON.stringify(value)}</>;
  return <>{String(value)}</>;
}

/**
 * What a command answered, readable: a list as a compact table (the family's default columns), a record as
 * label and value rows.
 */
export function ResultView({ commandId, result }: { commandId: string; result: unknown }) {
  const { t } = useTranslation();
  const family = resourceOf(commandId);
  if (isRec(result) && Array.isArray(result.data)) {
    const rows = result.data.filter(isRec);
    const columns = family
      ? Object.entries(family.fields)
          .filter(([, f]) => f.default)
          .map(([k]) => k)
      : Object.keys(rows[0] ?? {}).slice(0, 6);
    const total =
      isRec(result.meta) && typeof result.meta.total === 'number' ? result.meta.total : rows.length;
    return (
      <div className="space-y-2">
        <p className="text-xs text-slate-600" data-testid="result-total">
          {t('result.shown', { shown: rows.length, total })}
        </p>
        <div className="overflow-x-auto rounded-md border border-slate-200">
          <table className="w-full text-left text-xs">
            <thead className="bg-slate-50 text-slate-600">
              <tr>
                {columns.map((c) => (
                  <th key={c} scope="col" className="px-2 py-1.5 font-semibold whitespace-nowrap">
                    {fieldLabel(commandId, { key: c })}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={String(r.id ?? i)} className="border-t border-slate-100">
                  {columns.map((c) => (
                    <td key={c} className="max-w-64 truncate px-2 py-1">
                      <Cell name={c} value={r[c]} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    );
  }
  const rec: Rec = isRec(result) ? (isRec(result.data) ? result.data : result) : { value: result };
  return (
    <dl className="divide-y divide-slate-100 rounded-md border border-slate-200 text-sm">
      {Object.entries(rec).map(([k, v]) => (
        <div key={k} className="grid grid-cols-[12rem_1fr] gap-3 px-3 py-1.5">
          <dt className="truncate text-slate-500">{fieldLabel(commandId, { key: k })}</dt>
          <dd className="min-w-0 break-words text-slate-900">
            <Cell name={k} value={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
