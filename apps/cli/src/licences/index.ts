import fs from 'node:fs';
import path from 'node:path';
import { createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { Argument, type Command as Commander } from 'commander';
import { getCommand } from '@lintel/commands';
import {
  LICENCE_FORMAT,
  LicenceFlags,
  LicencePayload,
  LicenseInfo,
  licenceAreaOf,
  type LicenceDocument,
} from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { setHint } from '../meta';
import { printOutcome } from '../output';
import { registerTextView } from '../families/run';
import { licenceListText, licenceUsageText } from './views';

/**
 * `lintel licences keygen|issue|add`, beside the generated `lintel licences list|delete|usage|…`.
 * keygen and issue are local: they hold the vendor's private key, which never goes to any server, so they
 * are no commands of the registry; `add` sends a file (or asks the licence server) as `licence.add_*` does.
 */
const COUNTED = ['sip', 'mobile_app', 'ukey2'] as const;

/** Every feature off: the base an issued licence's flags switch on. */
function noFeatures(): Record<string, Record<string, unknown>> {
  const shape = LicenseInfo.shape as Record<string, { shape: Record<string, unknown> }>;
  return Object.fromEntries(
    Object.entries(shape).map(([area, s]) => [
      area,
      Object.fromEntries(Object.keys(s.shape).map((k) => [k, k === 'license_count' ? null : false])),
    ]),
  );
}

/** `all`, or licence flags: `sip` switches the feature on, `sip.is_web_dialer_enabled` that flag (and the switch). */
export function featuresFrom(list: string, counts: readonly string[]): LicenseInfo {
  const f = noFeatures();
  const flags =
    list === 'all'
      ? [...LicenceFlags]
      : list
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  for (const flag of flags) {
    if (!(LicenceFlags as readonly string[]).includes(flag))
      throw new CliError('licence_unknown_flag', ExitCode.usage, { flag, flags: LicenceFlags.join(', ') });
    const area = licenceAreaOf(flag as (typeof LicenceFlags)[number]);
    const key = flag.includes('.') ? flag.slice(area.length + 1) : 'is_enabled';
    if ('is_enabled' in f[area]!) f[area]!.is_enabled = true;
    f[area]![key] = true;
  }
  if (list === 'all')
    for (const s of Object.values(f)) for (const k of Object.keys(s)) if (k !== 'license_count') s[k] = true;
  for (const c of counts) {
    const m = /^([a-z_0-9]+)=(\d{1,9})$/.exec(c);
    if (!m || !(COUNTED as readonly string[]).includes(m[1]!))
      throw new CliError('licence_bad_count', ExitCode.usage, { value: c, counted: COUNTED.join(', ') });
    f[m[1]!]!.license_count = Number(m[2]);
  }
  return LicenseInfo.parse(f);
}

function date(value: string, flag: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new CliError('licence_bad_date', ExitCode.usage, { flag, value });
  return new Date(ms).toISOString();
}

interface KeygenOptions {
  out: string;
  json?: boolean;
}

function keygen(ctx: CliContext, o: KeygenOptions): void {
  const dir = path.resolve(o.out);
  const privateFile = path.join(dir, 'lintel-licence-private.pem');
  const publicFile = path.join(dir, 'lintel-licence-public.txt');
  if (fs.existsSync(privateFile))
    throw new CliError('licence_key_exists', ExitCode.usage, { file: privateFile });
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicB64 = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(privateFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), {
    mode: 0o600,
    flag: 'wx',
  });
  fs.writeFileSync(publicFile, `${publicB64}\n`);
  printOutcome(ctx, Boolean(o.json), {
    data: { public_key: publicB64, private_key_file: privateFile, public_key_file: publicFile },
    text: t('licences.keygen.done', { public_key: publicB64, private: privateFile }),
  });
}

interface IssueOptions {
  key: string;
  instance: string;
  to: string;
  from?: string;
  issuer: string;
  features: string;
  count: string[];
  units: string;
  id?: string;
  output?: string;
  json?: boolean;
}

function issue(ctx: CliContext, o: IssueOptions): void {
  let key;
  try {
    key = createPrivateKey(fs.readFileSync(o.key));
  } catch {
    throw new CliError('licence_bad_key', ExitCode.usage, { file: o.key });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new CliError('licence_bad_key', ExitCode.usage, { file: o.key });
  const units = Number(o.units);
  const payload = LicencePayload.safeParse({
    id: o.id ?? randomUUID(),
    issuer: o.issuer,
    instance_id: o.instance,
    valid_from: o.from ? date(o.from, '--from') : new Date().toISOString(),
    valid_to: date(o.to, '--to'),
    features: featuresFrom(o.features, o.count),
    units_per_licence: units,
    issued_at: new Date().toISOString(),
  });
  if (!payload.success)
    throw new CliError('licence_bad_payload', ExitCode.usage, {
      detail: payload.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    });
  const bytes = Buffer.from(JSON.stringify(payload.data), 'utf8');
  const doc: LicenceDocument = {
    format: LICENCE_FORMAT,
    payload: bytes.toString('base64'),
    signature: sign(null, bytes, key).toString('base64'),
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (!o.output) {
    // the file itself on stdout (it is JSON already, with or without --json)
    ctx.stdout.write(text);
    return;
  }
  fs.writeFileSync(o.output, text);
  printOutcome(ctx, Boolean(o.json), {
    data: { file: path.resolve(o.output), ...payload.data },
    text: t('licences.issue.done', { file: o.output, id: payload.data.id, to: payload.data.valid_to }),
  });
}

interface AddOptions {
  cloud?: boolean;
  json?: boolean;
}

async function add(ctx: CliContext, opts: FamilyOptions, file: string | undefined, o: AddOptions) {
  if (!file === !o.cloud) throw new CliError('licence_add_usage', ExitCode.usage);
  const id = o.cloud ? 'licence.add_cloud' : 'licence.add_file';
  const { api } = opts.session.signedIn();
  const gate = evaluateGates(getCommand(id), await opts.session.profile());
  if (!gate.can) throw new CliError('method_prohibited', ExitCode.refused, { command: id }, 'errors');
  let result;
  if (o.cloud) result = await execute(api, 'licence.add_cloud', {});
  else {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(file!);
    } catch {
      throw new CliError('licence_no_file', ExitCode.usage, { file });
    }
    const blob = new File([new Uint8Array(buf)], path.basename(file!), { type: 'application/json' });
    result = await execute(api, 'licence.add_file', { file: blob });
  }
  printOutcome(ctx, Boolean(o.json), {
    data: result,
    text: t('licences.add.done', { id: result.id, licence_id: result.licence_id ?? '' }),
  });
}

export function addLicenceTools(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  registerTextView('licence.list', licenceListText);
  registerTextView('licence.usage', licenceUsageText);
  const licences =
    program.commands.find((c) => c.name() === 'licences') ??
    program.command('licences').description(t('licences.description'));
  licences
    .command('keygen')
    .description(t('licences.keygen.description'))
    .requiredOption(`--out <${t('placeholders.file')}>`, t('licences.keygen.out'))
    .option('--json', t('options.json'))
    .action((o: KeygenOptions) => keygen(ctx, o));
  licences
    .command('issue')
    .description(t('licences.issue.description'))
    .requiredOption(`--key <${t('placeholders.file')}>`, t('licences.issue.key'))
    .requiredOption(`--instance <${t('placeholders.text')}>`, t('licences.issue.instance'))
    .requiredOption(`--to <${t('placeholders.text')}>`, t('licences.issue.to'))
    .option(`--from <${t('placeholders.text')}>`, t('licences.issue.from'))
    .option(`--issuer <${t('placeholders.text')}>`, t('licences.issue.issuer'), 'Lintel')
    .option(`--features <${t('placeholders.texts')}>`, t('licences.issue.features'), 'all')
    .option(
      `--count <${t('placeholders.text')}>`,
      t('licences.issue.count'),
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(`--units <${t('placeholders.number')}>`, t('licences.issue.units'), '1')
    .option(`--id <${t('placeholders.text')}>`, t('licences.issue.id'))
    .option(`-o, --output <${t('placeholders.file')}>`, t('licences.issue.output'))
    .option('--json', t('options.json'))
    .action((o: IssueOptions) => issue(ctx, o));
  licences
    .command('add')
    .description(t('licences.add.description'))
    .addArgument(setHint(new Argument('[file]', t('licences.add.file')), { files: true }))
    .option('--cloud', t('licences.add.cloud'))
    .option('--json', t('options.json'))
    .action((file: string | undefined, o: AddOptions) => add(ctx, opts, file, o));
}
