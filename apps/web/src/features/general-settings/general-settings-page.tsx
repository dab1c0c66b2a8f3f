import { useEffect, useState, type KeyboardEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import {
  getCommand,
  PASSWORD_PLACEHOLDER,
  type CommandId,
  type BrokerStatus,
  type IpBan,
  type IpBlockingStatus,
  type IpWhitelistEntry,
  type MailServerSettings,
  type MailTemplate,
  type MailType,
  type WalletSettings,
} from '@lintel/commands';
import { runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { commandTitle } from '../../commands/titles';
import { useFormatDate } from '../../format/use-format-date';
import { usePageTitle } from '../../layout/page-title';
import { Button, FileButton } from '../../ui/button';
import { FormError, inputClass, LabelledField, Loading, TextField } from '../../ui/field';
import { WhiteLabelTab } from './whitelabel-tab';

import { run, Section, useLoad, type Tr } from './settings-parts';
import { SipSettingsTab } from './sip-settings-tab';
import { SipNodesTab } from './sip-nodes-tab';
import { PushSettingsTab } from './push-settings-tab';

const Tabs = [
  'general',
  'mail',
  'mail_templates',
  'ip_blocking',
  'sip',
  'sip_nodes',
  'push',
  'broker',
  'wallet',
  'whitelabel',
  'journals',
] as const;
type Tab = (typeof Tabs)[number];

function GeneralTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const [data, error] = useLoad(() => runCommand('settings.general_get', {}));
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  useEffect(() => {
    if (!data) return;
    setName(data.data.name);
    setDescription(data.data.description);
  }, [data]);
  if (error) return <FormError message={error} />;
  if (!data) return <Loading />;
  return (
    <Section title={tr('general_settings.tabs.general')}>
      <TextField
        name="name"
        label={tr('general_settings.name')}
        value={name}
        onValue={setName}
        readOnly={!canChange}
      />
      <TextField
        name="description"
        label={tr('general_settings.description')}
        value={description}
        onValue={setDescription}
        readOnly={!canChange}
      />
      <p className="text-xs text-slate-500">{tr('general_settings.uid', { uid: data.data.uid })}</p>
      {canChange && (
        <div>
          <Button
            variant="primary"
            onClick={() =>
              void run('settings.general_update', { name, description }, tr('general_settings.saved'))
            }
          >
            {commandTitle('settings.general_update')}
          </Button>
        </div>
      )}
    </Section>
  );
}

function MailTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const [data, error, reload] = useLoad(() => runCommand('settings.mail_get', {}));
  const [form, setForm] = useState<MailServerSettings | null>(null);
  const [to, setTo] = useState('');
  useEffect(() => {
    if (data) setForm(data.data);
  }, [data]);
  if (error) return <FormError message={error} />;
  if (!data || !form) return <Loading />;
  const field = (key: 'host' | 'user' | 'from') => (
    <TextField
      name={`mail-${key}`}
      label={tr(`general_settings.mail.${key}`)}
      value={form[key]}
      onValue={(v) => setForm({ ...form, [key]: v })}
      readOnly={!canChange}
    />
  );
  return (
    <Section title={tr('general_settings.tabs.mail')}>
      <p className="text-sm text-slate-600" data-testid="mail-source">
        {tr(`general_settings.mail.source.${data.source}`)}
      </p>
      {field('host')}
      <TextField
        name="mail-port"
        label={tr('general_settings.mail.port')}
        value={String(form.port)}
        onValue={(v) => setForm({ ...form, port: Number(v.replace(/\D/g, '')) || 0 })}
        readOnly={!canChange}
        inputMode="numeric"
      />
      <label className="flex items-center gap-2 text-sm">
        <input
          type="checkbox"
          checked={form.secure}
          disabled={!canChange}
          onChange={(e) => setForm({ ...form, secure: e.target.checked })}
        />
        {tr('general_settings.mail.secure')}
      </label>
      {field('user')}
      <TextField
        name="mail-password"
        type="password"
        label={tr('general_settings.mail.password')}
        value={form.password}
        onValue={(v) => setForm({ ...form, password: v })}
        onFocus={() => form.password === PASSWORD_PLACEHOLDER && setForm({ ...form, password: '' })}
        readOnly={!canChange}
        autoComplete="new-password"
      />
      {field('from')}
      {canChange && (
        <div className="flex flex-wrap items-end gap-2">
          <Button
            variant="primary"
            onClick={() =>
              void run('settings.mail_update', { ...form }, tr('general_settings.saved')).then(() => reload())
            }
          >
            {commandTitle('settings.mail_update')}
          </Button>
          <TextField
            name="mail-test-to"
            label={tr('general_settings.mail.test_to')}
            value={to}
            onValue={setTo}
            className="w-64"
          />
          <Button
            onClick={() =>
              void run(
                'settings.mail_test',
                { email: to.trim(), mail_settings: form },
                tr('general_settings.mail.test_sent', { email: to.trim() }),
              )
            }
          >
            {commandTitle('settings.mail_test')}
          </Button>
        </div>
      )}
    </Section>
  );
}

const WALLET_TEXTS = ['pass_type_id', 'team_id', 'organization_name'] as const;
const WALLET_SECRETS = ['certificate', 'key', 'wwdr_certificate'] as const;

/**
 * Apple Wallet (issue 21 item 1, issue 24's wallet tab): the pass type and team, the organisation a pass
 * names, and the certificate, key and Apple's intermediate (PEM) that sign every `.pkpass`. The secrets show
 * the placeholder when stored and are kept when it is sent back; emptied, they are removed.
 */
function WalletTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const [data, error, reload] = useLoad(() => runCommand('settings.wallet_get', {}));
  const [form, setForm] = useState<WalletSettings | null>(null);
  useEffect(() => {
    if (data) setForm(data.data);
  }, [data]);
  if (error) return <FormError message={error} />;
  if (!data || !form) return <Loading />;
  return (
    <Section title={tr('general_settings.tabs.wallet')}>
      <p className="text-sm text-slate-600" data-testid="wallet-state">
        {tr(data.enabled ? 'general_settings.wallet.enabled' : 'general_settings.wallet.disabled')}
      </p>
      {WALLET_TEXTS.map((key) => (
        <TextField
          key={key}
          name={`wallet-${key}`}
          label={tr(`general_settings.wallet.${key}`)}
          value={form[key]}
          onValue={(v) => setForm({ ...form, [key]: v })}
          readOnly={!canChange}
        />
      ))}
      {WALLET_SECRETS.map((key) => (
        <LabelledField
          key={key}
          label={tr(`general_settings.wallet.${key}`)}
          htmlFor={`wallet-${key}`}
          errorTestId={`wallet-${key}-error`}
          hint={tr('general_settings.wallet.pem_hint')}
          hintId={`wallet-${key}-hint`}
        >
          <textarea
            id={`wallet-${key}`}
            name={`wallet-${key}`}
            data-testid={`wallet-${key}`}
            aria-describedby={`wallet-${key}-hint`}
            className={`${inputClass} h-24 font-mono text-xs`}
            value={form[key]}
            readOnly={!canChange}
            spellCheck={false}
            onFocus={() => form[key] === PASSWORD_PLACEHOLDER && setForm({ ...form, [key]: '' })}
            // left empty, a stored secret is kept: only a deliberate save of an emptied field removes it
            onBlur={() =>
              form[key] === '' &&
              data.data[key] === PASSWORD_PLACEHOLDER &&
              setForm({ ...form, [key]: PASSWORD_PLACEHOLDER })
            }
            onChange={(e) => setForm({ ...form, [key]: e.target.value })}
          />
        </LabelledField>
      ))}
      {canChange && (
        <div>
          <Button
            variant="primary"
            onClick={() =>
              void run('settings.wallet_update', { ...form }, tr('general_settings.saved')).then(() =>
                reload(),
              )
            }
          >
            {commandTitle('settings.wallet_update')}
          </Button>
        </div>
      )}
    </Section>
  );
}

function IpBlockingTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const formatDate = useFormatDate();
  const [data, error, reload] = useLoad(async () => {
    const [status, banned, whitelist] = await Promise.all([
      runCommand('ip_blocking.status', {}),
      runCommand('ip_blocking.banned', {}),
      runCommand('ip_blocking.whitelist', {}),
    ]);
    return { status: status.data, banned: banned.data, whitelist: whitelist.data };
  });
  const [adding, setAdding] = useState<{ service: 'console' | 'sip'; ips: string }>({
    service: 'console',
    ips: '',
  });
  if (error) return <FormError message={error} />;
  if (!data) return <Loading />;
  const act = (id: CommandId, args: Record<string, unknown>) => void run(id, args).then(() => reload());
  return (
    <div className="flex flex-col gap-5" data-testid="ip-blocking-tab">
      <Section title={commandTitle('ip_blocking.status')}>
        <table className="w-full border-collapse text-sm">
          <thead>
            <tr className="border-b border-slate-200 text-left text-xs text-slate-500">
              <th className="py-1.5 pr-3 font-medium">{tr('general_settings.ip.service')}</th>
              <th className="py-1.5 pr-3 font-medium">{tr('general_settings.ip.enabled')}</th>
              <th className="py-1.5 pr-3 font-medium">{tr('general_settings.ip.rule')}</th>
              <th className="py-1.5 pr-3 font-medium">{tr('general_settings.ip.banned_now')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {data.status.map((s: IpBlockingStatus) => (
              <tr
                key={s.service}
                className="border-b border-slate-100"
                data-testid={`ip-status-${s.service}`}
              >
                <td className="py-1.5 pr-3">{tr(`general_settings.ip.services.${s.service}`)}</td>
                <td className="py-1.5 pr-3">
                  {tr(s.enabled ? 'general_settings.ip.on' : 'general_settings.ip.off')}
                </td>
                <td className="py-1.5 pr-3">{tr('general_settings.ip.rule_text', s)}</td>
                <td className="py-1.5 pr-3">{s.banned}</td>
                <td className="py-1.5 text-right">
                  {canChange && (
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() =>
                        act('ip_blocking.status_set', { service: s.service, enabled: !s.enabled })
                      }
                    >
                      {tr(s.enabled ? 'general_settings.ip.turn_off' : 'general_settings.ip.turn_on')}
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title={commandTitle('ip_blocking.banned')}>
        {canChange && data.banned.length > 0 && (
          <div>
            <Button size="sm" onClick={() => act('ip_blocking.unban_all', {})}>
              {commandTitle('ip_blocking.unban_all')}
            </Button>
          </div>
        )}
        {data.banned.length === 0 ? (
          <p className="text-sm text-slate-500">{tr('general_settings.ip.none_banned')}</p>
        ) : (
          <table className="w-full border-collapse text-sm" data-testid="ip-banned">
            <tbody>
              {data.banned.map((b: IpBan) => (
                <tr key={`${b.service}-${b.ip}`} className="border-b border-slate-100">
                  <td className="py-1.5 pr-3 font-mono text-xs">{b.ip}</td>
                  <td className="py-1.5 pr-3">{tr(`general_settings.ip.services.${b.service}`)}</td>
                  <td className="py-1.5 pr-3">{tr(`general_settings.ip.causes.${b.cause}`)}</td>
                  <td className="py-1.5 pr-3">
                    {tr('general_settings.ip.until', { at: formatDate(b.banned_until) })}
                  </td>
                  <td className="py-1.5 text-right">
                    {canChange && (
                      <Button
                        size="sm"
                        variant="ghost"
                        onClick={() => act('ip_blocking.unban', { service: b.service, ips: [b.ip] })}
                      >
                        {tr('general_settings.ip.unban')}
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title={commandTitle('ip_blocking.whitelist')}>
        {data.whitelist.length === 0 && (
          <p className="text-sm text-slate-500">{tr('general_settings.ip.none_whitelisted')}</p>
        )}
        {data.whitelist.length > 0 && (
          <table className="w-full border-collapse text-sm" data-testid="ip-whitelist">
            <tbody>
              {data.whitelist.map((w: IpWhitelistEntry) => (
                <tr key={w.id} className="border-b border-slate-100">
                  <td className="py-1.5 pr-3 font-mono text-xs">{w.label}</td>
                  <td className="py-1.5 pr-3">{tr(`general_settings.ip.services.${w.service}`)}</td>
                  <td className="py-1.5 pr-3 text-xs text-slate-600">
                    {w.start_ip} – {w.end_ip}
                  </td>
                  <td className="py-1.5 text-right">
                    {canChange && (
                      <Button
                        size="sm"
                        variant="ghost"
                        onClick={() =>
                          act('ip_blocking.whitelist_delete', { service: w.service, items: [w.id] })
                        }
                      >
                        {tr('general_settings.ip.remove')}
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {canChange && (
          <div className="flex flex-wrap items-end gap-2">
            <label className="text-xs font-medium text-slate-700">
              {tr('general_settings.ip.service')}
              <select
                className="mt-1 block h-8 rounded-md border border-slate-300 px-2 text-sm"
                value={adding.service}
                onChange={(e) => setAdding({ ...adding, service: e.target.value as 'console' | 'sip' })}
              >
                <option value="console">{tr('general_settings.ip.services.console')}</option>
                <option value="sip">{tr('general_settings.ip.services.sip')}</option>
              </select>
            </label>
            <TextField
              name="whitelist-ips"
              label={tr('general_settings.ip.add_hint')}
              value={adding.ips}
              onValue={(v) => setAdding({ ...adding, ips: v })}
              className="w-80"
            />
            <Button
              onClick={() => {
                const ips = adding.ips.split(/[\s,]+/).filter(Boolean);
                if (ips.length) act('ip_blocking.whitelist_add', { service: adding.service, ips });
                setAdding({ ...adding, ips: '' });
              }}
            >
              {commandTitle('ip_blocking.whitelist_add')}
            </Button>
          </div>
        )}
      </Section>
    </div>
  );
}

function MailTemplatesTab({ tr }: { tr: Tr }) {
  const [data, error, reload] = useLoad(async () => {
    const [types, list] = await Promise.all([
      runCommand('mail_template.types', {}),
      runCommand('mail_template.list', {}),
    ]);
    return { types: types.data, list: list.data };
  });
  const empty = { id: 0, type: 'invitation' as MailType, group: '', subject: '', body: '' };
  const [draft, setDraft] = useState(empty);
  const [preview, setPreview] = useState<{ subject: string; text: string } | null>(null);
  if (error) return <FormError message={error} />;
  if (!data) return <Loading />;
  const type = data.types.find((x) => x.id === draft.type)!;
  const edit = (t: MailTemplate) => {
    setDraft({
      id: t.id,
      type: t.mail_type_id,
      group: String(t.domain_id ?? ''),
      subject: t.subject,
      body: t.body,
    });
    setPreview(null);
  };
  const save = () =>
    void run(
      draft.id ? 'mail_template.update' : 'mail_template.create',
      draft.id
        ? { id: draft.id, subject: draft.subject, body: draft.body }
        : {
            mail_type_id: draft.type,
            domain_id: draft.group ? Number(draft.group) : null,
            subject: draft.subject,
            body: draft.body,
          },
      tr('general_settings.saved'),
    ).then((ok) => ok && (setDraft(empty), reload()));
  return (
    <div className="flex flex-col gap-4" data-testid="mail-templates-tab">
      <Section title={commandTitle('mail_template.list')}>
        {data.list.length === 0 ? (
          <p className="text-sm text-slate-500">{tr('general_settings.templates.none')}</p>
        ) : (
          <table className="w-full border-collapse text-sm">
            <tbody>
              {data.list.map((t) => (
                <tr key={t.id} className="border-b border-slate-100" data-testid="mail-template-row">
                  <td className="py-1.5 pr-3">{tr(`values.mail_type_id.${t.mail_type_id}`)}</td>
                  <td className="py-1.5 pr-3">
                    {t.domain?.name ?? tr('general_settings.templates.project')}
                  </td>
                  <td className="py-1.5 pr-3">{t.subject}</td>
                  <td className="py-1.5 text-right whitespace-nowrap">
                    <Button size="sm" variant="ghost" onClick={() => edit(t)}>
                      {tr('general_settings.templates.edit')}
                    </Button>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => void run('mail_template.delete', { id: t.id }).then(() => reload())}
                    >
                      {tr('general_settings.ip.remove')}
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Section title={draft.id ? commandTitle('mail_template.update') : commandTitle('mail_template.create')}>
        <div className="flex flex-wrap gap-2">
          <label className="text-xs font-medium text-slate-700">
            {tr('general_settings.templates.type')}
            <select
              className="mt-1 block h-8 rounded-md border border-slate-300 px-2 text-sm"
              value={draft.type}
              disabled={draft.id !== 0}
              onChange={(e) => setDraft({ ...draft, type: e.target.value as MailType })}
            >
              {data.types.map((x) => (
                <option key={x.id} value={x.id}>
                  {tr(`values.mail_type_id.${x.id}`)}
                </option>
              ))}
            </select>
          </label>
          <TextField
            name="template-group"
            label={tr('general_settings.templates.group')}
            value={draft.group}
            onValue={(v) => setDraft({ ...draft, group: v.replace(/\D/g, '') })}
            readOnly={draft.id !== 0}
            className="w-40"
          />
        </div>
        <p className="text-xs text-slate-500">
          {tr('general_settings.templates.placeholders', {
            offered: type.offered.map((p) => `{{${p}}}`).join(' '),
            required: type.required.map((p) => `{{${p}}}`).join(' ') || '—',
          })}
        </p>
        <TextField
          name="template-subject"
          label={tr('general_settings.templates.subject')}
          value={draft.subject}
          onValue={(v) => setDraft({ ...draft, subject: v })}
        />
        <label className="text-xs font-medium text-slate-700">
          {tr('general_settings.templates.body')}
          <textarea
            className="mt-1 block h-40 w-full rounded-md border border-slate-300 p-2 text-sm"
            data-testid="field-template-body"
            value={draft.body}
            onChange={(e) => setDraft({ ...draft, body: e.target.value })}
          />
        </label>
        <div className="flex gap-2">
          <Button variant="primary" onClick={save}>
            {draft.id ? commandTitle('mail_template.update') : commandTitle('mail_template.create')}
          </Button>
          <Button
            onClick={() =>
              void runCommand('mail_template.preview', {
                mail_type_id: draft.type,
                subject: draft.subject,
                body: draft.body,
              })
                .then(setPreview)
                .catch((err: unknown) => pushAlert('error', describeError(err).message))
            }
          >
            {commandTitle('mail_template.preview')}
          </Button>
          {draft.id !== 0 && (
            <Button variant="ghost" onClick={() => setDraft(empty)}>
              {tr('general_settings.templates.new')}
            </Button>
          )}
        </div>
        {preview && (
          <div
            className="rounded border border-slate-200 bg-slate-50 p-2 text-sm"
            data-testid="template-preview"
          >
            <div className="font-semibold">{preview.subject}</div>
            <pre className="font-sans whitespace-pre-wrap">{preview.text}</pre>
          </div>
        )}
      </Section>
    </div>
  );
}

/** One line of a status: a term and what it is. */
function Fact({ term, children, id }: { term: string; children: ReactNode; id: string }) {
  return (
    <>
      <dt className="text-slate-500">{term}</dt>
      <dd data-testid={`broker-${id}`}>{children}</dd>
    </>
  );
}

/**
 * The MQTT broker (issue 24 item 2; spec part 2 §7 "Broker service: status, restart {type}", "broker GET and
 * POST multipart"): what the server knows of its broker — the embedded one wholly, an external one by its
 * connection and `$SYS` topics —, its restarts, and the embedded broker's TLS certificate and key (two PEM
 * files; the key is never shown again).
 */
function BrokerTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const formatDate = useFormatDate();
  const [data, error, reload] = useLoad(async () => {
    const [status, settings] = await Promise.all([
      runCommand('broker.status', {}),
      runCommand('settings.broker_get', {}),
    ]);
    return { status, settings };
  });
  const [files, setFiles] = useState<{ certificate?: File; key?: File }>({});
  const [busy, setBusy] = useState(false);
  if (error) return <FormError message={error} />;
  if (!data) return <Loading />;
  const s: BrokerStatus = data.status;
  const cert = data.settings.data.certificate;
  const unknown = tr('general_settings.broker.unknown');
  const restart = (type: 'broker' | 'connection') => {
    setBusy(true);
    void run('broker.restart', { type }, tr('general_settings.broker.restarted')).finally(() => {
      setBusy(false);
      reload();
    });
  };
  return (
    <div className="flex flex-col gap-5" data-testid="broker-tab">
      <Section title={commandTitle('broker.status')}>
        <p
          className={`text-sm font-medium ${s.state === 'up' ? 'text-green-800' : 'text-red-800'}`}
          data-testid="broker-state"
        >
          {tr(`general_settings.broker.state.${s.state}`)}
        </p>
        <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
          <Fact term={tr('general_settings.broker.kind.' + s.kind)} id="kind">
            {s.dynsec ? tr('general_settings.broker.dynsec') : ''}
          </Fact>
          <Fact term={tr('general_settings.broker.url')} id="url">
            <span className="font-mono text-xs">{s.url}</span>
          </Fact>
          <Fact term={tr('general_settings.broker.version')} id="version">
            {s.version ?? unknown}
          </Fact>
          {s.listeners.length > 0 && (
            <Fact term={tr('general_settings.broker.listeners')} id="listeners">
              {s.listeners.map((l) => `${l.protocol}://:${l.port}`).join(', ')}
            </Fact>
          )}
          <Fact term={tr('general_settings.broker.clients')} id="clients">
            {s.clients ?? unknown}
          </Fact>
          <Fact term={tr('general_settings.broker.started_at')} id="started">
            {s.started_at ? formatDate(s.started_at) : unknown}
          </Fact>
          <Fact term={tr('general_settings.broker.restarts')} id="restarts">
            {s.restarts}
          </Fact>
        </dl>
        <p className="text-xs text-slate-500">
          {tr('general_settings.broker.messages', {
            handled: s.messages_handled,
            refused: s.messages_refused,
          })}{' '}
          · {tr('general_settings.broker.instance', { instance: s.instance })}
        </p>
        {canChange && (
          <div className="flex flex-wrap gap-2">
            {s.kind === 'embedded' && (
              <Button busy={busy} onClick={() => restart('broker')}>
                {tr('general_settings.broker.restart_broker')}
              </Button>
            )}
            <Button busy={busy} variant="ghost" onClick={() => restart('connection')}>
              {tr('general_settings.broker.restart_connection')}
            </Button>
          </div>
        )}
        <p className="text-xs text-slate-500">
          {tr(
            s.kind === 'embedded'
              ? 'general_settings.broker.restart_hint'
              : 'general_settings.broker.external_hint',
          )}
        </p>
      </Section>
      <Section title={tr('general_settings.broker.certificate')}>
        {(cert ?? s.certificate) ? (
          <dl
            className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm"
            data-testid="broker-certificate"
          >
            {(() => {
              const c = (cert ?? s.certificate)!;
              return (
                <>
                  <Fact term={tr('general_settings.broker.subject')} id="subject">
                    {c.subject}
                  </Fact>
                  <Fact term={tr('general_settings.broker.issuer')} id="issuer">
                    {c.issuer}
                  </Fact>
                  <Fact term={tr('general_settings.broker.validity')} id="validity">
                    {tr('general_settings.broker.valid', {
                      from: formatDate(c.valid_from),
                      to: formatDate(c.valid_to),
                    })}
                  </Fact>
                  {c.names.length > 0 && (
                    <Fact term={tr('general_settings.broker.names')} id="names">
                      {c.names.join(', ')}
                    </Fact>
                  )}
                  <Fact term={tr('general_settings.broker.fingerprint')} id="fingerprint">
                    <span className="font-mono text-xs break-all">{c.fingerprint}</span>
                  </Fact>
                </>
              );
            })()}
          </dl>
        ) : (
          <p className="text-sm text-slate-500" data-testid="broker-no-certificate">
            {tr('general_settings.broker.no_certificate')}
          </p>
        )}
        {data.settings.applies && (
          <p className="text-xs text-slate-500">
            {data.settings.data.tls_port !== null
              ? tr('general_settings.broker.tls_port', { port: data.settings.data.tls_port })
              : tr('general_settings.broker.tls_off')}
            {data.settings.data.key ? ` ${tr('general_settings.broker.key_stored')}` : ''}
          </p>
        )}
        {canChange && data.settings.applies && (
          <div className="flex flex-wrap items-center gap-2">
            <FileButton
              accept=".pem,.crt,.cer,text/plain"
              fileTestId="broker-certificate-file"
              onFile={(f) => setFiles({ ...files, certificate: f })}
            >
              {tr('general_settings.broker.certificate_file')}
              {files.certificate ? `: ${files.certificate.name}` : ''}
            </FileButton>
            <FileButton
              accept=".pem,.key,text/plain"
              fileTestId="broker-key-file"
              onFile={(f) => setFiles({ ...files, key: f })}
            >
              {tr('general_settings.broker.key_file')}
              {files.key ? `: ${files.key.name}` : ''}
            </FileButton>
            <Button
              variant="primary"
              busy={busy}
              onClick={() => {
                if (!files.certificate || !files.key)
                  return pushAlert('error', tr('general_settings.broker.choose'));
                setBusy(true);
                void run(
                  'settings.broker_update',
                  { certificate: files.certificate, key: files.key },
                  tr('general_settings.broker.uploaded'),
                ).then((ok) => {
                  setBusy(false);
                  if (ok) setFiles({});
                  reload();
                });
              }}
            >
              {tr('general_settings.broker.upload')}
            </Button>
            {data.settings.data.certificate && (
              <Button
                variant="ghost"
                onClick={() =>
                  void run('settings.broker_delete', {}, tr('general_settings.saved')).then(() => reload())
                }
              >
                {tr('general_settings.broker.remove')}
              </Button>
            )}
          </div>
        )}
      </Section>
    </div>
  );
}

function JournalsTab({ tr, canChange }: { tr: Tr; canChange: boolean }) {
  const [data, error, reload] = useLoad(() => runCommand('settings.retention_get', {}));
  const [days, setDays] = useState('');
  useEffect(() => {
    if (data) setDays(String(data.data.audit_event));
  }, [data]);
  if (error) return <FormError message={error} />;
  if (!data) return <Loading />;
  return (
    <Section title={tr('general_settings.tabs.journals')}>
      <TextField
        name="audit-retention"
        label={tr('general_settings.audit_retention')}
        hint={tr('general_settings.audit_retention_default', { days: data.data.audit_event_default })}
        value={days}
        onValue={(v) => setDays(v.replace(/\D/g, ''))}
        readOnly={!canChange}
        inputMode="numeric"
        className="w-64"
      />
      {canChange && (
        <div>
          <Button
            variant="primary"
            onClick={() =>
              void run(
                'settings.retention_update',
                { audit_event: Number(days) || null },
                tr('general_settings.saved'),
              ).then(() => reload())
            }
          >
            {commandTitle('settings.retention_update')}
          </Button>
        </div>
      )}
    </Section>
  );
}

/**
 * /general-settings (spec part 1 §2.1, §2.4; issue 24 items 2 and 4): the project's general settings, its
 * mail server with a test e-mail, IP blocking (status, banned addresses, whitelist), the SIP settings and
 * nodes, the push server, the MQTT broker, Apple Wallet and how long its audit log keeps its rows, as tabs. Read-only without `project_settings.change`.
 */
export function GeneralSettingsPage() {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  usePageTitle(tr('general_settings.title'));
  const can = useCan();
  const canChange = can(getCommand('settings.general_update').gates).can;
  const [tab, setTab] = useState<Tab>('general');
  const onKey = (e: KeyboardEvent) => {
    const i = Tabs.indexOf(tab);
    const next =
      e.key === 'ArrowRight'
        ? Tabs[(i + 1) % Tabs.length]
        : e.key === 'ArrowLeft'
          ? Tabs[(i + Tabs.length - 1) % Tabs.length]
          : null;
    if (!next) return;
    e.preventDefault();
    setTab(next);
    document.getElementById(`settings-tab-${next}`)?.focus();
  };
  return (
    <div className="space-y-3" data-testid="general-settings-page">
      <div
        role="tablist"
        aria-label={tr('general_settings.title')}
        className="flex gap-1 border-b border-slate-200"
      >
        {Tabs.map((x) => (
          <button
            key={x}
            id={`settings-tab-${x}`}
            type="button"
            role="tab"
            aria-selected={tab === x}
            tabIndex={tab === x ? 0 : -1}
            data-testid={`settings-tab-${x}`}
            onClick={() => setTab(x)}
            onKeyDown={onKey}
            className={`-mb-px border-b-2 px-3 py-1.5 text-sm ${tab === x ? 'border-blue-700 font-semibold text-blue-800' : 'border-transparent text-slate-600 hover:text-slate-900'}`}
          >
            {tr(`general_settings.tabs.${x}`)}
          </button>
        ))}
      </div>
      {tab === 'general' && <GeneralTab tr={tr} canChange={canChange} />}
      {tab === 'mail' && <MailTab tr={tr} canChange={canChange} />}
      {tab === 'mail_templates' && <MailTemplatesTab tr={tr} />}
      {tab === 'ip_blocking' && <IpBlockingTab tr={tr} canChange={canChange} />}
      {tab === 'sip' && <SipSettingsTab tr={tr} canChange={canChange} />}
      {tab === 'sip_nodes' && <SipNodesTab tr={tr} canChange={canChange} />}
      {tab === 'push' && <PushSettingsTab tr={tr} canChange={canChange} />}
      {tab === 'broker' && <BrokerTab tr={tr} canChange={canChange} />}
      {tab === 'wallet' && <WalletTab tr={tr} canChange={canChange} />}
      {tab === 'whitelabel' && <WhiteLabelTab canChange={canChange} />}
      {tab === 'journals' && <JournalsTab tr={tr} canChange={canChange} />}
    </div>
  );
}
