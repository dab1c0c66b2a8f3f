import { useEffect, useState } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, type Backup } from '@lintel/commands';
import { api, runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { confirmAction } from '../../commands/dialogs';
import { dataVersionAtom, execute } from '../../commands/execute';
import { commandTitle } from '../../commands/titles';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { Button, FileButton } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';

type Tr = (key: string, params?: Record<string, unknown>) => string;

/** Saves a backup's zip: read with the session's token, handed to the browser as a file. */
async function saveZip(b: Backup): Promise<void> {
  const res = await api.openStream('GET', `/backups/${b.id}/download`, { timeoutMs: 3_600_000 });
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download =
    /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `backup-${b.id}.zip`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * /backups (spec part 1 §2.1, §4): the project's backups, newest first, with their state; Make (a name, every
 * entity set), Download, Apply (behind a confirmation) and Delete per row, Apply from a file. While one is
 * being made the list is read again every 2 s.
 */
export function BackupsPage() {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  usePageTitle(tr('backups.title'));
  const version = useAtomValue(dataVersionAtom);
  const can = useCan();
  const may = (id: Parameters<typeof getCommand>[0]) => can(getCommand(id).gates).can;
  const formatDate = useFormatDate();
  const [list, setList] = useState<Backup[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    runCommand('backup.list', {})
      .then((r) => live && (setList(r.data), setError(null)))
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [version, tick]);
  const making = list?.some((b) => b.state === 'making') ?? false;
  useEffect(() => {
    if (!making) return;
    const timer = setTimeout(() => setTick((n) => n + 1), 2000);
    return () => clearTimeout(timer);
  }, [making, tick]);

  async function act(key: string, work: () => Promise<void>) {
    setBusy(key);
    try {
      await work();
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(null);
      setTick((n) => n + 1);
    }
  }
  const make = () =>
    act('make', async () => {
      const label = name.trim() || `backup ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`;
      await execute('backup.make', { name: label }, 'ui');
      setName('');
      pushAlert('info', tr('backups.started', { name: label }));
    });
  const apply = async (b: Backup) => {
    const ok = await confirmAction({
      title: commandTitle('backup.apply'),
      message: tr('backups.apply_confirm', { name: b.name }),
      approveLabel: tr('backups.apply'),
      danger: true,
    });
    if (ok)
      await act(`apply-${b.id}`, async () => {
        const r = await execute('backup.apply', { id: b.id }, 'ui');
        pushAlert('success', tr('backups.applied', { rows: r.rows }));
      });
  };
  const fromFile = (file: File) =>
    act('file', async () => {
      const ok = await confirmAction({
        title: commandTitle('backup.apply_file'),
        message: tr('backups.apply_confirm', { name: file.name }),
        approveLabel: tr('backups.apply'),
        danger: true,
      });
      if (!ok) return;
      const r = await execute('backup.apply_file', { file }, 'ui');
      pushAlert('success', tr('backups.applied', { rows: r.rows }));
    });
  const remove = async (b: Backup) => {
    const ok = await confirmAction({
      title: commandTitle('backup.delete'),
      message: tr('backups.delete_confirm', { name: b.name }),
      approveLabel: t('delete.approve'),
      danger: true,
    });
    if (ok)
      await act(`delete-${b.id}`, () => execute('backup.delete', { id: b.id }, 'ui').then(() => undefined));
  };

  return (
    <div className="flex flex-col gap-3" data-testid="backups-page">
      <div className="flex flex-wrap items-center gap-2">
        {may('backup.make') && (
          <>
            <input
              className="h-8 w-64 rounded border border-slate-300 px-2 text-sm"
              placeholder={tr('backups.name_placeholder')}
              aria-label={tr('backups.name')}
              value={name}
              maxLength={200}
              onChange={(e) => setName(e.target.value)}
            />
            <Button
              variant="primary"
              busy={busy === 'make'}
              onClick={() => void make()}
              icon={<Icon name="plus" />}
            >
              {commandTitle('backup.make')}
            </Button>
          </>
        )}
        {may('backup.apply_file') && (
          <FileButton
            accept=".zip,application/zip"
            busy={busy === 'file'}
            icon={<Icon name="upload" />}
            onFile={(f) => void fromFile(f)}
          >
            {commandTitle('backup.apply_file')}
          </FileButton>
        )}
      </div>
      <FormError message={error} />
      {!list && !error && <Loading />}
      {list && !list.length && <p className="text-sm text-slate-500">{tr('backups.none')}</p>}
      {list && list.length > 0 && (
        <table className="w-full border-collapse text-sm" data-testid="backups-table">
          <thead>
            <tr className="border-b border-slate-200 text-left text-xs text-slate-500">
              <th className="py-1.5 pr-3 font-medium">{tr('backups.name')}</th>
              <th className="py-1.5 pr-3 font-medium">{tr('backups.state')}</th>
              <th className="py-1.5 pr-3 font-medium">{tr('backups.entities')}</th>
              <th className="py-1.5 pr-3 text-right font-medium">{tr('backups.rows')}</th>
              <th className="py-1.5 pr-3 text-right font-medium">{tr('backups.size')}</th>
              <th className="py-1.5 pr-3 font-medium">{tr('backups.created_at')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((b) => (
              <tr key={b.id} className="border-b border-slate-100" data-testid="backup-row">
                <td className="py-1.5 pr-3">
                  {b.name}
                  {b.scheduled && (
                    <span className="ml-2 text-xs text-slate-500">{tr('backups.scheduled')}</span>
                  )}
                </td>
                <td className="py-1.5 pr-3" title={b.error ?? undefined}>
                  {tr(`backups.states.${b.state}`)}
                </td>
                <td className="py-1.5 pr-3 text-xs text-slate-600">
                  {b.entities.map((e) => tr(`backups.sets.${e}`)).join(', ')}
                </td>
                <td className="py-1.5 pr-3 text-right tabular-nums">{b.rows.toLocaleString()}</td>
                <td className="py-1.5 pr-3 text-right tabular-nums">{(b.size / 1024).toFixed(1)} KiB</td>
                <td className="py-1.5 pr-3">{formatDate(b.created_at)}</td>
                <td className="py-1.5 text-right whitespace-nowrap">
                  {b.state === 'ready' && may('backup.download') && (
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => void act(`dl-${b.id}`, () => saveZip(b))}
                    >
                      {tr('backups.download')}
                    </Button>
                  )}
                  {b.state === 'ready' && may('backup.apply') && (
                    <Button
                      size="sm"
                      variant="ghost"
                      busy={busy === `apply-${b.id}`}
                      onClick={() => void apply(b)}
                    >
                      {tr('backups.apply')}
                    </Button>
                  )}
                  {may('backup.delete') && (
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => void remove(b)}
                      icon={<Icon name="trash" />}
                    >
                      {t('delete.approve')}
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
