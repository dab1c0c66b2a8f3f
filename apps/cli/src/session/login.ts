import type { ProjectSession } from '@lintel/core';
import { Option, type Command } from 'commander';
import { apiClient, DEFAULT_SERVER, execute, localServer, normaliseServer } from '../api';
import { ConfigStore, contextName } from '../config-store';
import { contextNames } from '../contexts/context';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { t } from '../i18n';
import { setHint } from '../meta';
import { printOutcome, type Outcome } from '../output';
import { ask, canPrompt, choose, readStdin } from '../prompt';

export interface LoginOptions {
  server?: string;
  login?: string;
  passwordStdin?: boolean;
  project?: string;
  context?: string;
}

/** A context name: what `context use` takes as one word (no spaces), at most 100 characters. */
const CONTEXT_NAME = /^[^\s]{1,100}$/;

/** Checks that a Lintel server answers there before asking for a password. */
async function checkServer(server: string): Promise<void> {
  try {
    await execute(apiClient(server), 'server.info', {});
  } catch {
    throw new CliError('not_a_server', ExitCode.error, { server });
  }
}

/** Ends sessions the login opened but the user did not pick (best effort). */
async function closeSessions(server: string, sessions: readonly ProjectSession[]): Promise<void> {
  await Promise.allSettled(sessions.map((s) => execute(apiClient(server, s), 'session.logout', {})));
}

async function pickSession(
  ctx: CliContext,
  server: string,
  sessions: ProjectSession[],
  interactive: boolean,
): Promise<ProjectSession> {
  if (sessions.length === 1) return sessions[0]!;
  if (!interactive) {
    await closeSessions(server, sessions);
    throw new CliError('project_required', ExitCode.usage, { projects: sessions.map((s) => s.project.uid) });
  }
  const index = await choose(
    ctx,
    t('login.project'),
    sessions.map((s) => `${s.project.name} (${s.project.uid})`),
  );
  await closeSessions(
    server,
    sessions.filter((_, i) => i !== index),
  );
  return sessions[index]!;
}

/**
 * Signs in and saves the session as the current context. Asks what the flags do not give when a person is
 * at the terminal; otherwise the flags and `--password-stdin` must give it all.
 */
export async function login(ctx: CliContext, opts: LoginOptions): Promise<Outcome> {
  if (opts.context !== undefined && !CONTEXT_NAME.test(opts.context))
    throw new CliError('bad_context_name', ExitCode.usage, { name: opts.context });
  const config = new ConfigStore(ctx.env);
  const previous = config.current()?.context;
  const interactive = canPrompt(ctx) && !opts.passwordStdin;

  const suggested = ctx.env.LINTEL_SERVER || previous?.server || localServer(ctx.env);
  const server = normaliseServer(
    opts.server ?? (interactive ? await ask(ctx, t('login.server'), { default: suggested }) : suggested),
  );
  await checkServer(server);

  const loginName =
    opts.login ??
    (interactive
      ? await ask(ctx, t('login.login'), {
          default: previous?.server === server ? previous.login : undefined,
        })
      : undefined);
  if (!loginName) throw new CliError('login_required', ExitCode.usage);

  let password: string;
  if (opts.passwordStdin) password = await readStdin(ctx);
  else if (interactive) password = await ask(ctx, t('login.password'), { hidden: true });
  else throw new CliError('password_required', ExitCode.usage);

  const reply = await execute(apiClient(server), 'session.login', {
    login: loginName,
    password,
    project: opts.project,
  });
  const session = await pickSession(ctx, server, reply.sessions, interactive);

  const context = opts.context ?? contextName(server, session.project.uid);
  config.save(context, {
    server,
    login: loginName,
    project: session.project,
    token: session.token,
    refresh: session.refresh,
  });
  return {
    data: { context, server, login: loginName, project: session.project },
    text: t('login.done', {
      login: loginName,
      project: session.project.name,
      uid: session.project.uid,
      server,
      name: context,
    }),
  };
}

export function addLogin(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description(t('login.description'))
    .option('--server <url>', t('login.options.server', { server: DEFAULT_SERVER }))
    .option('--login <name>', t('login.options.login'))
    .option('--password-stdin', t('login.options.password_stdin'))
    .option('--project <uid>', t('login.options.project'))
    .addOption(
      setHint(new Option(`--context <${t('placeholders.context')}>`, t('login.options.context')), {
        values: () => contextNames(ctx),
      }),
    )
    .option('--json', t('options.json'))
    .action(async (opts: LoginOptions & { json?: boolean }) =>
      printOutcome(ctx, Boolean(opts.json), await login(ctx, opts)),
    );
}
