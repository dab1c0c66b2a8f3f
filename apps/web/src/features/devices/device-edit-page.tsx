import { useEffect, useMemo, useState, type KeyboardEvent, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { DeviceSettings, deviceResource, getCommand, type Device, type DeviceTask } from '@lintel/commands';
import { ApiError, DeviceTiming, RealtimeTopics, type WsServerMessage } from '@lintel/core';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { describeError } from '../../api/errors';
import { DeleteRecordButton } from '../../commands/delete-button';
import { execute } from '../../commands/execute';
import type { FieldOverride } from '../../forms/command-form';
import { FormPage } from '../../forms/form-page';
import { useRecord } from '../../forms/use-record';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { useGoBack } from '../../nav/return-to';
import { Button } from '../../ui/button';
import { Badge } from '../../ui/badge';
import { enumWord } from '../../resources/enum-word';
import { realtime } from '../../session/realtime';
import { FormError, Loading } from '../../ui/field';
import { remoteControlUrl } from '../remote-control/remote-control-page';

const TABS = ['general', 'network', 'backups', 'tasks', 'heartbeat'] as const;
type Tab = (typeof TABS)[number];

/** The sections of `device_settings`: the network tab holds `network`, the general tab the others. */
const SETTINGS_SECTIONS = Object.keys(DeviceSettings.shape);

/** What of the generated `device.update` form each tab shows (the form is one: values survive a tab change). */
const TAB_FIELDS: Record<'general' | 'network' | 'heartbeat', { top: string[]; settings: string[] }> = {
  general: { top: [], settings: SETTINGS_SECTIONS.filter((s) => s !== 'network') },
  network: { top: ['ip_address', 'port', 'device_settings'], settings: ['network'] },
  heartbeat: { top: ['management'], settings: [] },
};
const NOT_GENERAL = ['ip_address', 'port', 'management'];

function overridesOf(tab: Tab, topKeys: readonly string[]): Record<string, FieldOverride> {
  const out: Record<string, FieldOverride> = {};
  if (tab !== 'general' && tab !== 'network' && tab !== 'heartbeat') {
    for (const k of topKeys) out[k] = { hidden: true };
    return out;
  }
  const shown = TAB_FIELDS[tab];
  for (const k of topKeys) {
    const visible = tab === 'general' ? !NOT_GENERAL.includes(k) : shown.top.includes(k);
    if (!visible) out[k] = { hidden: true };
  }
  for (const s of SETTINGS_SECTIONS)
    if (!shown.settings.includes(s)) out[`device_settings.${s}`] = { hidden: true };
  if (tab === 'general') out.name = { autoFocus: true };
  return out;
}

/** A fact of the device's card: its label above its value, so a date and time is never cut (issue 25 item 7). */
function Fact({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="px-3 py-1.5 text-sm">
      <dt className="text-xs text-slate-500">{label}</dt>
      <dd className="break-words text-slate-900 tabular-nums" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/**
 * The device's state as it changes: the record's, then each `DeviceStatusChangedEvent` of this device from
 * the websocket (the same events that keep the devices list live).
 */
function useLiveStatus(record: Device | null): Pick<Device, 'status' | 'status_changed_at'> | null {
  const [live, setLive] = useState<Pick<Device, 'status' | 'status_changed_at'> | null>(null);
  const id = record?.id;
  useEffect(() => {
    setLive(null);
    if (id === undefined) return;
    return realtime.subscribe(RealtimeTopics.devices, (m: WsServerMessage) => {
      const d = m.data as Record<string, unknown>;
      if (d.type === 'DeviceStatusChangedEvent' && d.deviceId === id)
        setLive({ status: d.status as Device['status'], status_changed_at: String(d.at) });
    });
  }, [id]);
  return record ? (live ?? { status: record.status, status_changed_at: record.status_changed_at }) : null;
}

/** Online or offline, as the devices table shows it: a badge of the status field's tone. */
function StatusBadge({ status }: { status: Device['status'] }) {
  return (
    <Badge tone={deviceResource.fields.status?.tones?.[status] ?? 'neutral'} testId="device-status-badge">
      {enumWord('status', status)}
    </Badge>
  );
}

/** The device's own tasks, newest first (the tasks queue tab). */
function DeviceTasksTab({ deviceId }: { deviceId: number }) {
  const { t } = useTranslation();
  const formatDate = useFormatDate();
  const [rows, setRows] = useState<DeviceTask[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    execute('device.tasks', { device_id: deviceId, limit: 50 }, 'ui')
      .then((r) => live && setRows(r.data))
      .catch((e: unknown) => live && setError(describeError(e).message));
    return () => {
      live = false;
    };
  }, [deviceId]);
  if (error) return <FormError message={error} />;
  if (!rows) return <Loading />;
  return (
    <div className="space-y-2" data-testid="device-tasks-tab">
      {rows.length === 0 ? (
        <p className="text-sm text-slate-500">{t('device_edit.tasks_empty')}</p>
      ) : (
        <table className="w-full text-left text-sm">
          <thead className="bg-slate-50 text-slate-600">
            <tr>
              {(['kind', 'state', 'attempts', 'error', 'updated_at'] as const).map((c) => (
                <th key={c} scope="col" className="px-2 py-1.5 font-semibold">
                  {t(`device_tasks.columns.${c}`)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} className="border-t border-slate-100">
                <td className="px-2 py-1">{t(`device_tasks.kinds.${r.kind}`)}</td>
                <td className="px-2 py-1">{t(`device_tasks.states.${r.state}`)}</td>
                <td className="px-2 py-1">{r.attempts}</td>
                <td className="px-2 py-1">
                  {r.error ? describeError(new ApiError(409, r.error, r.error)).message : ''}
                </td>
                <td className="px-2 py-1 whitespace-nowrap">{formatDate(r.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Link to="/devices/tasks" className="text-sm text-blue-700 underline">
        {t('device_edit.tasks_all')}
      </Link>
    </div>
  );
}

/**
 * /devices/:id/edit: the generated `device.update` form split over the tabs of spec part 1 (general, network,
 * backups, tasks queue, heartbeat), and for the existing device the actions "init device"
 * (`device.init_apply`: an init task and an entities task) and "remote control" (a session, then the
 * remote-control tab, which gets only the session's id).
 */
export function DeviceEditPage() {
  const { t } = useTranslation();
  const id = Number(useParams().id);
  const { record, error, formOptions } = useRecord<Device>('device', id);
  const back = useGoBack('/devices');
  const can = useCan();
  const formatDate = useFormatDate();
  const [tab, setTab] = useState<Tab>('general');
  const [busy, setBusy] = useState<'init' | 'remote' | null>(null);
  const state = useLiveStatus(record);
  usePageTitle(record?.name ?? (t as unknown as (k: string) => string)('commands:pages.device.edit_title'));

  const topKeys = useMemo(() => Object.keys(getCommand('device.update').args.shape), []);
  const overrides = useMemo(() => overridesOf(tab, topKeys), [tab, topKeys]);

  if (error) return <FormError message={error} />;
  if (!record) return <Loading />;

  const mayEdit = can(getCommand('device.update').gates).can;
  const mayInit = can(getCommand('device.init_apply').gates).can;
  const mayRemote = can(getCommand('device.remote_session').gates).can;
  const mayTasks = can(getCommand('device.tasks').gates).can;
  const tabs = TABS.filter((x) => x !== 'tasks' || mayTasks);

  async function init() {
    setBusy('init');
    try {
      const { tasks } = await execute('device.init_apply', { id }, 'ui');
      pushAlert('success', t('device_edit.init_done', { id: tasks[0]!.id }));
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(null);
    }
  }

  /** The tab opens at once (a browser lets a click open one), then goes to the session the server made. */
  async function remote() {
    if (!record) return;
    const tabWindow = window.open('', '_blank');
    setBusy('remote');
    try {
      const s = await execute('device.remote_session', { serial_number: record.serial_number }, 'ui');
      if (tabWindow) tabWindow.location.href = remoteControlUrl(s.session);
      else window.open(remoteControlUrl(s.session), '_blank');
    } catch (err) {
      tabWindow?.close();
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(null);
    }
  }

  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const i = tabs.indexOf(tab);
    const next =
      e.key === 'ArrowRight'
        ? tabs[(i + 1) % tabs.length]
        : e.key === 'ArrowLeft'
          ? tabs[(i - 1 + tabs.length) % tabs.length]
          : null;
    if (!next) return;
    e.preventDefault();
    setTab(next);
    document.getElementById(`device-tab-${next}`)?.focus();
  };

  const formTab = tab === 'general' || tab === 'network' || tab === 'heartbeat';

  return (
    <div className="space-y-3">
      <div role="tablist" aria-label={record.name} className="flex gap-1 border-b border-slate-200">
        {tabs.map((x) => (
          <button
            key={x}
            id={`device-tab-${x}`}
            type="button"
            role="tab"
            aria-selected={tab === x}
            tabIndex={tab === x ? 0 : -1}
            data-testid={`device-tab-${x}`}
            onClick={() => setTab(x)}
            onKeyDown={onTabKey}
            className={`-mb-px border-b-2 px-3 py-1.5 text-sm ${tab === x ? 'border-blue-700 font-semibold text-blue-800' : 'border-transparent text-slate-600 hover:text-slate-900'}`}
          >
            {t(`device_edit.tabs.${x}`)}
          </button>
        ))}
      </div>
      {tab === 'backups' && (
        <p className="max-w-3xl text-sm text-slate-600" data-testid="device-backups-tab">
          {t('device_edit.backups_note')}
        </p>
      )}
      {tab === 'tasks' && <DeviceTasksTab deviceId={id} />}
      <div hidden={!formTab} role="tabpanel" aria-labelledby={`device-tab-${tab}`}>
        <FormPage
          key={record.id}
          commandId="device.update"
          options={formOptions}
          overrides={overrides}
          readOnly={!mayEdit}
          onDone={back}
          onCancel={back}
          aside={
            tab === 'general' || tab === 'heartbeat' ? (
              <section className="rounded-lg border border-slate-200 bg-white" data-testid="device-heartbeat">
                <dl className="py-1">
                  <Fact label={t('device_edit.status')} testId="device-status">
                    <StatusBadge status={state?.status ?? record.status} />
                  </Fact>
                  <Fact label={t('device_edit.last_heartbeat')}>
                    {record.last_heartbeat_at ? formatDate(record.last_heartbeat_at) : '—'}
                  </Fact>
                  <Fact label={t('device_edit.status_changed')}>
                    {state?.status_changed_at ? formatDate(state.status_changed_at) : '—'}
                  </Fact>
                  {tab === 'heartbeat' && (
                    <Fact label={t('device_edit.firmware')}>{record.firmware_version ?? '—'}</Fact>
                  )}
                </dl>
                {tab === 'heartbeat' && (
                  <p className="px-3 pb-2 text-xs text-slate-500">
                    {t('device_edit.heartbeat_note', {
                      seconds: DeviceTiming.heartbeatS,
                      missed: DeviceTiming.missedHeartbeats,
                    })}
                  </p>
                )}
              </section>
            ) : undefined
          }
          actions={
            <>
              {mayInit && (
                <Button onClick={() => void init()} busy={busy === 'init'} data-testid="device-init">
                  {t('device_edit.init')}
                </Button>
              )}
              {mayRemote && (
                <Button onClick={() => void remote()} busy={busy === 'remote'} data-testid="device-remote">
                  {t('device_edit.remote')}
                </Button>
              )}
              {can(getCommand('device.delete').gates).can && (
                <DeleteRecordButton family="device" id={id} onDeleted={back} testId="delete-device" />
              )}
            </>
          }
        />
      </div>
    </div>
  );
}
