import { getCommand, type CommandId } from '@lintel/commands';

/**
 * The locale key of a form's primary button, from what its command does: Create, Save, Delete, Show (a
 * read), or Run; never a bare "Approve" (issue 13 item 10).
 */
export function approveLabelKey(commandId: string): string {
  const verb = commandId.slice(commandId.indexOf('.') + 1);
  if (verb === 'create' || verb.startsWith('create_')) return 'forms.verb.create';
  if (verb === 'update' || verb.startsWith('update_') || verb.startsWith('set_')) return 'forms.verb.save';
  if (verb === 'delete' || verb === 'delete_all' || verb.endsWith('_delete')) return 'forms.verb.delete';
  if (getCommand(commandId as CommandId).http.method === 'GET') return 'forms.verb.show';
  return 'forms.verb.run';
}

/** A delete the palette offers (`<noun>.delete`, `<noun>.delete_all`): it asks, and waits with Undo. */
export const isFamilyDelete = (commandId: string): boolean => /^[a-z_]+\.delete(_all)?$/.test(commandId);
