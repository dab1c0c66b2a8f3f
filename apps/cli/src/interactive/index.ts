import { familyCommandId, pickerQuery, pickerRow } from '@lintel/commands';
import type { Profile } from '@lintel/core';
import { execute } from '../api';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { RunSession } from '../families/session';
import { t } from '../i18n';
import { printFailure } from '../output';
import { createProgram, run } from '../program';
import { paletteEntries } from './entries';
import { shellLine } from './asking';
import { openPalette, type Lookup } from './palette';

/** How many rows a step that asks for rows lists for what is typed (a search narrows it). */
const PICK_LIMIT = 50;

/** The palette needs a person at a terminal on both sides; CI=true means none, as for prompts. */
export function canOpenPalette(ctx: CliContext): boolean {
  const ci = ctx.env.CI && ctx.env.CI !== 'false' && ctx.env.CI !== '0';
  return Boolean(ctx.stdin.isTTY && ctx.stdout.isTTY && !ci);
}

/**
 * `lintel` alone at a terminal: the palette of the commands the signed-in user may run; the one picked runs
 * as if typed (its output, errors and exit code are the command's own). Not signed in: exit 3, as any command.
 */
export async function interactive(ctx: CliContext): Promise<number> {
  const session = new RunSession(ctx);
  let profile: Profile;
  let server: string;
  try {
    server = session.signedIn().server;
    profile = await session.profile();
  } catch (err) {
    return printFailure(ctx, false, err);
  }
  const program = createProgram(ctx, { session, profile });
  const entries = paletteEntries(program, profile);
  const host = (() => {
    try {
      return new URL(server).host;
    } catch {
      return server;
    }
  })();
  const { api } = session.signedIn();
  const lookup: Lookup = async (family, search) => {
    const reply = await execute(api, familyCommandId(family, 'list'), pickerQuery(search, 1, PICK_LIMIT));
    return reply.data.map((r) => pickerRow(family, r as Record<string, unknown>));
  };
  const header = {
    title: t('interactive.title'),
    detail: t('interactive.who', {
      login: profile.login,
      role: profile.role.name,
      project: profile.project.name,
      server: host,
    }),
  };
  let resumed: Parameters<typeof openPalette>[4];
  for (;;) {
    const picked = await openPalette(ctx, entries, header, lookup, resumed);
    if (picked.kind === 'quit') return ExitCode.ok;
    if (picked.kind === 'interrupt') return ExitCode.cancelled;
    ctx.stderr.write(`$ ${shellLine(picked.argv)}\n`);
    const failure: string[] = [];
    const code = await run(picked.argv, { ...ctx, stderr: teeWrites(ctx.stderr, failure) }, session);
    // a command that failed (the server refused a value, say) opens the palette again where it stood, with
    // what was typed and why it failed; done, cancelled or signed out ends it as before
    if (code === ExitCode.ok || code === ExitCode.cancelled || code === ExitCode.signedOut) return code;
    resumed = { at: picked.resume, problem: failure.join('').trim() || t('interactive.failed', { code }) };
  }
}

/** The stream, with what is written to it also kept in `into`. */
function teeWrites(stream: NodeJS.WriteStream, into: string[]): NodeJS.WriteStream {
  return Object.create(stream, {
    write: {
      value: (chunk: unknown, ...rest: unknown[]) => {
        into.push(String(chunk));
        return (stream.write as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
      },
    },
  }) as NodeJS.WriteStream;
}
