import { Argument, type Command } from 'commander';
import { getCommand } from '@lintel/commands';
import { apiClient } from '../api';
import { ConfigStore, type ConfigFile } from '../config-store';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { table } from '../families/render';
import { t } from '../i18n';
import { offer, setHint } from '../meta';
import { printOutcome, type Outcome } from '../output';

/** How long `context remove` waits for the server to end the session before forgetting it anyway. */
const LOGOUT_TIMEOUT_MS = 5000;

export interface ContextRow {
  name: string;
  current: boolean;
  server: string;
  login: string;
  project: { uid: string; name: string };
  signed_in: boolean;
}

export function contextRows(config: ConfigFile): ContextRow[] {
  return Object.entries(config.contexts)
    .map(([name, c]) => ({
      name,
      current: config.current === name,
      server: c.server,
      login: c.login,
      project: { uid: c.project.uid, name: c.project.name },
      signed_in: Boolean(c.token && c.refresh),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The context names of the config file (for completion and the palette); none when it cannot be read. */
export function contextNames(ctx: CliContext): string[] {
  try {
    return Object.keys(new ConfigStore(ctx.env).read().contexts).sort();
  } catch {
    return [];
  }
}

function unknown(name: string, config: ConfigFile): CliError {
  return new CliError('unknown_context', ExitCode.notFound, { name, contexts: Object.keys(config.contexts) });
}

/** `lintel context list`: a table for a person (`*` marks the current one), tab-separated for a pipe. */
export function listContexts(ctx: CliContext): Outcome {
  const rows = contextRows(new ConfigStore(ctx.env).read());
  const tty = Boolean(ctx.stdout.isTTY);
  if (tty && !rows.length) return { data: rows, text: t('context.none') };
  const yesNo = (b: boolean) => (tty ? (b ? t('output.yes') : t('output.no')) : String(b));
  const cells = rows.map((r) => [
    tty ? (r.current ? '*' : '') : String(r.current),
    r.name,
    // a person reads `localhost:8080`; https stays spelled out
    tty ? r.server.replace(/^http:\/\//, '') : r.server,
    r.login,
    tty ? r.project.name : r.project.uid,
    yesNo(r.signed_in),
  ]);
  const keys = ['current', 'name', 'server', 'login', 'project', 'signed_in'] as const;
  const text = tty
    ? table(
        // the mark of the current one needs no title: the names keep their room
        keys.map((k) => (k === 'current' ? '' : t(`context.columns.${k}` as const).toLocaleUpperCase())),
        cells,
        ctx.stdout.columns || 100,
      )
    : [keys.join('\t'), ...cells.map((c) => c.join('\t'))].join('\n');
  return { data: rows, text };
}

/** `lintel context use NAME`: makes a saved context the current one; exit 5 when there is none of that name. */
export function useContext(ctx: CliContext, name: string): Outcome {
  const store = new ConfigStore(ctx.env);
  const config = store.read();
  const context = config.contexts[name];
  if (!context) throw unknown(name, config);
  store.update((c) => {
    c.current = name;
  });
  const row = contextRows({ ...config, current: name }).find((r) => r.name === name)!;
  return {
    data: row,
    text: [
      t('context.used', {
        name,
        login: context.login,
        server: context.server,
        project: context.project.name,
      }),
      ...(row.signed_in ? [] : [t('context.signed_out')]),
    ].join('\n'),
  };
}

/**
 * `lintel context remove NAME`: ends the context's session on the server (best effort: an unreachable
 * server does not keep a context alive) and forgets it.
 */
export async function removeContext(ctx: CliContext, name: string): Promise<Outcome> {
  const store = new ConfigStore(ctx.env);
  const config = store.read();
  const context = config.contexts[name];
  if (!context) throw unknown(name, config);
  if (context.token && context.refresh) {
    try {
      await apiClient(context.server, store.sessionStore(name)).request(
        'POST',
        getCommand('session.logout').http.path,
        { timeoutMs: LOGOUT_TIMEOUT_MS },
      );
    } catch {
      // gone already, or the server is away: forgotten all the same
    }
  }
  const wasCurrent = config.current === name;
  store.remove(name);
  return {
    data: { ok: true, context: name, current: wasCurrent ? null : config.current },
    text: [t('context.removed', { name }), ...(wasCurrent ? [t('context.no_current')] : [])].join('\n'),
  };
}

export function addContext(program: Command, ctx: CliContext): void {
  const names = () => contextNames(ctx);
  const group = program.command('context').description(t('context.description'));
  const list = group
    .command('list')
    .alias('ls')
    .description(t('context.list'))
    .option('--json', t('options.json'))
    .action((opts: { json?: boolean }) => printOutcome(ctx, Boolean(opts.json), listContexts(ctx)));
  offer(list, { titleKey: 'cli:context.list', asks: [] });
  const use = group
    .command('use')
    .description(t('context.use'))
    .addArgument(setHint(new Argument('<name>', t('context.name')), { values: names }))
    .option('--json', t('options.json'))
    .action((name: string, opts: { json?: boolean }) =>
      printOutcome(ctx, Boolean(opts.json), useContext(ctx, name)),
    );
  offer(use, { titleKey: 'cli:context.use', asks: [{ label: t('context.name'), choices: names }] });
  group
    .command('remove')
    .alias('rm')
    .description(t('context.remove'))
    .addArgument(setHint(new Argument('<name>', t('context.name')), { values: names }))
    .option('--json', t('options.json'))
    .action(async (name: string, opts: { json?: boolean }) =>
      printOutcome(ctx, Boolean(opts.json), await removeContext(ctx, name)),
    );
}
