import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  LicencePeriodStatuses,
  ReportData,
  ReportDateConditions,
  ReportPeriods,
  type LicencePeriodReport,
  type LicencesUsedReport,
} from '@lintel/core';
import { api, runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';
import { CompactField, compactInputClass } from '../../ui/field';

/** The filters of both reports, as the form holds them (lists as the comma-separated text the server reads). */
interface Filters {
  domains: string;
  domain_types: string;
  domain_admins: string;
  data: string;
  matching: 'all' | 'any';
  period: (typeof ReportPeriods)[number];
  date_from: string;
  date_to: string;
  status: string;
  date_condition: (typeof ReportDateConditions)[number];
}
const initial: Filters = {
  domains: '',
  domain_types: '',
  domain_admins: '',
  data: 'users',
  matching: 'all',
  period: 'all_time',
  date_from: '',
  date_to: '',
  status: '',
  date_condition: 'overlaps',
};

/** The arguments the form's filters make (empty fields left out). */
function argsOf(f: Filters, report: 'used' | 'period'): Record<string, string> {
  const out: Record<string, string> = { matching: f.matching, period: f.period };
  for (const k of ['domains', 'domain_types', 'domain_admins'] as const)
    if (f[k].trim()) out[k] = f[k].trim();
  if (f.period === 'manual') {
    if (f.date_from) out.date_from = f.date_from;
    if (f.date_to) out.date_to = f.date_to;
  }
  if (report === 'used' && f.data) out.data = f.data;
  if (report === 'period') {
    if (f.status) out.status = f.status;
    out.date_condition = f.date_condition;
  }
  return out;
}

const PAGE = 200;

/** Downloads a report's file: the server streams it, the browser saves it under the name it gives. */
async function download(path: 'used' | 'period', args: Record<string, string>, format: 'csv' | 'xlsx') {
  const token = api.store.get()?.token;
  const res = await fetch(api.url(`/reports/licenses/${path}/export`, { ...args, format }), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!res.ok) throw new Error(String(res.status));
  const name =
    /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `report.${format}`;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Usage per group as horizontal bars (plain CSS): the share of the group's maximum, or the count alone. */
function UsageBars({ rows, item }: { rows: LicencesUsedReport['data']; item: string }) {
  const { t } = useTranslation();
  const top = Math.max(1, ...rows.map((r) => Math.max(r.used[item] ?? 0, r.limits[item] ?? 0)));
  return (
    <ul className="flex flex-col gap-1" data-testid="usage-bars">
      {rows.map((r) => {
        const used = r.used[item] ?? 0;
        const max = r.limits[item];
        const label = t('reports.bar_label', {
          name: r.name,
          used,
          max: max ?? t('reports.no_max'),
        });
        return (
          <li key={r.group_id} className="grid grid-cols-[12rem_1fr_7rem] items-center gap-2 text-sm">
            <span className="truncate" title={r.name}>
              {r.name}
            </span>
            <span
              className="relative h-4 rounded bg-slate-100"
              role="img"
              aria-label={label}
              data-testid="usage-bar"
            >
              {max !== null && max !== undefined && (
                <span
                  className="absolute inset-y-0 left-0 rounded border-r-2 border-slate-500"
                  style={{ width: `${(max / top) * 100}%` }}
                />
              )}
              <span
                className={`absolute inset-y-0 left-0 rounded ${max != null && used > max ? 'bg-rose-500' : 'bg-sky-500'}`}
                style={{ width: `${(used / top) * 100}%` }}
              />
            </span>
            <span className="text-right tabular-nums text-slate-600">
              {used} / {max ?? '—'}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

const DAY = 86_400_000;
const STATUS_COLOUR: Record<string, string> = {
  active: 'bg-emerald-500',
  ending: 'bg-amber-500',
  expired: 'bg-slate-400',
  future: 'bg-sky-300',
  disabled: 'bg-slate-200',
};

/** Licence periods on one time axis (plain CSS): each bar from its start to its end; open ends reach the edge. */
function Timeline({ rows, now }: { rows: LicencePeriodReport['data']; now: string }) {
  const { t } = useTranslation();
  const days = rows
    .flatMap((r) => [r.from, r.to])
    .filter((d): d is string => !!d)
    .map((d) => Date.parse(d));
  const nowMs = Date.parse(now);
  const lo = Math.min(nowMs - 30 * DAY, ...days);
  const hi = Math.max(nowMs + 30 * DAY, ...days.map((d) => d + DAY));
  const x = (ms: number) => `${((ms - lo) / (hi - lo)) * 100}%`;
  return (
    <ul className="flex flex-col gap-1" data-testid="timeline">
      {rows.map((r) => {
        const start = r.from ? Date.parse(r.from) : lo;
        const end = r.to ? Date.parse(r.to) + DAY : hi;
        const label = t('reports.timeline_label', {
          name: r.name,
          licence: r.licence,
          from: r.from ?? t('reports.open_start'),
          to: r.to ?? t('reports.open_end'),
          status: t(`reports.statuses.${r.status}`),
        });
        return (
          <li
            key={`${r.group_id}:${r.licence}`}
            className="grid grid-cols-[12rem_1fr_9rem] items-center gap-2 text-sm"
          >
            <span className="truncate">
              {r.name} #{r.licence}
            </span>
            <span
              className="relative h-4 rounded bg-slate-50"
              role="img"
              aria-label={label}
              data-testid="timeline-bar"
            >
              <span
                className={`absolute inset-y-0 rounded ${STATUS_COLOUR[r.status]}`}
                style={{ left: x(start), width: `calc(${x(end)} - ${x(start)})` }}
              />
              <span className="absolute inset-y-0 w-px bg-rose-600" style={{ left: x(nowMs) }} />
            </span>
            <span className="text-xs text-slate-600">
              {t(`reports.statuses.${r.status}`)}
              {r.days_left !== null && r.days_left >= 0
                ? ` · ${t('reports.days_left', { count: r.days_left })}`
                : ''}
              <br />
              {t('reports.last_notified')}: {r.last_notified_at?.slice(0, 10) ?? t('reports.never_notified')}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * /reports/licenses (spec part 1 §2.1, permission report-licences-used): licences used per group as bars and
 * the licences' validity periods as a timeline, with the filters of part 2 §7 and the report periods of §9
 * (computed by the server's clock), and their CSV and XLSX exports.
 */
export function LicenceReportsPage() {
  const { t } = useTranslation();
  usePageTitle(t('reports.title'));
  const [form, setForm] = useState<Filters>(initial);
  const [applied, setApplied] = useState<Filters>(initial);
  const [used, setUsed] = useState<LicencesUsedReport | null>(null);
  const [period, setPeriod] = useState<LicencePeriodReport | null>(null);
  const set = <K extends keyof Filters>(k: K, v: Filters[K]) => setForm((f) => ({ ...f, [k]: v }));

  const load = useCallback(async (f: Filters) => {
    try {
      const [u, p] = await Promise.all([
        runCommand('reports.licences_used', { ...argsOf(f, 'used'), limit: PAGE } as never),
        runCommand('reports.licences_period', { ...argsOf(f, 'period'), limit: PAGE } as never),
      ]);
      setUsed(u);
      setPeriod(p);
    } catch (err) {
      pushAlert('error', describeError(err).message);
    }
  }, []);
  useEffect(() => void load(applied), [applied, load]);

  const more = async (which: 'used' | 'period') => {
    const cur = which === 'used' ? used : period;
    if (!cur?.meta.next) return;
    try {
      if (which === 'used') {
        const next = await runCommand('reports.licences_used', {
          ...argsOf(applied, 'used'),
          limit: PAGE,
          cursor: cur.meta.next,
        } as never);
        setUsed((u) => (u ? { ...next, data: [...u.data, ...next.data] } : next));
      } else {
        const next = await runCommand('reports.licences_period', {
          ...argsOf(applied, 'period'),
          limit: PAGE,
          cursor: cur.meta.next,
        } as never);
        setPeriod((p) => (p ? { ...next, data: [...p.data, ...next.data] } : next));
      }
    } catch (err) {
      pushAlert('error', describeError(err).message);
    }
  };
  const exportFile = (which: 'used' | 'period', format: 'csv' | 'xlsx') =>
    download(which, argsOf(applied, which), format).catch(() =>
      pushAlert('error', t('reports.export_failed')),
    );

  const exports = (which: 'used' | 'period') => (
    <span className="flex gap-2">
      <Button type="button" onClick={() => void exportFile(which, 'csv')} data-testid={`export-${which}-csv`}>
        {t('reports.export_csv')}
      </Button>
      <Button
        type="button"
        onClick={() => void exportFile(which, 'xlsx')}
        data-testid={`export-${which}-xlsx`}
      >
        {t('reports.export_xlsx')}
      </Button>
    </span>
  );
  const item = applied.data || 'users';

  return (
    <div className="flex flex-col gap-4 p-4">
      <h1 className="text-lg font-semibold">{t('reports.title')}</h1>
      <form
        className="flex flex-wrap items-end gap-3 rounded border border-slate-200 p-3"
        aria-label={t('reports.filters')}
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(form);
        }}
      >
        <CompactField label={t('reports.period')}>
          <select
            className={compactInputClass}
            value={form.period}
            onChange={(e) => set('period', e.currentTarget.value as Filters['period'])}
          >
            {ReportPeriods.map((p) => (
              <option key={p} value={p}>
                {t(`reports.periods.${p}`)}
              </option>
            ))}
          </select>
        </CompactField>
        {form.period === 'manual' && (
          <>
            <CompactField label={t('reports.date_from')}>
              <input
                type="date"
                className={compactInputClass}
                value={form.date_from}
                onChange={(e) => set('date_from', e.currentTarget.value)}
              />
            </CompactField>
            <CompactField label={t('reports.date_to')}>
              <input
                type="date"
                className={compactInputClass}
                value={form.date_to}
                onChange={(e) => set('date_to', e.currentTarget.value)}
              />
            </CompactField>
          </>
        )}
        <CompactField label={t('reports.groups')}>
          <input
            className={compactInputClass}
            value={form.domains}
            onChange={(e) => set('domains', e.currentTarget.value)}
            placeholder="1,2"
          />
        </CompactField>
        <CompactField label={t('reports.group_types')}>
          <input
            className={compactInputClass}
            value={form.domain_types}
            onChange={(e) => set('domain_types', e.currentTarget.value)}
          />
        </CompactField>
        <CompactField label={t('reports.group_admins')}>
          <input
            className={compactInputClass}
            value={form.domain_admins}
            onChange={(e) => set('domain_admins', e.currentTarget.value)}
          />
        </CompactField>
        <CompactField label={t('reports.data')}>
          <select
            className={compactInputClass}
            value={form.data}
            onChange={(e) => set('data', e.currentTarget.value)}
          >
            {ReportData.map((d) => (
              <option key={d} value={d}>
                {t(`reports.data_items.${d}`)}
              </option>
            ))}
          </select>
        </CompactField>
        <CompactField label={t('reports.status')}>
          <select
            className={compactInputClass}
            value={form.status}
            onChange={(e) => set('status', e.currentTarget.value)}
          >
            <option value="">{t('reports.any_status')}</option>
            {LicencePeriodStatuses.map((s) => (
              <option key={s} value={s}>
                {t(`reports.statuses.${s}`)}
              </option>
            ))}
          </select>
        </CompactField>
        <CompactField label={t('reports.date_condition')}>
          <select
            className={compactInputClass}
            value={form.date_condition}
            onChange={(e) => set('date_condition', e.currentTarget.value as Filters['date_condition'])}
          >
            {ReportDateConditions.map((c) => (
              <option key={c} value={c}>
                {t(`reports.conditions.${c}`)}
              </option>
            ))}
          </select>
        </CompactField>
        <CompactField label={t('reports.matching')}>
          <select
            className={compactInputClass}
            value={form.matching}
            onChange={(e) => set('matching', e.currentTarget.value as Filters['matching'])}
          >
            <option value="all">{t('reports.match_all')}</option>
            <option value="any">{t('reports.match_any')}</option>
          </select>
        </CompactField>
        <Button type="submit" data-testid="reports-apply">
          {t('reports.apply')}
        </Button>
      </form>

      <section aria-labelledby="used-title" className="flex flex-col gap-2">
        <header className="flex items-center justify-between">
          <h2 id="used-title" className="font-medium">
            {t('reports.used_title')}
          </h2>
          {exports('used')}
        </header>
        {used && (
          <p className="text-xs text-slate-500">
            {t('reports.period_shown', { from: used.period.from ?? '…', to: used.period.to ?? '…' })}
          </p>
        )}
        {used && !used.data.length && <p className="text-sm text-slate-500">{t('reports.empty')}</p>}
        {used && <UsageBars rows={used.data} item={item} />}
        {used?.meta.next && (
          <Button type="button" onClick={() => void more('used')}>
            {t('reports.more')}
          </Button>
        )}
      </section>

      <section aria-labelledby="period-title" className="flex flex-col gap-2">
        <header className="flex items-center justify-between">
          <h2 id="period-title" className="font-medium">
            {t('reports.period_title')}
          </h2>
          {exports('period')}
        </header>
        {period && !period.data.length && <p className="text-sm text-slate-500">{t('reports.empty')}</p>}
        {period && <Timeline rows={period.data} now={period.period.now} />}
        {period?.meta.next && (
          <Button type="button" onClick={() => void more('period')}>
            {t('reports.more')}
          </Button>
        )}
      </section>
    </div>
  );
}
