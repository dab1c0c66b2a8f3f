import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Argument, type Command as Commander } from 'commander';
import { getCommand, LogLevels, LogNames, type CommandId, type LogLine } from '@lintel/commands';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { setHint } from '../meta';
import { printOutcome } from '../output';

/**
 * `lintel logs list|show|download`, handwritten in place of the generated `available` and `get` (a page of a
 * log printed as lines, newest last, `--follow` as `tail -f` does), beside the generated `clear` (which asks
 * first, as every deletion does, or takes `--yes`). docs/decisions.md "Event and system logs".
 */

async function gate(opts: FamilyOptions, id: CommandId): Promise<void> {
  const g = evaluateGates(getCommand(id), await opts.session.profile());
  if (!g.can) throw new CliError('method_prohibited', ExitCode.refused, { command: id }, 'errors');
}

const nameOf = (name: string) => {
  if (!(LogNames as readonly string[]).includes(name))
    throw new CliError('log_bad_name', ExitCode.usage, { name, names: LogNames.join(', ') });
  return name as (typeof LogNames)[number];
};

/** One line as people read it: time, level, message and the other fields; a line of no time as it is. */
export function lineText(l: LogLine): string {
  if (!l.at) return l.text;
  const fields = Object.keys(l.fields).length ? ` ${JSON.stringify(l.fields)}` : '';
  return `${l.at} ${(l.level ?? '').toUpperCase().padEnd(5)} ${l.message}${fields}`;
}

async function list(ctx: CliContext, opts: FamilyOptions, o: { json?: boolean }) {
  const { api } = opts.session.signedIn();
  await gate(opts, 'log.available');
  const r = await execute(api, 'log.available', {});
  const text = [
    t('logs.instance', { instance: r.instance, bytes: r.max_bytes, files: r.max_files }),
    ...r.data.map((s) =>
      t('logs.source', {
        name: s.name.padEnd(7),
        kind: t(`logs.kinds.${s.kind}`),
        size: s.size_bytes,
        files: s.files,
        at: s.modified_at ?? t('logs.never'),
      }),
    ),
  ].join('\n');
  printOutcome(ctx, Boolean(o.json), { data: r, text });
}

interface ShowOptions {
  limit: string;
  before?: string;
  level?: string;
  grep?: string;
  follow?: boolean;
  json?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function show(ctx: CliContext, opts: FamilyOptions, raw: string, o: ShowOptions) {
  const name = nameOf(raw);
  const limit = Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new CliError('log_bad_limit', ExitCode.usage, { value: o.limit });
  if (o.level !== undefined && !(LogLevels as readonly string[]).includes(o.level))
    throw new CliError('log_bad_level', ExitCode.usage, { value: o.level, levels: LogLevels.join(', ') });
  const { api } = opts.session.signedIn();
  await gate(opts, 'log.get');
  const args = {
    name,
    limit,
    before: o.before,
    level: o.level as (typeof LogLevels)[number] | undefined,
    contains: o.grep,
  };
  const page = await execute(api, 'log.get', args);
  if (o.json && !o.follow) {
    printOutcome(ctx, true, { data: page, text: '' });
    return;
  }
  const print = (lines: LogLine[]) => {
    for (const l of lines) ctx.stdout.write(o.json ? `${JSON.stringify(l)}\n` : `${lineText(l)}\n`);
  };
  print(page.data);
  if (!o.follow) {
    if (page.before && !o.json) ctx.stderr.write(`${t('logs.older', { before: page.before })}\n`);
    return;
  }
  // as `tail -f`: the newest page again every second, printing the lines after the last one printed
  let last = page.data.at(-1)?.text ?? null;
  for (;;) {
    await sleep(1000);
    const next = (await execute(api, 'log.get', { ...args, before: undefined, limit: 1000 })).data;
    const at = last === null ? -1 : next.map((l) => l.text).lastIndexOf(last);
    // the last line printed is gone (the log was cleared or rotated past a page): print the page whole
    const fresh = next.slice(at + 1);
    print(fresh);
    if (fresh.length) last = fresh.at(-1)!.text;
  }
}

async function download(
  ctx: CliContext,
  opts: FamilyOptions,
  raw: string,
  o: { output?: string; json?: boolean },
) {
  const name = nameOf(raw);
  const { api } = opts.session.signedIn();
  await gate(opts, 'log.download');
  const res = await api.openStream('GET', `/logs/${name}/download`);
  const body = Readable.fromWeb(res.body as never);
  if (o.output === '-') {
    await pipeline(body, ctx.stdout as NodeJS.WritableStream);
    return;
  }
  const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
  const file = path.resolve(o.output ?? named ?? `lintel-${name}.log`);
  let bytes = 0;
  body.on('data', (c: Buffer) => (bytes += c.length));
  await pipeline(body, fs.createWriteStream(file));
  printOutcome(ctx, Boolean(o.json), {
    data: { name, file, size: bytes },
    text: t('logs.download.done', { file, size: bytes }),
  });
}

export function addLogTools(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  // the generated family is `log` (it has no `list` verb): named `logs` as people say it, `log` kept as alias
  const generated = program.commands.find((c) => c.name() === 'log');
  const logs = generated
    ? generated.name('logs').alias('log')
    : program.command('logs').alias('log').description(t('logs.description'));
  logs.description(t('logs.description'));
  const own = logs.commands as Commander[];
  for (const name of ['available', 'get']) {
    const i = own.findIndex((c) => c.name() === name);
    if (i >= 0) own.splice(i, 1);
  }
  const nameArg = () =>
    setHint(new Argument('<name>', t('logs.name', { names: LogNames.join(', ') })), {
      values: [...LogNames],
    });
  logs
    .command('list')
    .description(t('logs.list.description'))
    .option('--json', t('options.json'))
    .action((o: { json?: boolean }) => list(ctx, opts, o));
  logs
    .command('show')
    .alias('tail')
    .description(t('logs.show.description'))
    .addArgument(nameArg())
    .option(`-n, --limit <${t('placeholders.number')}>`, t('logs.show.limit'), '50')
    .option(`--before <${t('placeholders.text')}>`, t('logs.show.before'))
    .option(`--level <${t('placeholders.choice')}>`, t('logs.show.level', { levels: LogLevels.join(', ') }))
    .option(`--grep <${t('placeholders.text')}>`, t('logs.show.grep'))
    .option('-f, --follow', t('logs.show.follow'))
    .option('--json', t('options.json'))
    .action((name: string, o: ShowOptions) => show(ctx, opts, name, o));
  logs
    .command('download')
    .description(t('logs.download.description'))
    .addArgument(nameArg())
    .option(`-o, --output <${t('placeholders.file')}>`, t('logs.download.output'))
    .option('--json', t('options.json'))
    .action((name: string, o: { output?: string; json?: boolean }) => download(ctx, opts, name, o));
}
