import { Argument, Option, type Command } from 'commander';
import { registry } from '@lintel/commands';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { readData } from '../families/run';
import type { RunSession } from '../families/session';
import { t } from '../i18n';
import { setHint } from '../meta';
import { setField } from './fields';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface ApiOptions {
  data?: string;
  field?: string[];
  rawField?: string[];
}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** `users`, `/users`, `/api/v0/users?limit=5`: the path under /api/v0 and its query. */
export function splitPath(input: string): { path: string; query: Record<string, string> } {
  const [rawPath = '', search = ''] = input.split(/\?(.*)/s);
  const path = `/${rawPath.replace(/^\/+/, '').replace(/^api\/v0(\/|$)/, '')}`;
  return { path, query: Object.fromEntries(new URLSearchParams(search)) };
}

/** What a query string can carry: text as it is, anything else as JSON (as the commands send lists). */
const queryValue = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The request of `lintel api`: `--data` is the body (for GET: the query), `--field`/`--raw-field` set keys
 * over it. Anything that is not an object where one is needed is a usage error.
 */
export async function buildRequest(
  ctx: CliContext,
  method: string,
  pathArg: string,
  opts: ApiOptions,
): Promise<{ method: string; path: string; query: Record<string, string>; body?: unknown }> {
  const upper = method.toUpperCase();
  if (!(METHODS as readonly string[]).includes(upper))
    throw new CliError('bad_method', ExitCode.usage, { method, methods: [...METHODS] });
  const { path, query } = splitPath(pathArg);
  const hasFields = Boolean(opts.field?.length || opts.rawField?.length);
  let args: Record<string, unknown> | undefined;
  if (opts.data !== undefined) args = await readData(ctx, opts.data);
  if (hasFields) {
    args ??= {};
    for (const f of opts.rawField ?? []) setField(args, f, false);
    for (const f of opts.field ?? []) setField(args, f, true);
  }
  if (upper === 'GET') {
    for (const [k, v] of Object.entries(args ?? {})) if (v !== undefined) query[k] = queryValue(v);
    return { method: upper, path, query };
  }
  return { method: upper, path, query, ...(args ? { body: args } : {}) };
}

/**
 * `lintel api METHOD PATH`: one raw call with the stored session (or LINTEL_TOKEN), through the same client
 * as every command (a 401 refreshes the session once and tries again). The reply is printed as JSON; an
 * error reply's JSON body goes to stderr with the exit code of its status.
 */
export async function apiCall(
  ctx: CliContext,
  session: RunSession,
  method: string,
  path: string,
  opts: ApiOptions,
): Promise<void> {
  const req = await buildRequest(ctx, method, path, opts);
  const wrong = wrongMethod(req.method, req.path);
  if (wrong) throw wrong;
  const { api } = session.signedIn();
  const reply = await api.request(req.method, req.path, {
    query: req.query,
    ...(req.body !== undefined ? { body: req.body } : {}),
  });
  if (reply === null || reply === undefined || reply === '') return;
  ctx.stdout.write(typeof reply === 'string' ? `${reply}\n` : `${JSON.stringify(reply, null, 2)}\n`);
}

/** Does a concrete path (`/roles/5`) fit a route's pattern (`/roles/:id`)? */
const fits = (pattern: string, path: string) => {
  const a = pattern.split('/');
  const b = path.replace(/\/+$/, '').split('/');
  return a.length === b.length && a.every((part, i) => part.startsWith(':') || part === b[i]);
};

/**
 * A path the registry serves under other methods only: `POST /roles` is a usage error that says `/roles`
 * takes GET and PUT (a create is PUT), instead of the server's bare 404 (issue 25 item 10). A path the
 * registry does not know goes to the server as it is.
 */
export function wrongMethod(method: string, path: string): CliError | null {
  const commands = [...registry.values()].filter((c) => fits(c.http.path, path));
  if (!commands.length || commands.some((c) => c.http.method === method)) return null;
  const methods = [...new Set(commands.map((c) => c.http.method))].sort();
  const uses = commands.map((c) => `${c.http.method} ${c.http.path}: ${c.id}`).join(', ');
  return new CliError('method_not_served', ExitCode.usage, {
    method,
    path,
    methods: methods.join(', '),
    uses,
  });
}

/** The paths of the registry, for completion: `/users`, `/users/:id`, ... */
const knownPaths = () => [...new Set([...registry.values()].map((c) => c.http.path))].sort();

export function addApi(program: Command, ctx: CliContext, session: RunSession): void {
  program
    .command('api')
    .description(t('api.description'))
    .addArgument(setHint(new Argument('<method>', t('api.method')), { values: METHODS }))
    .addArgument(setHint(new Argument('<path>', t('api.path')), { values: knownPaths }))
    .addOption(new Option(`--data <${t('placeholders.data')}>`, t('api.options.data')))
    .addOption(
      new Option(`-F, --field <${t('placeholders.field')}>`, t('api.options.field')).argParser(collect),
    )
    .addOption(
      new Option(`-f, --raw-field <${t('placeholders.field')}>`, t('api.options.raw_field')).argParser(
        collect,
      ),
    )
    // the reply and its errors are JSON whatever is asked; the flag is there as on every command
    .addOption(new Option('--json', t('options.json')).default(true).hideHelp())
    .addHelpText('after', `\n${t('api.help')}`)
    .action((method: string, path: string, opts: ApiOptions) => apiCall(ctx, session, method, path, opts));
}
