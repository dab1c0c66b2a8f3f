import * as session from './session/session.commands';
import * as profile from './profile/profile.commands';
import * as registration from './registration/registration.commands';
import * as server from './server/server.commands';
import * as userExtras from './user/user.extras';
import * as userImport from './user/user.import';
import * as groupExtras from './group/group.extras';
import * as markerExtras from './marker/marker.extras';
import * as auditEvent from './audit-event/audit-event.resource';
import * as seed from './seed/seed.commands';
import { groupResource } from './group/group.resource';
import { userResource } from './user/user.resource';
import { roleResource } from './role/role.resource';
import { markerResource } from './marker/marker.resource';
import { domainTypeResource } from './domain-type/domain-type.resource';
import type { Command } from './command';
import { PickerFamilies, REF_FIELDS, type PickerFamily } from './refs';

export * from './command';
export * from './resource';
export * from './refs';
export * from './registration/registration.commands';
export * from './group/group.resource';
export * from './group/group.extras';
export * from './user/user.resource';
export * from './user/user.extras';
export * from './user/user.import';
export * from './user/user.export';
export * from './role/role.resource';
export * from './marker/marker.resource';
export * from './marker/marker.extras';
export * from './domain-type/domain-type.resource';
export * from './audit-event/audit-event.resource';
export * from './seed/seed.commands';

/** Every generic family, in menu order. */
export const resources = [userResource, roleResource, groupResource, markerResource, domainTypeResource] as const;

const modules = [session, profile, registration, server, userExtras, userImport, groupExtras, markerExtras, auditEvent, seed] as const;

type ValuesOf<M> = M[keyof M];
type Declared =
  | ValuesOf<typeof session>
  | ValuesOf<typeof profile>
  | ValuesOf<typeof registration>
  | ValuesOf<typeof server>
  | ValuesOf<typeof userExtras>
  | ValuesOf<typeof userImport>
  | ValuesOf<typeof groupExtras>
  | ValuesOf<typeof markerExtras>
  | ValuesOf<typeof auditEvent>
  | ValuesOf<typeof seed>
  | ValuesOf<(typeof resources)[number]['commands']>;
export type RegisteredCommand = Extract<Declared, Command>;
export type CommandId = RegisteredCommand['id'];
export type CommandById<Id extends CommandId> = Extract<RegisteredCommand, { id: Id }>;

const isCommand = (v: unknown): v is Command => typeof v === 'object' && v !== null && 'id' in v && 'http' in v && 'run' in v;

/** The registry: every command, keyed by id. The palette, the CLI and the server's route table read this. */
export const registry: ReadonlyMap<string, Command> = new Map(
  [...modules.flatMap((m) => Object.values(m) as unknown[]), ...resources.flatMap((r) => Object.values(r.commands))]
    .filter(isCommand)
    .map((c) => [c.id, c]),
);

/** Typed access to one command by id. */
export function getCommand<Id extends CommandId>(id: Id): CommandById<Id> {
  const cmd = registry.get(id);
  if (!cmd) throw new Error(`unknown command ${id}`);
  return cmd as CommandById<Id>;
}

/** The family a command belongs to, if it is one of a generic family's six. */
export function resourceOf(commandId: string) {
  return resources.find((r) => Object.values(r.commands).some((c) => c.id === commandId));
}

const isPickerFamily = (noun: string): noun is PickerFamily => (PickerFamilies as readonly string[]).includes(noun);

/**
 * The family whose ids an argument field of a command holds (`many`: a list of ids, else one id): `id` and
 * `items` at the top of the arguments name the command's own family's rows (`user.get`, `user.delete_all`);
 * anywhere else the field's name says (`role`, `domains`, `parent_id`).
 */
export function refFamilyOf(commandId: string, key: string, top: boolean, many: boolean): PickerFamily | undefined {
  if (top && key === (many ? 'items' : 'id')) {
    const noun = resourceOf(commandId)?.noun ?? commandId.slice(0, commandId.indexOf('.'));
    return isPickerFamily(noun) ? noun : undefined;
  }
  const ref = REF_FIELDS[key];
  return ref?.many === many ? ref.family : undefined;
}
