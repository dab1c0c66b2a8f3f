import { getCommand, resources, type CommandId } from '@lintel/commands';
import { familyCommandPages, familyEditPages } from '../families/family-pages';
import { describeError } from '../api/errors';
import { pushAlert } from '../alerts/alerts';
import { takesArguments, nounOf } from '../forms/fields';
import { i18next } from '../i18n';
import { signOut } from '../session/session';
import { confirmAction, openCommandForm, openDialog } from './dialogs';
import { execute } from './execute';
import { rememberRecent } from './recent';
import { commandTitle } from './titles';

type Navigate = (to: string) => void;

/** Commands whose result is a page of the console: the palette opens the page (`<noun>.list`: its list page). */
const COMMAND_PAGES: Record<string, string> = {
  ...familyCommandPages(resources),
  'group.list': '/groups?view=table',
  'group.tree': '/groups?view=tree',
  'group.full': '/groups?view=table',
  'audit_event.list': '/audit-events',
  'licence.list': '/licenses',
  'licence.usage': '/licenses',
  'profile.get': '/profile',
  'profile.update': '/profile',
};

/** Families with an edit page (from their declarations): choosing a row (or `<noun>.get`) opens it. */
export const EDIT_PAGES: Record<string, (id: number) => string> = familyEditPages(resources);

/** Screens that start a command their own way (the wide group generation dialog), by command id. */
const starters = new Map<string, () => void>();
export function registerStarter(commandId: CommandId, start: () => void): void {
  starters.set(commandId, start);
}

const tr = (key: string, params?: Record<string, unknown>): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);

function afterForm(id: string, result: unknown, navigate: Navigate) {
  if (id === 'profile.delete') {
    // the account is gone: so is the session
    void signOut().then(() => navigate('/login'));
    return;
  }
  const cmd = getCommand(id as CommandId);
  const edit = EDIT_PAGES[nounOf(id)];
  if (id.endsWith('.get') && edit && result && typeof result === 'object' && 'id' in result) {
    navigate(edit(Number((result as { id: number }).id)));
    return;
  }
  if (cmd.http.method === 'GET') openDialog({ kind: 'result', commandId: id, result });
}

/**
 * Starts a command chosen in the palette or by a key: a page when one shows it, its form when it takes
 * arguments, otherwise it runs (a write asks first) and its answer is shown.
 */
export async function startCommand(id: string, navigate: Navigate): Promise<void> {
  rememberRecent({ kind: 'command', id });
  const custom = starters.get(id);
  if (custom) return custom();
  const page = COMMAND_PAGES[id];
  if (page) return navigate(page);
  if (id === 'session.logout') {
    await signOut();
    return navigate('/login');
  }
  if (takesArguments(id)) {
    openCommandForm(id, {}, { onDone: (r) => afterForm(id, r, navigate) });
    return;
  }
  const cmd = getCommand(id as CommandId);
  if (cmd.http.method !== 'GET') {
    const ok = await confirmAction({
      title: commandTitle(id),
      message: tr('palette.confirm_run', { title: commandTitle(id) }),
      approveLabel: tr('forms.approve'),
    });
    if (!ok) return;
  }
  try {
    const result = await execute(id as CommandId, {}, 'palette');
    openDialog({ kind: 'result', commandId: id, result });
  } catch (err) {
    pushAlert('error', describeError(err).message);
  }
}
