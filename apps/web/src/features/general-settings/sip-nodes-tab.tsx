import { useEffect, useState } from 'react';
import { useAtomValue } from 'jotai';
import { NotificationEventType, RealtimeTopics, WsReply, type WsServerMessage } from '@lintel/core';
import type { SipStatus } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { commandTitle } from '../../commands/titles';
import { useFormatDate } from '../../format/use-format-date';
import { realtime } from '../../session/realtime';
import { profileAtom } from '../../session/session';
import { Button } from '../../ui/button';
import { FormError, Loading } from '../../ui/field';
import { run, Section, useLoad, type Tr } from './settings-parts';

type Phase = 'started' | 'completed' | 'error';

/** Seconds as `2 d 3 h`, `3 h 4 min`, `4 min 5 s`. */
function duration(tr: Tr, s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return tr('general_settings.sip_nodes.days_hours', { d, h });
  if (h) return tr('general_settings.sip_nodes.hours_minutes', { h, m });
  return tr('general_settings.sip_nodes.minutes_seconds', { m, s: s % 60 });
}

/**
 * The SIP nodes (spec part 1 §2.4 "SIP nodes"; part 2 §7 "SIP service: status, reinit, restart instance"):
 * each SIP server — today the local Kamailio Lintel runs, or the remote one of KAMAILIO_RPC_URL — with its
 * type, address, ports, state, uptime, the contacts its registrar holds and the dialogs in progress, and
 * restart and re-initialise. The SIP reboot notifications reach this user's own topic: the tab shows each
 * phase as it comes and reads the status again.
 */
export function SipNodesTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const formatDate = useFormatDate();
  const userId = useAtomValue(profileAtom)?.id;
  const [data, error, reload] = useLoad(() => runCommand('sip.status', {}));
  const [phase, setPhase] = useState<Phase | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (userId === undefined) return;
    return realtime.subscribe(RealtimeTopics.user(userId), (m: WsServerMessage) => {
      if (m.data.type === WsReply.resync) return reload();
      if (m.data.type !== NotificationEventType) return;
      const type = (m.data as { notification?: { type?: string } }).notification?.type ?? '';
      const found = /^sip_reboot_(started|completed|error)$/.exec(type);
      if (!found) return;
      setPhase(found[1] as Phase);
      reload();
    });
  }, [userId]);
  if (error) return <FormError message={error} />;
  if (!data) return <Loading />;
  const s: SipStatus = data;
  const act = (id: 'sip.restart' | 'sip.reinit', args: Record<string, unknown>) => {
    setBusy(true);
    void run(id, args, tr('general_settings.sip_nodes.done')).finally(() => {
      setBusy(false);
      reload();
    });
  };
  const unknown = tr('general_settings.broker.unknown');
  return (
    <div className="flex flex-col gap-5" data-testid="sip-nodes-tab">
      <Section title={tr('general_settings.tabs.sip_nodes')}>
        <p
          className={`text-sm font-medium ${s.state === 'up' ? 'text-green-800' : 'text-red-800'}`}
          data-testid="sip-nodes-state"
        >
          {tr(`general_settings.sip_nodes.state.${s.state}`)}
          {s.reason ? ` — ${tr(`sip.reasons.${s.reason}`)}` : ''}
        </p>
        {phase && (
          <p
            className="text-sm text-slate-700"
            role="status"
            data-testid="sip-reboot-phase"
            data-phase={phase}
          >
            {tr(`general_settings.sip_nodes.phase.${phase}`)}
          </p>
        )}
        {s.instances.length === 0 ? (
          <p className="text-sm text-slate-500">{tr('general_settings.sip_nodes.none')}</p>
        ) : (
          <table className="w-full border-collapse text-sm">
            <thead>
              <tr className="border-b border-slate-200 text-left text-xs text-slate-500">
                {['type', 'address', 'ports', 'state', 'uptime', 'contacts', 'dialogs', 'restarts'].map(
                  (c) => (
                    <th key={c} className="py-1.5 pr-3 font-medium">
                      {tr(`general_settings.sip_nodes.columns.${c}`)}
                    </th>
                  ),
                )}
                <th />
              </tr>
            </thead>
            <tbody>
              {s.instances.map((n) => (
                <tr
                  key={`${n.type}-${n.ip_address}`}
                  className="border-b border-slate-100"
                  data-testid="sip-node"
                >
                  <td className="py-1.5 pr-3">
                    {tr(`general_settings.sip_nodes.mode.${s.mode}`)}
                    <div className="text-xs text-slate-500">{n.version ?? ''}</div>
                  </td>
                  <td className="py-1.5 pr-3 font-mono text-xs">
                    {n.ip_address}
                    {n.public_address && (
                      <div className="text-slate-500">
                        {tr('general_settings.sip_nodes.public', { address: n.public_address })}
                      </div>
                    )}
                  </td>
                  <td className="py-1.5 pr-3 text-xs" data-testid="sip-node-ports">
                    {n.sip_port !== null
                      ? tr('general_settings.sip_nodes.ports_text', {
                          sip: n.sip_port,
                          ws: n.ws_port,
                          secure: s.listen?.ws_secure ? 'WSS' : 'WS',
                        })
                      : unknown}
                  </td>
                  <td className="py-1.5 pr-3" data-testid="sip-node-state">
                    {tr(`general_settings.sip_nodes.state.${n.state}`)}
                  </td>
                  <td className="py-1.5 pr-3" title={n.started_at ? formatDate(n.started_at) : undefined}>
                    {n.uptime_s !== null ? duration(tr, n.uptime_s) : unknown}
                  </td>
                  <td className="py-1.5 pr-3" data-testid="sip-node-contacts">
                    {n.contacts ?? unknown}
                  </td>
                  <td className="py-1.5 pr-3" data-testid="sip-node-dialogs">
                    {n.dialogs ?? unknown}
                  </td>
                  <td className="py-1.5 pr-3">{n.restarts}</td>
                  <td className="py-1.5 text-right whitespace-nowrap">
                    {canChange && (
                      <>
                        <Button size="sm" variant="ghost" busy={busy} onClick={() => act('sip.reinit', {})}>
                          {commandTitle('sip.reinit')}
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          busy={busy}
                          onClick={() => act('sip.restart', { type: n.type, ip_address: n.ip_address })}
                        >
                          {commandTitle('sip.restart')}
                        </Button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {s.listen && (
          <p className="text-xs text-slate-500">
            {tr('general_settings.sip_nodes.realm', { realm: s.listen.realm, numbers: s.numbers })}
          </p>
        )}
        {s.instances.some((n) => n.trunks.length > 0) && (
          <p className="text-xs text-slate-700" data-testid="sip-trunk-registrations">
            {tr('general_settings.sip_nodes.trunks', {
              registered: s.instances.flatMap((n) => n.trunks).filter((t) => t.state === 'registered').length,
              registering: s.instances.flatMap((n) => n.trunks).filter((t) => t.state === 'registering')
                .length,
              failed: s.instances.flatMap((n) => n.trunks).filter((t) => t.state === 'failed').length,
            })}
          </p>
        )}
        <div>
          <Button size="sm" variant="ghost" onClick={reload}>
            {tr('general_settings.sip_nodes.refresh')}
          </Button>
        </div>
      </Section>
    </div>
  );
}
