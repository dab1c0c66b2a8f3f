import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Command as Commander } from 'commander';
import { FoundDevice, getCommand, type DeviceSearch } from '@lintel/commands';
import { execute } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { evaluateGates } from '../families/gates';
import type { FamilyOptions } from '../families/tree';
import { t } from '../i18n';
import { printOutcome } from '../output';

interface SearchOptions {
  from: string;
  to: string;
  port?: string;
  json?: boolean;
}

interface AddFoundOptions {
  group: string;
  serials?: string;
  json?: boolean;
}

/** How often the search is read again while it runs (the server keeps it; a CLI has no console to push to). */
const POLL_MS = 300;

const foundLine = (f: FoundDevice) =>
  [
    f.ip_address.padEnd(15),
    String(f.port).padEnd(5),
    f.serial_number,
    f.device_type,
    f.device_name,
    f.registered ? t('devices.search.registered') : '',
  ]
    .filter(Boolean)
    .join('  ');

async function assertMay(opts: FamilyOptions, id: 'device.search' | 'device.add_found') {
  const gate = evaluateGates(getCommand(id), await opts.session.profile());
  if (!gate.can) throw new CliError('method_prohibited', ExitCode.refused, { command: id }, 'errors');
}

/**
 * `lintel devices search --from A --to B [--port N]`: starts a network search and follows it to the end,
 * printing each device as it is found (`--json`: one JSON object per line, what `add-found` reads) and the
 * progress on stderr.
 */
async function search(ctx: CliContext, opts: FamilyOptions, o: SearchOptions): Promise<void> {
  await assertMay(opts, 'device.search');
  const { api } = opts.session.signedIn();
  const request_id = randomUUID();
  let state: DeviceSearch = await execute(api, 'device.search', {
    start_ip: o.from,
    end_ip: o.to,
    request_id,
    ...(o.port !== undefined ? { port: Number(o.port) } : {}),
  } as never);
  let shown = 0;
  let lastProgress = '';
  for (;;) {
    for (const f of state.found.slice(shown))
      ctx.stdout.write(o.json ? `${JSON.stringify(f)}\n` : `${foundLine(f)}\n`);
    shown = state.found.length;
    const progress = t('devices.search.progress', {
      probed: state.probed,
      total: state.total,
      found: state.found.length,
    });
    if (progress !== lastProgress) ctx.stderr.write(`${progress}\n`);
    lastProgress = progress;
    if (state.state !== 'running') break;
    await new Promise((r) => setTimeout(r, POLL_MS));
    state = await execute(api, 'device.search_result', { request_id });
  }
  if (state.state === 'interrupted')
    throw new CliError('device_search_interrupted', ExitCode.error, { request_id });
  ctx.stderr.write(
    `${t('devices.search.done', { found: state.found.length, total: state.total, timed_out: state.timed_out })}\n`,
  );
}

/** Found devices from a file or stdin: NDJSON (as `search --json` prints) or a JSON array. */
function readFound(ctx: CliContext, file: string | undefined): FoundDevice[] {
  let text: string;
  try {
    text = !file || file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError('found_no_file', ExitCode.usage, { file: file ?? '-' });
  }
  const trimmed = text.trim();
  let values: unknown[];
  try {
    values = trimmed.startsWith('[')
      ? (JSON.parse(trimmed) as unknown[])
      : trimmed
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as unknown);
  } catch {
    throw new CliError('found_bad_input', ExitCode.usage);
  }
  const parsed = FoundDevice.partial({
    registered: true,
    device_id: true,
    device_name: true,
    firmware_version: true,
  })
    .array()
    .safeParse(values);
  if (!parsed.success || !parsed.data.length) throw new CliError('found_bad_input', ExitCode.usage);
  void ctx;
  return parsed.data as FoundDevice[];
}

/** A group by id or by its exact name (one group of that name). */
async function groupId(opts: FamilyOptions, value: string): Promise<number> {
  if (/^\d+$/.test(value)) return Number(value);
  const { api } = opts.session.signedIn();
  const all = await execute(api, 'group.full', {});
  const named = all.data.filter((g) => g.name === value);
  if (named.length === 1) return named[0]!.id;
  if (!named.length) throw new CliError('item_not_found', ExitCode.notFound, null, 'errors');
  throw new CliError('group_ambiguous', ExitCode.usage, {
    value,
    count: named.length,
    ids: named.map((g) => g.id).join(', '),
  });
}

/**
 * `lintel devices add-found --group G [file]`: adds the devices a search found (its `--json` lines, from a
 * file or stdin), all or none; `--serials` picks some of them.
 */
async function addFound(
  ctx: CliContext,
  opts: FamilyOptions,
  file: string | undefined,
  o: AddFoundOptions,
): Promise<void> {
  await assertMay(opts, 'device.add_found');
  const wanted = o.serials
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const found = readFound(ctx, file).filter((f) => !wanted || wanted.includes(f.serial_number));
  if (!found.length) throw new CliError('found_none', ExitCode.usage);
  const { api } = opts.session.signedIn();
  const result = await execute(api, 'device.add_found', {
    domain_id: await groupId(opts, o.group),
    items: found.map((f) => ({
      serial_number: f.serial_number,
      device_type: f.device_type,
      ip_address: f.ip_address,
      port: f.port,
      ...(f.device_name ? { name: f.device_name } : {}),
    })),
  } as never);
  printOutcome(ctx, Boolean(o.json), {
    data: result,
    text: t('devices.add_found.done', {
      count: result.data.length,
      names: result.data.map((d) => `${d.name} (${d.id})`).join(', '),
    }),
  });
}

/** `lintel devices search` and `lintel devices add-found`, in place of their generated forms. */
export function addDeviceSearch(program: Commander, ctx: CliContext, opts: FamilyOptions): void {
  const devices =
    program.commands.find((c) => c.name() === 'devices') ??
    program.command('devices').description(t('devices.description'));
  const own = devices.commands as Commander[];
  for (const name of ['search', 'add-found']) {
    const i = own.findIndex((c) => c.name() === name);
    if (i >= 0) own.splice(i, 1);
  }
  devices
    .command('search')
    .description(t('devices.search.description'))
    .requiredOption(`--from <${t('placeholders.text')}>`, t('devices.search.from'))
    .requiredOption(`--to <${t('placeholders.text')}>`, t('devices.search.to'))
    .option(`--port <${t('placeholders.number')}>`, t('devices.search.port'))
    .option('--json', t('devices.search.json'))
    .action((o: SearchOptions) => search(ctx, opts, o));
  devices
    .command('add-found')
    .description(t('devices.add_found.description'))
    .argument('[file]', t('devices.add_found.file'))
    .requiredOption(`--group <${t('placeholders.text')}>`, t('devices.add_found.group'))
    .option(`--serials <${t('placeholders.texts')}>`, t('devices.add_found.serials'))
    .option('--json', t('options.json'))
    .action((file: string | undefined, o: AddFoundOptions) => addFound(ctx, opts, file, o));
}
