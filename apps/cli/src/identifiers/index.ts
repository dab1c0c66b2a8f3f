import fs from 'node:fs';
import path from 'node:path';
import { Argument, Option, type Command as Commander } from 'commander';
import { QrImageFormats, downloadFile, getCommand, type CommandId } from '@lintel/commands';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { offer, setHint } from '../meta';
import { printOutcome } from '../output';

/**
 * `lintel identifiers qr ID` and `lintel identifiers wallet-pass ID`: a QR identifier's QR code (PNG or SVG)
 * and its Apple Wallet pass, and `lintel identifiers photo ID` a face identifier's photo (JPEG; uploaded with
 * the registry's `photo-upload ID --image FILE`), written to a file (`--out`, `-` for standard output; default the name the server
 * gives), through the same commands as the console's QR preview (`identifier.qr`, `identifier.wallet_pass`).
 */

interface FileOptions {
  out?: string;
  format?: (typeof QrImageFormats)[number];
  size?: string;
  json?: boolean;
}

async function save(
  ctx: CliContext,
  opts: FamilyOptions,
  id: CommandId & ('identifier.qr' | 'identifier.wallet_pass' | 'identifier.photo'),
  raw: string,
  o: FileOptions,
): Promise<void> {
  if (!/^\d+$/.test(raw))
    throw new CliError('bad_usage', ExitCode.usage, { detail: t('identifiers.bad_id', { value: raw }) });
  const cmd = getCommand(id);
  const g = evaluateGates(cmd, await opts.session.profile());
  if (!g.can) throw new CliError('method_prohibited', ExitCode.refused, { command: id }, 'errors');
  const { api } = opts.session.signedIn();
  const args =
    id === 'identifier.qr'
      ? { id: Number(raw), format: o.format, ...(o.size !== undefined ? { size: o.size } : {}) }
      : { id: Number(raw) };
  const file = await downloadFile({ api }, cmd, args);
  if (o.out === '-') {
    (ctx.stdout as NodeJS.WritableStream).write(file.bytes);
    return;
  }
  const target = path.resolve(o.out ?? file.filename ?? `identifier-${raw}`);
  fs.writeFileSync(target, file.bytes);
  printOutcome(ctx, Boolean(o.json), {
    data: { id: Number(raw), file: target, size: file.bytes.length, content_type: file.contentType },
    text: t('identifiers.saved', { file: target, size: file.bytes.length }),
  });
}

export function addIdentifierFiles(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  const identifiers = program.commands.find((c) => c.name() === 'identifiers');
  if (!identifiers) return;
  const idArg = () => setHint(new Argument('<id>', t('identifiers.id')), {});
  const qr = identifiers
    .command('qr')
    .description(t('identifiers.qr.description'))
    .addArgument(idArg())
    .option(`-o, --out <${t('placeholders.file')}>`, t('identifiers.out'))
    .addOption(
      new Option(`--format <${t('placeholders.choice')}>`, t('identifiers.qr.format'))
        .choices([...QrImageFormats])
        .default('png'),
    )
    .option(`--size <${t('placeholders.number')}>`, t('identifiers.qr.size'))
    .option('--json', t('options.json'))
    .action((id: string, o: FileOptions) => save(ctx, opts, 'identifier.qr', id, o));
  offer(qr, {
    gate: 'identifier.qr',
    titleKey: 'cli:identifiers.qr.description',
    asks: [{ label: t('identifiers.id_label'), note: t('identifiers.id') }],
    options: [{ label: t('identifiers.qr.format_label'), flag: '--format', choices: [...QrImageFormats] }],
  });
  const wallet = identifiers
    .command('wallet-pass')
    .description(t('identifiers.wallet_pass.description'))
    .addArgument(idArg())
    .option(`-o, --out <${t('placeholders.file')}>`, t('identifiers.out'))
    .option('--json', t('options.json'))
    .action((id: string, o: FileOptions) => save(ctx, opts, 'identifier.wallet_pass', id, o));
  offer(wallet, {
    gate: 'identifier.wallet_pass',
    titleKey: 'cli:identifiers.wallet_pass.description',
    asks: [{ label: t('identifiers.id_label'), note: t('identifiers.id') }],
  });
  const photo = identifiers
    .command('photo')
    .description(t('identifiers.photo.description'))
    .addArgument(idArg())
    .option(`-o, --out <${t('placeholders.file')}>`, t('identifiers.out'))
    .option('--json', t('options.json'))
    .action((id: string, o: FileOptions) => save(ctx, opts, 'identifier.photo', id, o));
  offer(photo, {
    gate: 'identifier.photo',
    titleKey: 'cli:identifiers.photo.description',
    asks: [{ label: t('identifiers.id_label'), note: t('identifiers.id') }],
  });
}
