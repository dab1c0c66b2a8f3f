import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { getCommand, LogLevels, type LogLine, type LogName, type LogSource } from '@lintel/commands';
import { api, runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { confirmAction } from '../../commands/dialogs';
import { execute } from '../../commands/execute';
import { commandTitle } from '../../commands/titles';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';
import { useShortcut } from '../../keys/shortcuts';

type Tr = (key: string, params?: Record<string, unknown>) => string;
type Level = (typeof LogLevels)[number];

const PAGE = 200;

const size = (bytes: number) =>
  bytes >= 1024 ** 2 ? `${(bytes / 1024 ** 2).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;

const levelColour: Record<string, string> = {
  trace: 'text-slate-400',
  debug: 'text-slate-500',
  info: 'text-slate-800',
  warn: 'text-amber-700',
  error: 'text-red-700',
  fatal: 'text-red-800 font-semibold',
};

/** Saves a log as the server names it: read with the session's token, handed to the browser as a file. */
async function saveLog(name: LogName): Promise<void> {
  const res = await api.openStream('GET', `/logs/${name}/download`);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `${name}.log`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * /logs (spec part 1 §2.4 "event logs", part 2 §7 "event logs and system logs (available, get, clear),
 * download"; docs/decisions.md "Event and system logs"): the logs of the instance that answered as tabs
 * (arrow keys move between them), the newest lines last; a level and a text filter (Enter applies), Older
 * lines a page at a time, Download, and Clear behind a confirmation for whoever may change the settings.
 * Keys on the page: `r` reads the log again, `o` its older lines, `/` goes to the text filter.
 */
export function LogsPage() {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  usePageTitle(tr('logs.title'));
  const can = useCan();
  const mayClear = can(getCommand('log.clear').gates).can;
  const formatDate = useFormatDate();
  const [sources, setSources] = useState<LogSource[] | null>(null);
  const [instance, setInstance] = useState('');
  const [name, setName] = useState<LogName>('server');
  const [level, setLevel] = useState<Level | ''>('');
  const [text, setText] = useState('');
  const [contains, setContains] = useState('');
  const [lines, setLines] = useState<LogLine[] | null>(null);
  const [before, setBefore] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [tick, setTick] = useState(0);
  const filterRef = useRef<HTMLInputElement>(null);
  const endRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let live = true;
    runCommand('log.available', {})
      .then((r) => live && (setSources(r.data), setInstance(r.instance)))
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [tick]);

  const args = useCallback(
    (cursor?: string) => ({
      name,
      limit: PAGE,
      before: cursor,
      level: level || undefined,
      contains: contains || undefined,
    }),
    [name, level, contains],
  );

  useEffect(() => {
    let live = true;
    setLines(null);
    runCommand('log.get', args())
      .then((r) => {
        if (!live) return;
        setLines(r.data);
        setBefore(r.before);
        setError(null);
        requestAnimationFrame(() => endRef.current?.scrollIntoView({ block: 'end' }));
      })
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [args, tick]);

  async function older() {
    if (!before) return;
    setBusy(true);
    try {
      const r = await runCommand('log.get', args(before));
      setLines((l) => [...r.data, ...(l ?? [])]);
      setBefore(r.before);
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(false);
    }
  }

  async function clear() {
    const ok = await confirmAction({
      title: commandTitle('log.clear'),
      message: tr('logs.clear_confirm', { name: tr(`logs.names.${name}`) }),
      approveLabel: commandTitle('log.clear'),
      danger: true,
    });
    if (!ok) return;
    try {
      await execute('log.clear', { name }, 'ui');
      pushAlert('success', tr('logs.cleared'));
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setTick((n) => n + 1);
    }
  }

  const names = sources?.map((s) => s.name) ?? [];
  const onTabKey = (e: KeyboardEvent) => {
    const i = names.indexOf(name);
    const next =
      e.key === 'ArrowRight'
        ? names[(i + 1) % names.length]
        : e.key === 'ArrowLeft'
          ? names[(i + names.length - 1) % names.length]
          : null;
    if (!next) return;
    e.preventDefault();
    setName(next);
    document.getElementById(`log-tab-${next}`)?.focus();
  };
  // the page's keys (keys/bindings.ts), not while typing in a field: r reads again, o the older lines, / the filter
  useShortcut('r', () => setTick((n) => n + 1), { labelKey: 'logs.keys.refresh' });
  useShortcut('o', () => void older(), { labelKey: 'logs.keys.older', enabled: Boolean(before) }, [
    before,
    args,
  ]);
  useShortcut('slash', () => filterRef.current?.focus(), { labelKey: 'table.keys.search' });
  const current = sources?.find((s) => s.name === name);

  return (
    <div className="flex flex-col gap-3" data-testid="logs-page">
      <p className="text-sm text-slate-600">{tr('logs.intro', { instance })}</p>
      <FormError message={error} />
      {!sources && !error && <Loading />}
      {sources && (
        <div role="tablist" aria-label={tr('logs.title')} className="flex gap-1 border-b border-slate-200">
          {sources.map((s) => (
            <button
              key={s.name}
              id={`log-tab-${s.name}`}
              type="button"
              role="tab"
              aria-selected={name === s.name}
              aria-controls="log-lines"
              tabIndex={name === s.name ? 0 : -1}
              data-testid={`log-tab-${s.name}`}
              onClick={() => setName(s.name)}
              onKeyDown={onTabKey}
              className={`-mb-px border-b-2 px-3 py-1.5 text-sm ${name === s.name ? 'border-blue-700 font-semibold text-blue-800' : 'border-transparent text-slate-600 hover:text-slate-900'}`}
            >
              {tr(`logs.names.${s.name}`)}
              <span className="ml-1 text-xs font-normal text-slate-500">{tr(`logs.kinds.${s.kind}`)}</span>
            </button>
          ))}
        </div>
      )}
      <div className="flex flex-wrap items-end gap-2">
        <label className="flex flex-col text-xs text-slate-600">
          {tr('logs.level')}
          <select
            className="h-8 rounded border border-slate-300 px-2 text-sm"
            value={level}
            data-testid="log-level"
            onChange={(e) => setLevel(e.target.value as Level | '')}
          >
            <option value="">{tr('logs.any_level')}</option>
            {LogLevels.map((l) => (
              <option key={l} value={l}>
                {tr(`logs.levels.${l}`)}
              </option>
            ))}
          </select>
        </label>
        <form
          className="flex flex-col text-xs text-slate-600"
          onSubmit={(e) => {
            e.preventDefault();
            setContains(text.trim());
          }}
        >
          <label htmlFor="log-contains">{tr('logs.contains')}</label>
          <input
            id="log-contains"
            ref={filterRef}
            className="h-8 w-64 rounded border border-slate-300 px-2 text-sm"
            value={text}
            placeholder={tr('logs.contains_hint')}
            data-testid="log-contains"
            onChange={(e) => setText(e.target.value)}
          />
        </form>
        <Button onClick={() => setTick((n) => n + 1)} icon={<Icon name="refresh" />} aria-keyshortcuts="r">
          {tr('logs.refresh')}
        </Button>
        <Button
          onClick={() => void saveLog(name).catch((err) => pushAlert('error', describeError(err).message))}
          icon={<Icon name="download" />}
          data-testid="log-download"
        >
          {tr('logs.download')}
        </Button>
        {mayClear && (
          <Button variant="danger" onClick={() => void clear()} data-testid="log-clear">
            {commandTitle('log.clear')}
          </Button>
        )}
        {current && (
          <span className="ml-auto text-xs text-slate-500" data-testid="log-size">
            {tr('logs.size', {
              size: size(current.size_bytes),
              files: current.files,
              at: current.modified_at ? formatDate(current.modified_at) : tr('logs.never'),
            })}
          </span>
        )}
      </div>
      <div
        id="log-lines"
        role="log"
        aria-label={tr(`logs.names.${name}`)}
        tabIndex={0}
        className="max-h-[65vh] overflow-auto rounded border border-slate-200 bg-slate-50 p-2 font-mono text-xs"
        data-testid="log-lines"
      >
        {before && (
          <div className="mb-1">
            <Button size="sm" busy={busy} onClick={() => void older()} data-testid="log-older">
              {tr('logs.older')}
            </Button>
          </div>
        )}
        {lines === null && !error && <Loading />}
        {lines?.length === 0 && <p className="text-slate-500">{tr('logs.empty')}</p>}
        {lines?.map((l, i) => (
          <div
            key={`${i}-${l.at ?? ''}`}
            className={`whitespace-pre-wrap break-all ${levelColour[l.level ?? ''] ?? ''}`}
            data-testid="log-line"
          >
            {l.at ? (
              <>
                <span className="text-slate-500">{formatDate(l.at)}</span>{' '}
                <span className="uppercase">{l.level}</span> {l.message}
                {Object.keys(l.fields).length > 0 && (
                  <span className="text-slate-500"> {JSON.stringify(l.fields)}</span>
                )}
              </>
            ) : (
              l.text
            )}
          </div>
        ))}
        <div ref={endRef} />
      </div>
    </div>
  );
}
