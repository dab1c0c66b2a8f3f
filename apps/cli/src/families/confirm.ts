import type { ApiClient } from '@lintel/core';
import { getCommand, registry, type Command } from '@lintel/commands';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { t } from '../i18n';
import { ask, canPrompt } from '../prompt';
import { commandTitle } from './labels';

/** Commands that delete: every DELETE call, and the families' `delete-all`. */
export function isDeletion(cmd: Command): boolean {
  return cmd.http.method === 'DELETE' || cmd.id.endsWith('.delete_all');
}

/** `5 (Ann Smith)` when the family can get the record, else the id: what the question names. */
async function nameOf(api: ApiClient, noun: string, id: unknown): Promise<string> {
  const getId = `${noun}.get`;
  if (typeof id !== 'number' || !registry.has(getId)) return String(id);
  try {
    const record = (await getCommand(getId as 'user.get').run({ api }, { id })) as Record<string, unknown>;
    const name = record.name ?? record.login;
    return typeof name === 'string' && name ? `${id} (${name})` : String(id);
  } catch {
    return String(id);
  }
}

/** What the command deletes, in words: `user 5 (Ann Smith)`, `users 3, 4, 7`, or the command's title. */
async function whatIsDeleted(api: ApiClient, cmd: Command, args: Record<string, unknown>): Promise<string> {
  const noun = cmd.id.slice(0, cmd.id.indexOf('.'));
  if (args.id !== undefined) return `${noun} ${await nameOf(api, noun, args.id)}`;
  if (Array.isArray(args.items)) return `${noun}: ${args.items.join(', ')}`;
  return commandTitle(cmd);
}

const YES = /^(y|yes|д|да)$/i;

/**
 * A deletion asks first (issue 13, "undo where it is cheap"): at a terminal it names what it deletes and
 * waits for yes; in a script or a pipe, where nobody can answer, it refuses with exit 2 unless `--yes`.
 */
export async function confirmDeletion(
  ctx: CliContext,
  api: ApiClient,
  cmd: Command,
  args: Record<string, unknown>,
  yes: boolean,
): Promise<void> {
  if (yes || !isDeletion(cmd)) return;
  const what = await whatIsDeleted(api, cmd, args);
  if (!canPrompt(ctx)) throw new CliError('needs_yes', ExitCode.usage, { what });
  const answer = await ask(ctx, t('prompt.confirm_delete', { what }));
  if (!YES.test(answer.trim())) throw new CliError('not_deleted', ExitCode.cancelled, { what });
}
