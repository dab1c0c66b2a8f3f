import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { familyCommandId, getCommand, type CommandId } from '@lintel/commands';
import { describeError, validateArgs, type Failure } from '../api/errors';
import { execute } from '../commands/execute';
import { runCommand } from '../api/client';
import { commandFields, nounOf } from './fields';
import type { FieldSpec } from './schema';
import { setAt, shapeArgs, toFormValues, type FormValue, type FormValues } from './shape';

type Rec = Record<string, unknown>;

export interface CommandFormOptions {
  /** the stored record an update starts from */
  record?: Rec | null;
  /** arguments fixed by the screen (e.g. the id of the row being edited): not shown, always sent */
  fixed?: Rec;
  /** values to start a create with (e.g. the parent group chosen in the tree) */
  preset?: Rec;
  /** password fields that hold a stored value (they start as the dummy placeholder) */
  storedPasswords?: string[];
  /** fields left out of this form */
  omit?: readonly string[];
}

/** Related rows of a record by field name (`role: {id, name}`, `domains: [{id, name}]`), for pickers' chips. */
function knownRefs(
  fields: readonly FieldSpec[],
  record: Rec | null | undefined,
  prefix = '',
): Record<string, { id: number; name: string }[]> {
  const out: Record<string, { id: number; name: string }[]> = {};
  if (!record) return out;
  for (const f of fields) {
    const v = record[f.key];
    const path = prefix ? `${prefix}.${f.key}` : f.key;
    const refs = (Array.isArray(v) ? v : [v]).filter(
      (x): x is { id: number; name: string } => !!x && typeof x === 'object' && 'id' in x && 'name' in x,
    );
    if ((f.type === 'id' || f.type === 'ids') && refs.length) out[path] = refs;
    if (f.type === 'object' && v && typeof v === 'object')
      Object.assign(out, knownRefs(f.fields ?? [], v as Rec, path));
  }
  // a group's parent comes as `parent: {id, name}` beside `parent_id`
  if (record.parent && typeof record.parent === 'object' && fields.some((f) => f.key === 'parent_id'))
    out[prefix ? `${prefix}.parent_id` : 'parent_id'] = [record.parent as { id: number; name: string }];
  return out;
}

/**
 * The state of a generated form: values, the failure of the last approve, and `submit`, which shapes the
 * values (forms/shape.ts), checks them with the command's own schema (a failure is "check fields data" with
 * the fields marked, and nothing is sent), runs the command, and keeps the form open with the catalogue
 * message and the server's field marks when the server refuses.
 */
export function useCommandForm(commandId: CommandId | string, options: CommandFormOptions = {}) {
  const { record } = options;
  // screens pass these inline: follow their content, not their identity
  const fixedKey = JSON.stringify(options.fixed ?? {});
  const presetKey = JSON.stringify(options.preset ?? {});
  const omitKey = JSON.stringify(options.omit ?? []);
  const storedKey = JSON.stringify(options.storedPasswords ?? []);
  const fixed = useMemo(() => JSON.parse(fixedKey) as Rec, [fixedKey]);
  const mode: 'create' | 'update' = /\.update$/.test(commandId) || record ? 'update' : 'create';
  const fields = useMemo(() => {
    const skip = new Set([...Object.keys(JSON.parse(fixedKey) as Rec), ...(JSON.parse(omitKey) as string[])]);
    const shown = commandFields(commandId).filter((f) => !skip.has(f.key));
    // an update chosen in the palette starts with the row (its values then load): the id picker comes first,
    // where the dialog puts the cursor, not after the fields it fills
    const pick = mode === 'update' ? shown.findIndex((f) => f.key === 'id' && f.type === 'id') : -1;
    return pick > 0 ? [shown[pick]!, ...shown.slice(0, pick), ...shown.slice(pick + 1)] : shown;
  }, [commandId, fixedKey, omitKey, mode]);

  const start = useCallback(
    (rec: Rec | null | undefined) =>
      toFormValues(
        fields,
        { ...(rec ?? {}), ...(JSON.parse(presetKey) as Rec) },
        JSON.parse(storedKey) as string[],
      ),
    [fields, presetKey, storedKey],
  );
  const [loaded, setLoaded] = useState<Rec | null>(record ?? null);
  const [initial, setInitial] = useState<FormValues>(() => start(record));
  const [values, setValues] = useState<FormValues>(initial);
  const [failure, setFailure] = useState<Failure | null>(null);
  /** grows with each refused approve: screens move the cursor to the first marked field then, not as marks clear */
  const [refusals, setRefusals] = useState(0);
  const [busy, setBusy] = useState(false);
  const running = useRef(false);

  // the record arrived (or changed): start over from it
  useEffect(() => {
    if (!record) return;
    const v = start(record);
    setLoaded(record);
    setInitial(v);
    setValues(v);
  }, [record, start]);

  // an update chosen in the palette: picking the row loads it into the form
  const ownId = typeof values.id === 'number' ? values.id : null;
  const loadsOnPick = mode === 'update' && !record && fields.some((f) => f.key === 'id' && f.type === 'id');
  useEffect(() => {
    if (!loadsOnPick || ownId === null) return;
    let live = true;
    runCommand(familyCommandId(nounOf(commandId), 'get'), { id: ownId })
      .then((rec) => {
        if (!live) return;
        const v = { ...start(rec as unknown as Rec), id: ownId };
        setLoaded(rec as unknown as Rec);
        setInitial(v);
        setValues(v);
      })
      .catch((err: unknown) => live && setFailure(describeError(err, commandId)));
    return () => {
      live = false;
    };
  }, [loadsOnPick, ownId, commandId, start]);

  const set = useCallback((path: string, value: FormValue) => {
    setValues((v) => setAt(v, path, value));
    setFailure((f) => {
      if (!f) return f;
      const marked = Object.keys(f.fields).filter((k) => k === path || k.startsWith(`${path}.`));
      if (!marked.length) return f;
      const rest = { ...f.fields };
      for (const k of marked) delete rest[k];
      return { ...f, fields: rest };
    });
  }, []);

  /** The arguments the form would send now. */
  const args = useCallback((): Rec => {
    const shaped = shapeArgs(fields, values, mode, mode === 'update' ? initial : undefined);
    // the id picked in the palette's update form is always sent
    if (mode === 'update' && typeof values.id === 'number') shaped.id = values.id;
    return { ...shaped, ...fixed };
  }, [fields, values, mode, initial, fixed]);

  /** Approve: shape, check, run. Resolves to the result, or null when it failed (the form shows why). */
  const submit = useCallback(async (): Promise<unknown> => {
    if (running.current) return null;
    const a = args();
    const invalid = validateArgs(commandId as CommandId, a as never);
    if (invalid) {
      setFailure(invalid);
      setRefusals((n) => n + 1);
      return null;
    }
    running.current = true;
    setBusy(true);
    setFailure(null);
    try {
      return await execute(commandId as CommandId, a, 'ui');
    } catch (err) {
      setFailure(describeError(err, commandId));
      setRefusals((n) => n + 1);
      return null;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, [args, commandId]);

  const dirty = JSON.stringify(values) !== JSON.stringify(initial);
  const command = getCommand(commandId as CommandId);
  const known = useMemo(() => knownRefs(fields, loaded), [fields, loaded]);

  return {
    command,
    fields,
    values,
    set,
    setValues,
    failure,
    setFailure,
    refusals,
    busy,
    submit,
    args,
    mode,
    dirty,
    known,
    loaded,
  };
}

export type CommandFormState = ReturnType<typeof useCommandForm>;
