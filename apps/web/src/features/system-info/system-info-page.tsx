import { useEffect, useState, type ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { getCommand, type SystemInfo, type Worker } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { confirmAction } from '../../commands/dialogs';
import { dataVersionAtom, execute } from '../../commands/execute';
import { commandTitle } from '../../commands/titles';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { Icon } from '../../ui/icon';

type Tr = (key: string, params?: Record<string, unknown>) => string;

const size = (bytes: number) =>
  bytes >= 1024 ** 3
    ? `${(bytes / 1024 ** 3).toFixed(2)} GiB`
    : bytes >= 1024 ** 2
      ? `${(bytes / 1024 ** 2).toFixed(1)} MiB`
      : `${(bytes / 1024).toFixed(1)} KiB`;

const duration = (s: number) => {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${d ? `${d}d ` : ''}${h}h ${m}m`;
};

function Row({ label, children, id }: { label: string; children: ReactNode; id: string }) {
  return (
    <div className="contents">
      <dt className="py-1 pr-4 text-slate-500">{label}</dt>
      <dd className="py-1" data-testid={`system-${id}`}>
        {children}
      </dd>
    </div>
  );
}

/**
 * /system-info (spec part 1 §2.1; issue 24 items 2 and 3): versions, uptime, the database and its size, the
 * broker, the SIP service and the jobs as the server reports them, and the workers — this instance's modules
 * and the job kinds — with Start, Stop and Restart for whoever may change the project's settings.
 */
export function SystemInfoPage() {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  usePageTitle(tr('system_info.title'));
  const version = useAtomValue(dataVersionAtom);
  const can = useCan();
  const mayControl = can(getCommand('worker.stop').gates).can;
  const formatDate = useFormatDate();
  const [info, setInfo] = useState<SystemInfo | null>(null);
  const [workers, setWorkers] = useState<Worker[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    Promise.all([runCommand('system.info', {}), runCommand('worker.list', {})])
      .then(([i, w]) => live && (setInfo(i), setWorkers(w.data), setError(null)))
      .catch((err: unknown) => live && setError(describeError(err).message));
    return () => {
      live = false;
    };
  }, [version, tick]);

  async function act(w: Worker, action: 'start' | 'stop' | 'restart') {
    const id = `worker.${action}` as const;
    if (action !== 'start') {
      const ok = await confirmAction({
        title: commandTitle(id),
        message: tr(`system_info.${action}_confirm`, { name: w.name }),
        approveLabel: commandTitle(id),
        danger: true,
      });
      if (!ok) return;
    }
    setBusy(`${action}-${w.name}`);
    try {
      await execute(id, { name: w.name }, 'ui');
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(null);
      setTick((n) => n + 1);
    }
  }

  return (
    <div className="flex flex-col gap-4" data-testid="system-info-page">
      <div>
        <Button onClick={() => setTick((n) => n + 1)} icon={<Icon name="refresh" />}>
          {tr('system_info.refresh')}
        </Button>
      </div>
      <FormError message={error} />
      {!info && !error && <Loading />}
      {info && (
        <dl className="grid grid-cols-[max-content_1fr] text-sm">
          <Row id="version" label={tr('system_info.version')}>
            {info.versions.server} (API {info.versions.api}, Node {info.versions.node})
          </Row>
          <Row id="uptime" label={tr('system_info.uptime')}>
            {duration(info.uptime_s)} · {tr('system_info.since', { at: formatDate(info.started_at) })}
          </Row>
          <Row id="instance" label={tr('system_info.instance')}>
            {info.instance}
          </Row>
          <Row id="database" label={tr('system_info.database')}>
            {tr(`system_info.database_kinds.${info.database.kind}`)} · {size(info.database.size_bytes)} ·{' '}
            {tr('system_info.pool', info.database.pool)}
            <div className="text-xs text-slate-500">{info.versions.database}</div>
          </Row>
          <Row id="broker" label={tr('system_info.broker')}>
            {tr(`system_info.broker_kinds.${info.broker.kind}`)} · {info.broker.url} ·{' '}
            {tr(info.broker.connected ? 'system_info.connected' : 'system_info.disconnected')} ·{' '}
            {tr('system_info.messages', {
              handled: info.broker.messages_handled,
              refused: info.broker.messages_refused,
            })}
          </Row>
          <Row id="sip" label={tr('system_info.sip')}>
            {tr(`system_info.sip_states.${info.sip.state}`)}
            {info.sip.reason ? ` · ${tr(`sip.reasons.${info.sip.reason}`)}` : ''}
            {info.sip.instances.map((i) => ` · ${i.ip_address} ${i.version ?? ''}`).join('')}
          </Row>
          <Row id="jobs" label={tr('system_info.jobs')}>
            {Object.entries(info.jobs.by_state)
              .map(([state, n]) => `${tr(`system_info.job_states.${state}`)}: ${n}`)
              .join(' · ') || '—'}
          </Row>
          <Row id="websocket" label={tr('system_info.websocket_clients')}>
            {info.websocket_clients}
          </Row>
        </dl>
      )}
      {workers && (
        <section className="flex flex-col gap-2">
          <h2 className="text-sm font-semibold">{commandTitle('worker.list')}</h2>
          <table className="w-full border-collapse text-sm" data-testid="workers-table">
            <thead>
              <tr className="border-b border-slate-200 text-left text-xs text-slate-500">
                <th className="py-1.5 pr-3 font-medium">{tr('system_info.worker')}</th>
                <th className="py-1.5 pr-3 font-medium">{tr('system_info.worker_type')}</th>
                <th className="py-1.5 pr-3 font-medium">{tr('system_info.worker_state')}</th>
                <th className="py-1.5 pr-3 font-medium">{tr('system_info.jobs')}</th>
                <th>
                  <span className="sr-only">{tr('system_info.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => (
                <tr key={w.name} className="border-b border-slate-100" data-testid="worker-row">
                  <td className="py-1.5 pr-3 font-mono text-xs">{w.name}</td>
                  <td className="py-1.5 pr-3">{tr(`system_info.worker_types.${w.type}`)}</td>
                  <td className="py-1.5 pr-3" title={w.last_error ?? undefined}>
                    {tr(`system_info.worker_states.${w.state}`)}
                  </td>
                  <td className="py-1.5 pr-3 text-xs text-slate-600">
                    {Object.entries(w.jobs)
                      .map(([state, n]) => `${tr(`system_info.job_states.${state}`)}: ${n}`)
                      .join(' · ')}
                  </td>
                  <td className="py-1.5 text-right whitespace-nowrap">
                    {mayControl && w.controllable && (
                      <>
                        {w.state === 'stopped' ? (
                          <Button
                            size="sm"
                            variant="ghost"
                            busy={busy === `start-${w.name}`}
                            onClick={() => void act(w, 'start')}
                          >
                            {tr('system_info.start')}
                          </Button>
                        ) : (
                          <Button
                            size="sm"
                            variant="ghost"
                            busy={busy === `stop-${w.name}`}
                            onClick={() => void act(w, 'stop')}
                          >
                            {tr('system_info.stop')}
                          </Button>
                        )}
                        {w.type === 'module' && w.state === 'running' && (
                          <Button
                            size="sm"
                            variant="ghost"
                            busy={busy === `restart-${w.name}`}
                            onClick={() => void act(w, 'restart')}
                          >
                            {tr('system_info.restart')}
                          </Button>
                        )}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </div>
  );
}
