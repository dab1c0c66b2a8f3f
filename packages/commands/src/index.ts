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
import * as licence from './licence/licence.commands';
import * as reports from './reports/reports.commands';
import * as deviceExtras from './device/device.extras';
import * as deviceRemote from './device/device.remote';
import * as deviceEvent from './device-event/device-event.resource';
import * as acsEvent from './acs-event/acs-event.resource';
import * as notification from './notification/notification.commands';
import * as sip from './sip/sip.commands';
import * as backup from './backup/backup.commands';
import * as webhook from './webhook/webhook.resource';
import * as system from './system/system.commands';
import * as worker from './system/worker.commands';
import * as log from './system/log.commands';
import * as ipBlocking from './ip-blocking/ip-blocking.commands';
import * as settings from './settings/settings.commands';
import * as telephonySettings from './settings/telephony-settings.commands';
import * as whitelabel from './settings/whitelabel.commands';
import * as broker from './broker/broker.commands';
import * as mailTemplate from './mail-template/mail-template.commands';
import * as integration from './integration/integration.resource';
import * as call from './call/call.commands';
import * as door from './door/door.commands';
import * as identifierExtras from './identifier/identifier.extras';
import * as accessMatrix from './access-matrix/access-matrix.commands';
import * as guestAccess from './guest-access/guest-access.commands';
import { groupResource } from './group/group.resource';
import { userResource } from './user/user.resource';
import { roleResource } from './role/role.resource';
import { markerResource } from './marker/marker.resource';
import { domainTypeResource } from './domain-type/domain-type.resource';
import { deviceResource } from './device/device.resource';
import { sipNumberResource } from './sip-number/sip-number.resource';
import { webhookResource } from './webhook/webhook.resource';
import { forwardRuleResource } from './forward-rule/forward-rule.resource';
import { sipTrunkResource } from './sip-trunk/sip-trunk.resource';
import { integrationResource } from './integration/integration.resource';
import { scheduleResource } from './schedule/schedule.resource';
import { holidayResource } from './holiday/holiday.resource';
import { accessRuleResource } from './access-rule/access-rule.resource';
import { accessAreaResource } from './access-area/access-area.resource';
import { identifierResource } from './identifier/identifier.resource';
import type { Command } from './command';
import type { AnyResource } from './resource';
import { REF_FIELDS, type PickerFamily } from './refs';

export * from './command';
export * from './resource';
export * from './ui-vocabulary';
export * from './journal';
export * from './export';
export * from './refs';
export * from './upload';
export * from './args-schema';
export { ProfileBrand } from './profile/profile.commands';
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
export * from './sip-number/sip-number.resource';
export * from './forward-rule/forward-rule.resource';
export * from './sip-trunk/sip-trunk.resource';
export * from './audit-event/audit-event.resource';
export * from './seed/seed.commands';
export * from './licence/licence.commands';
export * from './reports/reports.commands';
export * from './device/device.resource';
export * from './device/device.extras';
export * from './device/device.remote';
export * from './device-event/device-event.resource';
export * from './acs-event/acs-event.resource';
export * from './notification/notification.commands';
export * from './sip/sip.commands';
export * from './backup/backup.commands';
export * from './webhook/webhook.resource';
export * from './system/system.commands';
export * from './system/worker.commands';
export * from './system/log.commands';
export * from './ip-blocking/ip-blocking.commands';
export * from './settings/settings.commands';
export * from './settings/telephony-settings.commands';
export * from './settings/whitelabel.commands';
export * from './broker/broker.commands';
export * from './mail-template/mail-template.commands';
export * from './integration/integration.resource';
export * from './openapi';
export * from './call/call.commands';
export * from './door/door.commands';
export * from './schedule/schedule.resource';
export * from './holiday/holiday.resource';
export * from './access-rule/access-rule.resource';
export * from './access-area/access-area.resource';
export * from './identifier/identifier.resource';
export * from './identifier/identifier.extras';
export * from './access-matrix/access-matrix.commands';
export * from './guest-access/guest-access.commands';

/** Every generic family, in menu order. */
export const resources = [
  userResource,
  roleResource,
  groupResource,
  deviceResource,
  markerResource,
  domainTypeResource,
  sipNumberResource,
  webhookResource,
  integrationResource,
  forwardRuleResource,
  sipTrunkResource,
  scheduleResource,
  holidayResource,
  accessRuleResource,
  accessAreaResource,
  identifierResource,
] as const;

/** A reference to a family no registry declares is a mistake of the declaration, refused as the registry loads. */
function assertRefFamilies(families: readonly AnyResource[]): void {
  for (const r of families)
    for (const [field, ref] of Object.entries(r.refs))
      if (!families.some((f) => f.noun === ref.family))
        throw new Error(
          `${r.noun}.refs.${field} names the family ${ref.family}, which is not in the registry`,
        );
}
assertRefFamilies(resources);

/**
 * Every module of commands: the one list the registry and its type both come from, so a module added
 * here is registered and typed at once (and one left out is neither).
 */
const modules = [
  session,
  profile,
  registration,
  server,
  userExtras,
  userImport,
  groupExtras,
  markerExtras,
  auditEvent,
  seed,
  licence,
  reports,
  deviceExtras,
  deviceRemote,
  deviceEvent,
  acsEvent,
  notification,
  sip,
  backup,
  webhook,
  system,
  worker,
  log,
  ipBlocking,
  settings,
  telephonySettings,
  whitelabel,
  broker,
  mailTemplate,
  integration,
  call,
  door,
  identifierExtras,
  accessMatrix,
  guestAccess,
  ...resources.map((r) => r.commands),
  ...resources.map((r) => r.relationCommands),
] as const;

// distributes over the union of modules (a plain `M[keyof M]` would keep only the keys they share)
type ValuesOf<M> = M extends unknown ? M[keyof M] : never;
type Declared = ValuesOf<(typeof modules)[number]>;
export type RegisteredCommand = Extract<Declared, Command>;
export type CommandId = RegisteredCommand['id'];
export type CommandById<Id extends CommandId> = Extract<RegisteredCommand, { id: Id }>;

const isCommand = (v: unknown): v is Command =>
  typeof v === 'object' && v !== null && 'id' in v && 'http' in v && 'run' in v;

/** The registry: every command, keyed by id. The palette, the CLI and the server's route table read this. */
export const registry: ReadonlyMap<string, Command> = new Map(
  [
    ...modules.flatMap((m) => Object.values(m) as unknown[]),
    ...resources.flatMap((r) => Object.values(r.commands)),
  ]
    .filter(isCommand)
    .map((c) => [c.id, c]),
);

/** The add and remove verbs of a family's many-to-many relations (`Resource.relationVerbs`). */
export function relationCommands(resource: AnyResource): Command[] {
  return resource.relationVerbs.flatMap((v) => [v.add, v.remove]);
}

/** Families a test declared in a fixture (never in the shipped registry): see `registerFixtureResource`. */
const fixtureResources: AnyResource[] = [];

/**
 * Test-only: adds a throwaway family's seven commands to the registry, as a fixture of tests/support. Returns
 * what takes them out again: a test file registers in its own process, but the suite's forks run file after
 * file (vitest's `isolate: false`), and the next file must find the registry as shipped.
 */
export function registerFixtureResource(resource: AnyResource): () => void {
  fixtureResources.push(resource);
  assertRefFamilies(allResources());
  const commands = [...Object.values(resource.commands), ...relationCommands(resource)];
  for (const c of commands) (registry as Map<string, Command>).set(c.id, c);
  return () => {
    // once: a second call finds the family gone and changes nothing
    const at = fixtureResources.indexOf(resource);
    if (at < 0) return;
    fixtureResources.splice(at, 1);
    for (const c of commands) (registry as Map<string, Command>).delete(c.id);
  };
}

/** Every family: the registry's and those a test declared in a fixture. */
export function allResources(): readonly AnyResource[] {
  return [...resources, ...fixtureResources];
}

/** Typed access to one command by id. */
export function getCommand<Id extends CommandId>(id: Id): CommandById<Id> {
  const cmd = registry.get(id);
  if (!cmd) throw new Error(`unknown command ${id}`);
  return cmd as CommandById<Id>;
}

type Family = (typeof resources)[number];
export type FamilyVerb = keyof Family['commands'];
/** The id of one verb of the generic families: `${noun}.list` for any family noun, typed as the union. */
export type FamilyCommandId<V extends FamilyVerb> = Family['commands'][V]['id'];

/**
 * A generic family's command id, looked up rather than spelled: `familyCommandId('role', 'list')` is
 * `'role.list'`, typed as the union of every family's list (no `as 'user.list'` cast at the call site).
 */
export function familyCommandId<V extends FamilyVerb>(noun: string, verb: V): FamilyCommandId<V> {
  const family: Family | undefined = resources.find((r) => r.noun === noun);
  if (!family) throw new Error(`no generic family ${noun}`);
  return (family.commands as Record<FamilyVerb, { id: FamilyCommandId<V> }>)[verb].id;
}

/** The family a command belongs to, if it is one of a generic family's seven or a relation's verbs. */
export function resourceOf(commandId: string) {
  return allResources().find((r) =>
    [...Object.values(r.commands), ...relationCommands(r)].some((c) => c.id === commandId),
  );
}

/** A family with pages (`ui`): its rows are picked by name in forms and the palette, never typed as ids. */
const isPickerFamily = (noun: string): noun is PickerFamily =>
  allResources().some((r) => r.noun === noun && r.ui !== undefined);

/**
 * The family whose ids an argument field of a command holds (`many`: a list of ids, else one id): `id` and
 * `items` at the top of the arguments name the command's own family's rows (`user.get`, `user.delete_all`);
 * anywhere else the field's name says (`role`, `domains`, `parent_id`).
 */
export function refFamilyOf(
  commandId: string,
  key: string,
  top: boolean,
  many: boolean,
): PickerFamily | undefined {
  if (top && key === (many ? 'items' : 'id')) {
    const noun = resourceOf(commandId)?.noun ?? commandId.slice(0, commandId.indexOf('.'));
    return isPickerFamily(noun) ? noun : undefined;
  }
  const ref = REF_FIELDS[key];
  return ref?.many === many ? ref.family : undefined;
}
export * from './download';
