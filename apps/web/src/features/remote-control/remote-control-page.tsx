import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { RemoteDevice, RemoteState } from '@lintel/commands';
import { describeError } from '../../api/errors';
import { execute } from '../../commands/execute';
import { useFormatDate } from '../../format/use-format-date';
import { Brand } from '../../layout/brand';
import { LanguageSwitcher } from '../../layout/language-switcher';
import { usePageTitle } from '../../layout/page-title';
import { useShortcut } from '../../keys/shortcuts';
import { Button } from '../../ui/button';

/** How often the tab keeps its session alive (the session lives 60 s). */
const KEEPALIVE_MS = 20_000;

/** The session id the opener put in the address's fragment (`#session=…`), which is never sent to a server. */
export const remoteControlUrl = (session: string) =>
  `/devices/remote-control#session=${encodeURIComponent(session)}`;

const sessionOfHash = (hash: string) => new URLSearchParams(hash.replace(/^#/, '')).get('session') ?? '';

type Action = 'lock1' | 'lock2' | 'reboot' | 'refresh';

/** One action: a button that names its key, and the key. */
function ActionButton({
  keyName,
  label,
  onClick,
  busy,
  disabled,
  testId,
  variant = 'secondary',
}: {
  keyName: string;
  label: string;
  onClick: () => void;
  busy: boolean;
  disabled: boolean;
  testId: string;
  variant?: 'primary' | 'secondary' | 'danger';
}) {
  return (
    <Button
      variant={variant}
      onClick={onClick}
      busy={busy}
      disabled={disabled}
      data-testid={testId}
      aria-keyshortcuts={keyName}
      className="h-14 justify-start px-4 text-base"
    >
      <kbd className="rounded border border-current/30 px-1.5 font-mono text-sm">{keyName}</kbd>
      {label}
    </Button>
  );
}

function Fact({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[9rem_1fr] gap-2 py-1 text-sm">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 truncate" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/**
 * /devices/remote-control, outside the main layout (spec part 1 §2.1): opened in a new tab from the device's
 * edit page with a remote-control session id, it keeps the session alive, shows the device's state and its
 * actions — open lock 1 and 2, reboot, refresh — each a button and a key. A refusal (the device offline or not
 * on mqtt, the session ended) is the catalogue's message.
 */
export function RemoteControlPage() {
  const { t } = useTranslation();
  const formatDate = useFormatDate();
  const session = useRef(sessionOfHash(window.location.hash)).current;
  const [device, setDevice] = useState<RemoteDevice | null>(null);
  const [state, setState] = useState<RemoteState | null>(null);
  /** the session cannot go on: the catalogue message */
  const [ended, setEnded] = useState<string | null>(session ? null : t('remote.no_session'));
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState<Action | null>(null);
  usePageTitle(device ? t('remote.title_of', { name: device.name }) : t('remote.title'));

  const keepAlive = useCallback(async () => {
    try {
      const s = await execute('device.remote_session_keepalive', { session }, 'ui');
      setDevice(s.device);
      return s.device;
    } catch (err) {
      setEnded(describeError(err).message);
      return null;
    }
  }, [session]);

  const refresh = useCallback(async (id: number) => {
    setBusy('refresh');
    try {
      setState(await execute('device.remote_state', { id }, 'ui'));
    } catch (err) {
      setMessage({ kind: 'error', text: describeError(err).message });
    } finally {
      setBusy(null);
    }
  }, []);

  useEffect(() => {
    if (!session) return;
    let stop = false;
    void keepAlive().then((d) => {
      if (d && !stop) void refresh(d.id);
    });
    // once the session cannot go on, asking again is of no use
    const timer = setInterval(() => void keepAlive().then((d) => d || clearInterval(timer)), KEEPALIVE_MS);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [session, keepAlive, refresh]);

  const live = !!device && !ended;

  async function act(action: Action) {
    if (!device || !live || busy) return;
    if (action === 'refresh') return refresh(device.id);
    if (action === 'reboot' && !window.confirm(t('remote.reboot_confirm', { name: device.name }))) return;
    setBusy(action);
    setMessage(null);
    try {
      if (action === 'reboot') {
        await execute('device.remote_reboot', { id: device.id }, 'ui');
        setMessage({ kind: 'ok', text: t('remote.rebooting') });
      } else {
        const lock = action === 'lock1' ? 1 : 2;
        await execute('device.remote_open_lock', { id: device.id, lock }, 'ui');
        setMessage({ kind: 'ok', text: t('remote.lock_opened', { lock }) });
        setBusy(null);
        await refresh(device.id);
      }
    } catch (err) {
      setMessage({ kind: 'error', text: describeError(err).message });
    } finally {
      setBusy(null);
    }
  }

  useShortcut('1', () => void act('lock1'), { labelKey: 'remote.keys.lock1', enabled: live }, [act]);
  useShortcut('2', () => void act('lock2'), { labelKey: 'remote.keys.lock2', enabled: live }, [act]);
  useShortcut('r', () => void act('reboot'), { labelKey: 'remote.keys.reboot', enabled: live }, [act]);
  useShortcut('f', () => void act('refresh'), { labelKey: 'remote.keys.refresh', enabled: live }, [act]);

  const lockText = (lock: number) => {
    const l = state?.locks.find((x) => x.lock === lock);
    return l ? (l.open ? t('remote.open') : t('remote.closed')) : t('remote.unknown');
  };

  return (
    <div className="flex min-h-dvh flex-col bg-slate-100 text-slate-900">
      <header className="flex h-12 items-center justify-between border-b border-slate-200 bg-white px-4">
        <Brand />
        <LanguageSwitcher />
      </header>
      <main id="main" className="mx-auto w-full max-w-3xl flex-1 space-y-4 px-4 py-6">
        <h1 className="text-lg font-semibold" data-testid="remote-title">
          {device ? t('remote.title_of', { name: device.name }) : t('remote.title')}
        </h1>
        {ended && (
          <p
            role="alert"
            className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800"
            data-testid="remote-ended"
          >
            {ended}
          </p>
        )}
        {device && (
          <section
            className="rounded-lg border border-slate-200 bg-white px-4 py-3"
            aria-label={t('remote.state')}
          >
            <dl>
              <Fact label={t('remote.serial')}>{device.serial_number}</Fact>
              <Fact label={t('remote.status')} testId="remote-status">
                {t(device.status === 'online' ? 'remote.online' : 'remote.offline')}
              </Fact>
              <Fact label={t('remote.last_heartbeat')}>
                {device.last_heartbeat_at ? formatDate(device.last_heartbeat_at) : '—'}
              </Fact>
              <Fact label={t('remote.firmware')}>{String(state?.info.firmware_version ?? '—')}</Fact>
              <Fact label={t('remote.lock', { lock: 1 })} testId="remote-lock-1">
                {lockText(1)}
              </Fact>
              <Fact label={t('remote.lock', { lock: 2 })} testId="remote-lock-2">
                {lockText(2)}
              </Fact>
              <Fact label={t('remote.read_at')}>{state ? formatDate(state.read_at) : '—'}</Fact>
            </dl>
          </section>
        )}
        {message && (
          <p
            role={message.kind === 'error' ? 'alert' : 'status'}
            data-testid="remote-message"
            className={`rounded-md border px-3 py-2 text-sm ${message.kind === 'error' ? 'border-red-300 bg-red-50 text-red-800' : 'border-green-300 bg-green-50 text-green-800'}`}
          >
            {message.text}
          </p>
        )}
        <section className="grid grid-cols-1 gap-2 sm:grid-cols-2" aria-label={t('remote.actions')}>
          <ActionButton
            keyName="1"
            label={t('remote.open_lock', { lock: 1 })}
            onClick={() => void act('lock1')}
            busy={busy === 'lock1'}
            disabled={!live}
            testId="remote-lock1"
            variant="primary"
          />
          <ActionButton
            keyName="2"
            label={t('remote.open_lock', { lock: 2 })}
            onClick={() => void act('lock2')}
            busy={busy === 'lock2'}
            disabled={!live}
            testId="remote-lock2"
            variant="primary"
          />
          <ActionButton
            keyName="f"
            label={t('remote.refresh')}
            onClick={() => void act('refresh')}
            busy={busy === 'refresh'}
            disabled={!live}
            testId="remote-refresh"
          />
          <ActionButton
            keyName="r"
            label={t('remote.reboot')}
            onClick={() => void act('reboot')}
            busy={busy === 'reboot'}
            disabled={!live}
            testId="remote-reboot"
            variant="danger"
          />
        </section>
        <p className="text-xs text-slate-500">{t('remote.keys_hint')}</p>
      </main>
    </div>
  );
}
