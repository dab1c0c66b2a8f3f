import { getCommand, resourceOf, type CommandId } from '@lintel/commands';
import { describeArgs, Families, type Family, type FieldSpec } from './schema';

/** Field names that name another family's ids, wherever they appear (spec part 1 §2.4 "Pickers"). */
const REF_FIELDS: Record<string, Family> = {
  role: 'role',
  available_roles: 'role',
  domains: 'group',
  parent_id: 'group',
  markers: 'marker',
  domain_type_id: 'domain_type',
  users: 'user',
  user_id: 'user',
};

const SECRET_FIELDS = new Set(['password', 'new_password', 'old', 'new', 'user_password']);
const MULTILINE_FIELDS = new Set(['description']);

/**
 * Fields no form shows: paging and filters of list commands (tables and pickers do that), and fields whose
 * family the API does not have yet (a user's SIP number: virtual numbers come with telephony).
 */
const HIDDEN_FIELDS = new Set(['page', 'limit', 'filters', 'match', 'sort', 'profile.sip_number_id']);

/** The noun of a command id: `user.create` → `user`, `group.save_generated` → `group`. */
export function nounOf(commandId: string): string {
  return commandId.slice(0, commandId.indexOf('.'));
}

function familyOfNoun(noun: string): Family | undefined {
  return (Families as readonly string[]).includes(noun) ? (noun as Family) : undefined;
}

function resolve(fields: FieldSpec[], own: Family | undefined, top: boolean): FieldSpec[] {
  return fields
    .filter((f) => f.type !== 'unknown' && !HIDDEN_FIELDS.has(f.path))
    .map((f) => {
      const spec: FieldSpec = { ...f };
      // `id` and `items` of a family's command name that family's rows; elsewhere, the field name says
      const family = top && (f.key === 'id' || f.key === 'items') ? own : REF_FIELDS[f.key];
      if (family && f.type === 'number') Object.assign(spec, { type: 'id', family });
      if (family && f.type === 'numbers') Object.assign(spec, { type: 'ids', family });
      if (SECRET_FIELDS.has(f.key) && f.type === 'text') spec.secret = true;
      if (MULTILINE_FIELDS.has(f.key) && f.type === 'text') spec.multiline = true;
      if (spec.fields) spec.fields = resolve(spec.fields, own, false);
      return spec;
    });
}

const cache = new Map<string, FieldSpec[]>();

/** The form fields of a command: its argument schema, with pickers and passwords named. */
export function commandFields(commandId: CommandId | string): FieldSpec[] {
  let fields = cache.get(commandId);
  if (!fields) {
    const cmd = getCommand(commandId as CommandId);
    const own = familyOfNoun(resourceOf(commandId)?.noun ?? nounOf(commandId));
    fields = resolve(describeArgs(cmd.args), own, true);
    cache.set(commandId, fields);
  }
  return fields;
}

/** True when the command takes arguments a person fills in (otherwise the palette just runs it). */
export function takesArguments(commandId: string): boolean {
  return commandFields(commandId).length > 0;
}

/** The locale key of a field's label: `commands:fields.<noun>.<field>`. */
export function fieldLabelKey(commandId: string, field: Pick<FieldSpec, 'key'>): string {
  return `commands:fields.${nounOf(commandId)}.${field.key}`;
}
