import { useEffect, useState } from 'react';
import { PASSWORD_PLACEHOLDER, type SipSettings } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { pushAlert } from '../../alerts/alerts';
import { commandTitle } from '../../commands/titles';
import { Button } from '../../ui/button';
import { FormError, Loading, TextField } from '../../ui/field';
import { save, Section, useLoad, type Tr } from './settings-parts';

/** An ICE server as the form edits it: its URLs as one line, separated by spaces. */
interface IceRow {
  urls: string;
  username: string;
  credential: string;
}

const NUMBERS = [
  'public_port',
  'ring_timeout_s',
  'route_timeout_s',
  'intercept_ring_s',
  'waiting_hold_s',
] as const;
type NumberKey = (typeof NUMBERS)[number];

interface Form {
  realm: string;
  public_address: string;
  numbers: Record<NumberKey, string>;
  ice: IceRow[];
}

function formOf(s: SipSettings): Form {
  return {
    realm: s.realm,
    public_address: s.public_address,
    numbers: Object.fromEntries(
      NUMBERS.map((k) => [k, s[k] === null ? '' : String(s[k])]),
    ) as Form['numbers'],
    ice: s.ice_servers.map((x) => ({
      urls: x.urls.join(' '),
      username: x.username,
      credential: x.credential,
    })),
  };
}

/**
 * The SIP settings (issue 24 item 2, issue 22 items 1 and 10): the SIP domain (the realm), the public address
 * and port Kamailio advertises behind NAT, the web dialer's ICE servers (a TURN credential shows as the
 * placeholder and is kept when left so), and the calls' timeouts. An emptied field goes back to the
 * installation's value, shown under it. Saving restarts the SIP server when what it runs with changed.
 */
export function SipSettingsTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const [data, error, reload] = useLoad(() => runCommand('settings.sip_get', {}));
  const [form, setForm] = useState<Form | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (data) setForm(formOf(data.data));
  }, [data]);
  if (error) return <FormError message={error} />;
  if (!data || !form) return <Loading />;
  const defaults = data.defaults;
  const hint = (value: string | number | null) =>
    tr('general_settings.sip.default', { value: value === null || value === '' ? '—' : value });
  const setIce = (i: number, row: Partial<IceRow>) =>
    setForm({ ...form, ice: form.ice.map((r, j) => (j === i ? { ...r, ...row } : r)) });
  const submit = async () => {
    const args: Record<string, unknown> = {
      realm: form.realm.trim() || null,
      public_address: form.public_address.trim() || null,
      ice_servers: form.ice
        .filter((r) => r.urls.trim())
        .map((r) => ({
          urls: r.urls.trim().split(/\s+/),
          username: r.username.trim(),
          credential: r.credential,
        })),
    };
    for (const k of NUMBERS) args[k] = form.numbers[k].trim() ? Number(form.numbers[k]) : null;
    setBusy(true);
    const reply = await save('settings.sip_update', args, setFields);
    setBusy(false);
    if (!reply) return;
    pushAlert('success', tr(`general_settings.sip.applied.${reply.applied ?? 'unchanged'}`));
    reload();
  };
  return (
    <div className="flex flex-col gap-5" data-testid="sip-settings-tab">
      <Section title={tr('general_settings.tabs.sip')}>
        <p className="text-sm text-slate-600" data-testid="sip-mode">
          {tr(`general_settings.sip.mode.${data.mode}`)}
        </p>
        <TextField
          name="sip-realm"
          label={tr('general_settings.sip.realm')}
          hint={`${hint(defaults.realm)} ${tr('general_settings.sip.realm_hint')}`}
          value={form.realm}
          onValue={(v) => setForm({ ...form, realm: v })}
          error={fields.realm}
          readOnly={!canChange}
        />
        {data.numbers_other_realm > 0 && (
          <p className="text-sm text-amber-800" data-testid="sip-other-realm">
            {tr('general_settings.sip.other_realm', { count: data.numbers_other_realm })}
          </p>
        )}
        <div className="flex flex-wrap gap-3">
          <TextField
            name="sip-public_address"
            label={tr('general_settings.sip.public_address')}
            hint={hint(defaults.public_address)}
            value={form.public_address}
            onValue={(v) => setForm({ ...form, public_address: v })}
            error={fields.public_address}
            readOnly={!canChange}
            className="w-72"
          />
          <TextField
            name="sip-public_port"
            label={tr('general_settings.sip.public_port')}
            hint={hint(defaults.public_port)}
            value={form.numbers.public_port}
            onValue={(v) =>
              setForm({ ...form, numbers: { ...form.numbers, public_port: v.replace(/\D/g, '') } })
            }
            error={fields.public_port}
            readOnly={!canChange}
            inputMode="numeric"
            className="w-40"
          />
        </div>
        <p className="text-xs text-slate-500">{tr('general_settings.sip.public_hint')}</p>
      </Section>
      <Section title={tr('general_settings.sip.ice_servers')}>
        <p className="text-xs text-slate-500">{tr('general_settings.sip.ice_hint')}</p>
        {form.ice.length === 0 && (
          <p className="text-sm text-slate-500" data-testid="sip-no-ice">
            {tr('general_settings.sip.no_ice')}
          </p>
        )}
        {form.ice.map((row, i) => (
          <div key={i} className="flex flex-wrap items-end gap-2" data-testid={`sip-ice-${i}`}>
            <TextField
              name={`sip-ice-${i}-urls`}
              label={tr('general_settings.sip.ice_urls')}
              value={row.urls}
              onValue={(v) => setIce(i, { urls: v })}
              error={fields[`ice_servers.${i}.urls`] ?? fields[`ice_servers.${i}.urls.0`]}
              readOnly={!canChange}
              className="w-80"
            />
            <TextField
              name={`sip-ice-${i}-username`}
              label={tr('general_settings.sip.ice_username')}
              value={row.username}
              onValue={(v) => setIce(i, { username: v })}
              error={fields[`ice_servers.${i}.username`]}
              readOnly={!canChange}
              className="w-40"
              autoComplete="off"
            />
            <TextField
              name={`sip-ice-${i}-credential`}
              type="password"
              label={tr('general_settings.sip.ice_credential')}
              value={row.credential}
              onValue={(v) => setIce(i, { credential: v })}
              onFocus={() => row.credential === PASSWORD_PLACEHOLDER && setIce(i, { credential: '' })}
              error={fields[`ice_servers.${i}.credential`]}
              readOnly={!canChange}
              className="w-40"
              autoComplete="new-password"
            />
            {canChange && (
              <Button
                size="sm"
                variant="ghost"
                onClick={() => setForm({ ...form, ice: form.ice.filter((_, j) => j !== i) })}
              >
                {tr('general_settings.sip.ice_remove')}
              </Button>
            )}
          </div>
        ))}
        {canChange && (
          <div>
            <Button
              size="sm"
              onClick={() =>
                setForm({ ...form, ice: [...form.ice, { urls: '', username: '', credential: '' }] })
              }
            >
              {tr('general_settings.sip.ice_add')}
            </Button>
          </div>
        )}
      </Section>
      <Section title={tr('general_settings.sip.timeouts')}>
        <div className="flex flex-wrap gap-3">
          {NUMBERS.filter((k) => k !== 'public_port').map((k) => (
            <TextField
              key={k}
              name={`sip-${k}`}
              label={tr(`general_settings.sip.${k}`)}
              hint={hint(defaults[k])}
              value={form.numbers[k]}
              onValue={(v) => setForm({ ...form, numbers: { ...form.numbers, [k]: v.replace(/\D/g, '') } })}
              error={fields[k]}
              readOnly={!canChange}
              inputMode="numeric"
              className="w-56"
            />
          ))}
        </div>
      </Section>
      {canChange && (
        <div>
          <Button variant="primary" busy={busy} onClick={() => void submit()}>
            {commandTitle('settings.sip_update')}
          </Button>
          <p className="mt-1 text-xs text-slate-500">{tr('general_settings.sip.restart_hint')}</p>
        </div>
      )}
    </div>
  );
}
