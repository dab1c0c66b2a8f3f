import { useCallback, useEffect, useRef, useState, type DragEvent, type ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand } from '@lintel/commands';
import type { Licence, LicenceList, LicenceUsage } from '@lintel/core';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { confirmAction } from '../../commands/dialogs';
import { dataVersionAtom, execute } from '../../commands/execute';
import { commandTitle } from '../../commands/titles';
import { useFormatDate } from '../../format/use-format-date';
import { useFloatingAction } from '../../layout/fab';
import { usePageTitle } from '../../layout/page-title';
import { usePageAction } from '../../palette/page-actions';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';
import {
  CountedAreas,
  areaOn,
  licensedAreas,
  listStatus,
  usageOf,
  type CountedArea,
  type ListStatus,
} from './licence-words';

type Tr = (key: string, params?: Record<string, unknown>) => string;

function Panel({
  title,
  children,
  testId,
  action,
}: {
  title: string;
  children: ReactNode;
  testId?: string;
  action?: ReactNode;
}) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white" aria-label={title} data-testid={testId}>
      <header className="flex h-9 items-center justify-between border-b border-slate-200 px-3">
        <h2 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">{title}</h2>
        {action}
      </header>
      <div className="p-3">{children}</div>
    </section>
  );
}

const STATUS_TONE: Record<ListStatus, string> = {
  active: 'border-emerald-200 bg-emerald-50 text-emerald-800',
  ending: 'border-amber-200 bg-amber-50 text-amber-900',
  disabled: 'border-slate-200 bg-slate-100 text-slate-600',
};

function StatusBadge({ licence }: { licence: Licence }) {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  const { status, reason } = listStatus(licence.state);
  return (
    <span className="inline-flex flex-col items-start gap-0.5">
      <span
        className={`inline-flex h-5 items-center rounded border px-1.5 text-xs font-medium ${STATUS_TONE[status]}`}
        data-testid="licence-status"
        data-status={status}
      >
        {tr(`licences.status.${status}`)}
      </span>
      {reason && <span className="text-xs text-slate-500">{tr(`licences.reason.${reason}`)}</span>}
    </span>
  );
}

/** What is in force: the licence that ends last with its days left, the evaluation marked as such, or none. */
function InForce({ list, onCopy }: { list: LicenceList; onCopy: () => void }) {
  const { t } = useTranslation();
  const formatDate = useFormatDate(false);
  const current = list.in_force ? list.items.find((l) => l.id === list.in_force!.id) : undefined;
  const days = list.in_force?.days_left ?? null;
  const until = list.in_force?.valid_to ? formatDate(list.in_force.valid_to) : t('licences.no_end');
  let body: ReactNode;
  if (!current)
    body = (
      <div
        className="flex items-start gap-2 text-sm text-red-800"
        data-testid="licence-in-force"
        data-kind="none"
      >
        <Icon name="error" className="mt-0.5 size-4 shrink-0" />
        <div>
          <div className="font-semibold">{t('licences.none_title')}</div>
          <div className="text-slate-700">{t('licences.none_text')}</div>
        </div>
      </div>
    );
  else if (list.evaluation)
    body = (
      <div
        className="flex items-start gap-2 rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-950"
        data-testid="licence-in-force"
        data-kind="evaluation"
      >
        <Icon name="warning" className="mt-0.5 size-4 shrink-0 text-amber-700" />
        <div className="min-w-0">
          <div className="flex flex-wrap items-baseline gap-x-3">
            <span className="font-semibold">{t('licences.evaluation_title')}</span>
            <span className="font-semibold tabular-nums" data-testid="licence-days-left">
              {t('licences.days_left', { days: days ?? 0 })}
            </span>
          </div>
          <div>{t('licences.evaluation_text', { date: until })}</div>
        </div>
      </div>
    );
  else
    body = (
      <div
        className="flex items-start gap-2 text-sm text-slate-800"
        data-testid="licence-in-force"
        data-kind="bought"
      >
        <Icon name="check" className="mt-0.5 size-4 shrink-0 text-emerald-700" />
        <div className="min-w-0">
          <div className="flex flex-wrap items-baseline gap-x-3">
            <span className="font-semibold">{t('licences.in_force_text', { issuer: current.issuer })}</span>
            <span className="font-semibold tabular-nums" data-testid="licence-days-left">
              {days === null ? t('licences.no_end') : t('licences.days_left', { days })}
            </span>
          </div>
          <div className="text-slate-600">{t('licences.valid_until', { date: until })}</div>
          {list.active_ids.length > 1 && (
            <div className="text-slate-600" data-testid="licence-stacked">
              {t('licences.stacked', { count: list.active_ids.length })}
            </div>
          )}
        </div>
      </div>
    );
  return (
    <div className="space-y-3">
      {body}
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <span className="text-slate-500">{t('licences.instance')}</span>
        <code
          className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800"
          data-testid="licence-instance"
        >
          {list.instance_id}
        </code>
        <Button size="sm" variant="ghost" onClick={onCopy} icon={<Icon name="copy" className="size-3.5" />}>
          {t('licences.copy')}
        </Button>
        <span className="text-xs text-slate-500">{t('licences.instance_hint')}</span>
      </div>
    </div>
  );
}

/** Each counted feature's use against the licences' counts, as a bar. */
function UsageBars({ usage, list }: { usage: LicenceUsage; list: LicenceList }) {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  const inForce = list.items.filter((l) => list.active_ids.includes(l.id));
  const licensed = (area: CountedArea) => inForce.some((l) => areaOn(l.features, area));
  return (
    <ul className="space-y-3">
      {CountedAreas.map((area) => {
        const { used, max } = usage.features[area];
        const on = licensed(area);
        const u = usageOf(used, max, usage.units_per_licence);
        const label = tr(`licences.usage.${area}`);
        const figure = !on
          ? t('licences.usage_off')
          : u.capacity === null
            ? t('licences.usage_unlimited', { used })
            : t('licences.usage_of', { used, capacity: u.capacity });
        return (
          <li key={area} data-testid={`licence-usage-${area}`}>
            <div className="flex items-baseline justify-between gap-3 text-sm">
              <span className="text-slate-700">{label}</span>
              <span className={`tabular-nums ${u.over ? 'font-semibold text-red-700' : 'text-slate-900'}`}>
                {figure}
              </span>
            </div>
            <div
              role="meter"
              aria-label={label}
              aria-valuemin={0}
              aria-valuemax={u.capacity ?? used}
              aria-valuenow={used}
              aria-valuetext={figure}
              className="mt-1 h-2 overflow-hidden rounded-full bg-slate-100"
            >
              <div
                className={`h-full rounded-full ${!on ? 'bg-slate-300' : u.over ? 'bg-red-600' : (u.ratio ?? 0) >= 0.9 ? 'bg-amber-500' : 'bg-blue-600'}`}
                style={{ width: `${on ? ((u.ratio ?? 0) * 100).toFixed(1) : 0}%` }}
              />
            </div>
            {on && max !== null && (
              <div className="mt-0.5 text-xs text-slate-500">
                {tr(`licences.usage_units.${area}`, { count: max, units: usage.units_per_licence })}
              </div>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function LicenceRow({
  licence,
  mayDelete,
  onDelete,
}: {
  licence: Licence;
  mayDelete: boolean;
  onDelete: (l: Licence) => void;
}) {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  const formatDate = useFormatDate();
  const formatDay = useFormatDate(false);
  const areas = licensedAreas(licence);
  const ended = licence.days_left !== null && licence.days_left < 0;
  return (
    <tr
      className="border-t border-slate-100 align-top"
      data-testid="licence-row"
      data-id={licence.id}
      data-kind={licence.kind}
      data-state={licence.state}
    >
      <td className="px-3 py-2">
        <StatusBadge licence={licence} />
      </td>
      <td className="px-3 py-2">
        <div className="flex flex-wrap items-center gap-1.5">
          <span className="font-medium text-slate-900">{licence.issuer}</span>
          <span
            className={`inline-flex h-5 items-center rounded px-1.5 text-[11px] font-medium ${
              licence.kind === 'evaluation' ? 'bg-amber-100 text-amber-900' : 'bg-slate-100 text-slate-600'
            }`}
            data-testid="licence-kind"
          >
            {tr(`licences.kind.${licence.kind}`)}
          </span>
        </div>
        {licence.licence_id && (
          <div className="max-w-44 truncate font-mono text-xs text-slate-500" title={licence.licence_id}>
            {licence.licence_id}
          </div>
        )}
      </td>
      <td
        className="px-3 py-2 whitespace-nowrap text-slate-700"
        title={licence.valid_from ? formatDate(licence.valid_from) : undefined}
      >
        {licence.valid_from ? formatDay(licence.valid_from) : '—'}
      </td>
      <td
        className="px-3 py-2 whitespace-nowrap text-slate-700"
        title={licence.valid_to ? formatDate(licence.valid_to) : undefined}
      >
        {licence.valid_to ? formatDay(licence.valid_to) : t('licences.no_end')}
      </td>
      <td className="px-3 py-2 text-right whitespace-nowrap tabular-nums text-slate-900">
        {licence.days_left === null ? '—' : ended ? t('licences.ended') : licence.days_left}
      </td>
      <td className="min-w-80 px-3 py-2">
        <ul className="flex flex-wrap gap-1" aria-label={t('licences.columns.features')}>
          {areas.length === 0 && <li className="text-xs text-slate-500">{t('licences.no_features')}</li>}
          {areas.map(({ area, count }) => (
            <li
              key={area}
              className="inline-flex h-5 items-center rounded border border-slate-200 px-1.5 text-xs text-slate-700"
              data-area={area}
            >
              {tr(`licences.features.${area}`)}
              {count !== null && <span className="ml-1 tabular-nums text-slate-500">×{count}</span>}
            </li>
          ))}
        </ul>
      </td>
      <td className="px-3 py-2 text-right">
        {mayDelete && (
          <Button
            size="sm"
            variant="ghost"
            className="text-red-700"
            icon={<Icon name="trash" className="size-3.5" />}
            data-testid="licence-delete"
            aria-label={t('licences.delete_named', { name: licence.licence_id ?? `#${licence.id}` })}
            onClick={() => onDelete(licence)}
          >
            {t('licences.delete')}
          </Button>
        )}
      </td>
    </tr>
  );
}

/**
 * /licenses (spec part 1 §2.1, §4; part 2 §7 Licences): what is in force with its days left (the evaluation
 * licence marked as such), adding a signed file by drag and drop or with the file button (`n`, the page's
 * main action, and the palette), the licence server, each feature's usage against the counts, and the list
 * with its statuses and Delete behind the confirmation.
 */
export function LicencesPage() {
  const { t } = useTranslation();
  usePageTitle(t('licences.title'));
  const version = useAtomValue(dataVersionAtom);
  const can = useCan();
  const mayAdd = can(getCommand('licence.add_file').gates).can;
  const mayCloud = can(getCommand('licence.add_cloud').gates).can;
  const mayDelete = can(getCommand('licence.delete').gates).can;
  const [data, setData] = useState<{ list: LicenceList; usage: LicenceUsage } | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [addError, setAddError] = useState<string | null>(null);
  const [busy, setBusy] = useState<'file' | 'cloud' | null>(null);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let live = true;
    Promise.all([runCommand('licence.list', {}), runCommand('licence.usage', {})])
      .then(([list, usage]) => {
        if (!live) return;
        setData({ list, usage });
        setLoadError(null);
      })
      .catch((err: unknown) => live && setLoadError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [version]);

  const choose = useCallback(() => input.current?.click(), []);

  async function add(run: () => Promise<{ id: number; licence_id: string | null }>, kind: 'file' | 'cloud') {
    setBusy(kind);
    setAddError(null);
    try {
      const r = await run();
      pushAlert('success', t('licences.added', { id: r.licence_id ?? `#${r.id}` }));
    } catch (err) {
      setAddError(describeError(err).message);
    } finally {
      setBusy(null);
      if (input.current) input.current.value = '';
    }
  }
  const upload = (file: File) => add(() => execute('licence.add_file', { file }, 'ui'), 'file');
  const fromCloud = () => add(() => execute('licence.add_cloud', {}, 'ui'), 'cloud');

  useFloatingAction(
    mayAdd
      ? {
          labelKey: 'licences.add_file',
          onClick: choose,
          icon: 'upload',
          state: busy ? 'loading' : 'ready',
          testId: 'licence-add',
        }
      : null,
  );
  usePageAction(
    mayAdd ? { id: 'licences.add_file', labelKey: 'licences.add_file', icon: 'upload', run: choose } : null,
  );
  usePageAction(
    mayCloud
      ? {
          id: 'licences.add_cloud',
          labelKey: 'licences.add_cloud',
          icon: 'download',
          run: () => void fromCloud(),
        }
      : null,
  );

  async function remove(l: Licence) {
    const name = l.licence_id ?? `#${l.id}`;
    const ok = await confirmAction({
      title: commandTitle('licence.delete'),
      message: t('licences.delete_confirm', { name }),
      approveLabel: t('delete.approve'),
      danger: true,
    });
    if (!ok) return;
    try {
      await execute('licence.delete', { id: l.id }, 'ui');
      pushAlert('success', t('licences.deleted', { name }));
    } catch (err) {
      pushAlert('error', describeError(err).message);
    }
  }

  function copyInstance() {
    if (!data) return;
    void navigator.clipboard
      ?.writeText(data.list.instance_id)
      .then(() => pushAlert('info', t('licences.copied')))
      .catch(() => undefined);
  }

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const file = e.dataTransfer.files[0];
    if (file && mayAdd && !busy) void upload(file);
  };

  if (loadError) return <FormError message={loadError} />;
  if (!data) return <Loading />;
  const { list, usage } = data;

  return (
    <div
      className="grid max-w-6xl grid-cols-1 items-start gap-3 xl:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]"
      data-testid="licences-page"
    >
      <div className="space-y-3">
        <Panel title={t('licences.in_force')} testId="licence-summary">
          <InForce list={list} onCopy={copyInstance} />
        </Panel>
        {mayAdd && (
          <Panel
            title={t('licences.add_title')}
            action={
              mayCloud && (
                <Button
                  size="sm"
                  variant="ghost"
                  busy={busy === 'cloud'}
                  disabled={!!busy}
                  icon={<Icon name="download" className="size-3.5" />}
                  onClick={() => void fromCloud()}
                  data-testid="licence-cloud"
                >
                  {t('licences.add_cloud')}
                </Button>
              )
            }
          >
            <div
              data-testid="licence-drop"
              data-over={over || undefined}
              onDragEnter={(e) => {
                e.preventDefault();
                setOver(true);
              }}
              onDragOver={(e) => {
                e.preventDefault();
                e.dataTransfer.dropEffect = 'copy';
              }}
              onDragLeave={(e) => {
                if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(false);
              }}
              onDrop={onDrop}
              className={`flex flex-wrap items-center gap-x-4 gap-y-2 rounded-md border-2 border-dashed px-4 py-4 ${
                over ? 'border-blue-500 bg-blue-50' : 'border-slate-300 bg-slate-50'
              }`}
            >
              <Icon name="upload" className="size-6 shrink-0 text-slate-400" />
              <div className="min-w-48 flex-1">
                <div className="text-sm font-medium text-slate-800">{t('licences.drop')}</div>
                <div className="text-xs text-slate-500">{t('licences.drop_hint')}</div>
              </div>
              <input
                ref={input}
                type="file"
                accept=".json,.lic,.licence,.license,application/json,text/plain"
                className="sr-only"
                tabIndex={-1}
                aria-hidden="true"
                data-testid="licence-file"
                onChange={(e) => {
                  const file = e.target.files?.[0];
                  if (file) void upload(file);
                }}
              />
              <Button
                variant="primary"
                busy={busy === 'file'}
                disabled={!!busy}
                icon={<Icon name="upload" />}
                onClick={choose}
                data-testid="licence-choose"
                title={`${t('licences.choose_file')} (N)`}
              >
                {t('licences.choose_file')}
              </Button>
            </div>
            <div className="mt-2 empty:hidden" data-testid="licence-add-error">
              <FormError message={addError} />
            </div>
          </Panel>
        )}
      </div>
      <Panel title={t('licences.usage_title')} testId="licence-usage">
        <UsageBars usage={usage} list={list} />
      </Panel>
      <div className="xl:col-span-2">
        <Panel title={t('licences.list_title')} testId="licence-list">
          {list.items.length === 0 ? (
            <p className="text-sm text-slate-500">{t('licences.empty')}</p>
          ) : (
            <div className="-m-3 overflow-x-auto">
              <table className="w-full text-sm">
                <thead className="text-left text-xs whitespace-nowrap text-slate-500">
                  <tr>
                    <th className="px-3 py-2 font-medium">{t('licences.columns.status')}</th>
                    <th className="px-3 py-2 font-medium">{t('licences.columns.licence')}</th>
                    <th className="px-3 py-2 font-medium">{t('licences.columns.valid_from')}</th>
                    <th className="px-3 py-2 font-medium">{t('licences.columns.valid_to')}</th>
                    <th className="px-3 py-2 text-right font-medium">{t('licences.columns.days_left')}</th>
                    <th className="px-3 py-2 font-medium">{t('licences.columns.features')}</th>
                    <th className="px-3 py-2">
                      <span className="sr-only">{t('licences.columns.actions')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.items.map((l) => (
                    <LicenceRow
                      key={l.id}
                      licence={l}
                      mayDelete={mayDelete}
                      onDelete={(x) => void remove(x)}
                    />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Panel>
      </div>
    </div>
  );
}
