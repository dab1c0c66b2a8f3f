import { useEffect, useId, useRef, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { ExportRefs, exportNamers, exportRow, getCommand, type GroupNames } from '@lintel/commands';
import type { Filter, ListQuery } from '@lintel/core';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { api, runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { useShortcut } from '../../keys/shortcuts';
import { formatCount } from '../../resources/format';
import { filtersToWhere } from '../../resources/table-query';
import { profileAtom } from '../../session/session';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { FormError } from '../../ui/field';
import { Icon } from '../../ui/icon';
import {
  downloadBlob,
  exportFileName,
  openExportFile,
  WebExportFormats,
  type WebExportFormat,
} from './export-file';

interface Progress {
  written: number;
  /** the first rows have arrived */
  started: boolean;
}

/** One choice of a fieldset of radio buttons, drawn as the console's segmented choices. */
function Choice<V extends string>({
  name,
  value,
  current,
  onChange,
  label,
  disabled,
}: {
  name: string;
  value: V;
  current: V;
  onChange: (v: V) => void;
  label: string;
  disabled: boolean;
}) {
  return (
    <label
      className={`flex cursor-pointer items-center gap-2 rounded-md border px-2.5 py-1.5 text-sm has-[:disabled]:cursor-default has-[:disabled]:opacity-60 has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-blue-600 ${
        current === value
          ? 'border-blue-600 bg-blue-50 text-blue-900'
          : 'border-slate-300 text-slate-700 hover:bg-slate-50'
      }`}
    >
      <input
        type="radio"
        name={name}
        value={value}
        checked={current === value}
        onChange={() => onChange(value)}
        disabled={disabled}
        data-testid={`export-${name}-${value}`}
        className="size-3.5 accent-blue-700 outline-none"
      />
      {label}
    </label>
  );
}

/**
 * Export of the users the table shows (its search and filters; the file is in id order, like the CLI's):
 * CSV or JSON, groups and roles by id or by name, read from one streamed `user.export` reply as it arrives
 * (no count: the rows written so far are shown), stoppable; then the browser downloads
 * `users-<date>.<format>`. The file is what `lintel users export` writes, so `lintel users import` reads it
 * back.
 */
export function ExportUsersDialog({ query, onClose }: { query: ListQuery; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.resolvedLanguage ?? i18n.language;
  const profile = useAtomValue(profileAtom);
  const can = useCan();
  const [format, setFormat] = useState<WebExportFormat>('csv');
  const [refs, setRefs] = useState<ExportRefs>('id');
  const [progress, setProgress] = useState<Progress | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const hintId = useId();
  const running = progress !== null;

  const filters = (query.filters ?? []) as Filter[];
  const match = query.match ?? 'all';
  const search = query.search?.trim() ?? '';
  const where = filtersToWhere(filters, match);

  // closing the dialog (Esc, ×, Cancel, leaving the page) stops an export under way
  useEffect(() => () => controller.current?.abort(), []);

  async function run() {
    if (running) return;
    const abort = new AbortController();
    controller.current = abort;
    const { signal } = abort;
    setFailure(null);
    setProgress({ written: 0, started: false });
    // the radio buttons are disabled now: keep the focus in the dialog, on what stops the export
    formRef.current?.querySelector<HTMLElement>('[data-export-cancel]')?.focus();
    try {
      let groups: GroupNames | null = null;
      if (refs === 'name' && can(getCommand('group.full').gates).can) {
        // every group's name and address, to tell which names are unique; without them, names as they are
        groups = await runCommand('group.full', {}, { signal })
          .then((r) => r.data)
          .catch(() => null);
      }
      const namers = exportNamers(refs, groups);
      const file = await openExportFile(format);
      let written = 0;
      const rows = getCommand('user.export').rows(
        { api },
        { filters, match, ...(search ? { search } : {}) },
        { signal },
      );
      for await (const batch of rows) {
        file.add(batch.map((u) => exportRow(u, namers)));
        written += batch.length;
        setProgress({ written, started: true });
      }
      signal.throwIfAborted();
      const name = exportFileName(format, new Date(), profile?.profile.time_zone ?? null);
      downloadBlob(file.finish(), name);
      pushAlert('success', t('users.export.done', { rows: formatCount(written, lang), file: name }));
      onClose();
    } catch (err) {
      if (signal.aborted) return;
      setFailure(describeError(err).message);
      setProgress(null);
    } finally {
      if (controller.current === abort) controller.current = null;
    }
  }

  // Ctrl/Cmd+Enter approves, as in every dialog; only for keys pressed inside this one
  useShortcut(
    'mod+enter',
    (e) => {
      if (formRef.current?.contains(e.target as Node)) void run();
    },
    { labelKey: 'keys.approve', inInputs: true, inDialogs: true, enabled: !running },
    [run],
  );

  return (
    <Dialog
      title={t('users.export.title')}
      onClose={onClose}
      testId="export-dialog"
      describedBy={hintId}
      wrap={(inner) => (
        <form
          ref={formRef}
          noValidate
          className="flex min-h-0 flex-1 flex-col"
          onSubmit={(e) => {
            e.preventDefault();
            void run();
          }}
        >
          {inner}
        </form>
      )}
      footer={
        <>
          <span className="mr-auto hidden text-[11px] text-slate-500 sm:inline">
            {!running && t('forms.approve_hint')}
          </span>
          <Button onClick={onClose} data-export-cancel data-testid="export-cancel">
            {running ? t('users.export.stop') : t('forms.cancel')}
          </Button>
          <Button
            type="submit"
            variant="primary"
            busy={running}
            icon={<Icon name="download" />}
            data-testid="export-start"
          >
            {t('users.export.start')}
          </Button>
        </>
      }
    >
      <div className="space-y-3">
        <div id={hintId} className="text-sm text-slate-700" data-testid="export-scope">
          <p>{where || search ? t('users.export.scope_filtered') : t('users.export.scope_all')}</p>
          {(where || search) && (
            <dl className="mt-1 grid grid-cols-[auto_minmax(0,1fr)] gap-x-2 text-xs">
              {search && (
                <>
                  <dt className="text-slate-500">{t('users.export.search')}</dt>
                  <dd className="truncate font-mono text-slate-800">{search}</dd>
                </>
              )}
              {where && (
                <>
                  <dt className="text-slate-500">{t('users.export.filters')}</dt>
                  <dd className="truncate font-mono text-slate-800" title={where}>
                    {where}
                  </dd>
                </>
              )}
            </dl>
          )}
        </div>
        <FormError message={failure} />
        <fieldset disabled={running}>
          <legend className="mb-1 text-xs font-medium text-slate-700">{t('users.export.format')}</legend>
          <div className="grid grid-cols-2 gap-2">
            {WebExportFormats.map((f) => (
              <Choice
                key={f}
                name="format"
                value={f}
                current={format}
                onChange={setFormat}
                label={t(`users.export.formats.${f}`)}
                disabled={running}
              />
            ))}
          </div>
          <p className="mt-1 text-xs text-slate-500">{t('users.export.format_hint')}</p>
        </fieldset>
        <fieldset disabled={running}>
          <legend className="mb-1 text-xs font-medium text-slate-700">{t('users.export.refs')}</legend>
          <div className="grid grid-cols-2 gap-2">
            {ExportRefs.map((r) => (
              <Choice
                key={r}
                name="refs"
                value={r}
                current={refs}
                onChange={setRefs}
                label={t(`users.export.refs_by.${r}`)}
                disabled={running}
              />
            ))}
          </div>
          <p className="mt-1 text-xs text-slate-500">{t(`users.export.refs_hint.${refs}`)}</p>
        </fieldset>
        {progress && (
          <div className="space-y-1" data-testid="export-progress">
            {/* without a value it shows as under way: the export counts nothing, so no share is known */}
            <progress className="h-2 w-full accent-blue-700" aria-label={t('users.export.progress_label')} />
            <p role="status" className="text-xs text-slate-600 tabular-nums">
              {progress.started
                ? t('users.export.progress', { written: formatCount(progress.written, lang) })
                : t('users.export.starting')}
            </p>
          </div>
        )}
      </div>
    </Dialog>
  );
}
