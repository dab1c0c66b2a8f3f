import { getCommand, refFamilyOf, type CommandId } from '@lintel/commands';
import { describeArgs, type FieldSpec } from './schema';

/** The noun of a command id: `user.create` → `user`, `group.save_generated` → `group`. */
export function nounOf(commandId: string): string {
  return commandId.slice(0, commandId.indexOf('.'));
}

function resolve(fields: FieldSpec[], commandId: string, top: boolean): FieldSpec[] {
  return (
    fields
      // fields no form shows carry `hidden` on their schema (paging and filters, a user's SIP number)
      .filter((f) => f.type !== 'unknown' && !f.hidden)
      .map((f) => {
        const spec: FieldSpec = { ...f };
        if (f.type === 'number' || f.type === 'numbers') {
          const family = refFamilyOf(commandId, f.key, top, f.type === 'numbers');
          if (family) Object.assign(spec, { type: f.type === 'number' ? 'id' : 'ids', family });
        }
        if (spec.fields) spec.fields = resolve(spec.fields, commandId, false);
        return spec;
      })
  );
}

const cache = new Map<string, FieldSpec[]>();

/** The form fields of a command: its argument schema, with pickers and passwords named. */
export function commandFields(commandId: CommandId | string): FieldSpec[] {
  let fields = cache.get(commandId);
  if (!fields) {
    fields = resolve(describeArgs(getCommand(commandId as CommandId).args), commandId, true);
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
