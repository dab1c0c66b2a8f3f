import { z, type ZodObject, type ZodType } from 'zod';
import { ListQuery, listReply, type FieldKind, type FilterableField } from '@lintel/core';
import { defineCommand, type Command, type Gates } from './command';

/** A column of a family: how tables show it and how lists may filter and sort by it. */
export interface ResourceField extends FilterableField {
  /** locale key of the column title (namespace `commands`): `fields.<noun>.<name>` by default */
  labelKey?: string;
  /** shown when the user has not chosen columns */
  default?: boolean;
  /** a wide column (description, lists of names) */
  wide?: boolean;
  filterable?: boolean;
  sortable?: boolean;
}

export interface ResourceSpec<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
> {
  /** singular noun: command ids are `<noun>.list`, `<noun>.get`, ... */
  noun: N;
  /** REST segment in kebab case: `/api/v0/<segment>` */
  segment: string;
  record: Rec;
  create: Cre;
  update: Upd;
  fields: Record<string, ResourceField>;
  /** the permission gates of each kind of action (any one of the listed codes lets the caller try) */
  gates: { view: readonly string[]; create: readonly string[]; edit: readonly string[]; delete: readonly string[] };
  licence?: readonly string[];
  /** extra arguments of delete and delete-all (e.g. roles' `gently`) */
  deleteOptions?: ZodObject;
}

export const IdParam = z.object({ id: z.coerce.number().int().min(1).max(2_147_483_647) });
export const DeleteAllBody = z.object({ items: z.array(z.number().int().min(1).max(2_147_483_647)).min(1).max(1000) });
/** What a multi-delete did: the ids deleted, and for the others why not and what depends on them. */
export const DeleteAllReply = z.object({
  deleted: z.array(z.number().int()),
  not_deleted: z.array(
    z.object({ id: z.number().int(), reason: z.string(), dependencies: z.record(z.string(), z.number().int()).optional() }),
  ),
});
export const OkReply = z.object({ ok: z.literal(true) });
/** Create and update answer `data` with the entity and its id (spec part 2 §7). */
export const savedReply = <T extends ZodType>(record: T) => z.object({ data: record });

export interface Resource<N extends string, Rec extends ZodObject, Cre extends ZodObject, Upd extends ZodObject> {
  noun: N;
  segment: string;
  record: Rec;
  /** the body of create (PUT) and of update (PATCH, without the id) */
  createArgs: Cre;
  updateArgs: Upd;
  fields: Record<string, ResourceField>;
  filterable: Record<string, FilterableField>;
  sortable: string[];
  gates: ResourceSpec<N, Rec, Cre, Upd>['gates'];
  licence: readonly string[];
  commands: ReturnType<typeof familyCommands<N, Rec, Cre, Upd>>;
}

function gate(perms: readonly string[], licence: readonly string[] | undefined): Gates {
  return { anyPermission: perms, licence };
}

function familyCommands<N extends string, Rec extends ZodObject, Cre extends ZodObject, Upd extends ZodObject>(
  spec: ResourceSpec<N, Rec, Cre, Upd>,
) {
  const base = `/${spec.segment}`;
  const { noun, gates, licence } = spec;
  return {
    list: defineCommand({
      id: `${noun}.list` as `${N}.list`,
      http: { method: 'GET', path: base },
      args: ListQuery,
      result: listReply(spec.record),
      gates: gate(gates.view, licence),
    }),
    get: defineCommand({
      id: `${noun}.get` as `${N}.get`,
      http: { method: 'GET', path: `${base}/:id` },
      args: IdParam,
      result: spec.record,
      gates: gate(gates.view, licence),
    }),
    create: defineCommand({
      id: `${noun}.create` as `${N}.create`,
      http: { method: 'PUT', path: base },
      args: spec.create,
      result: savedReply(spec.record),
      gates: gate(gates.create, licence),
    }),
    update: defineCommand({
      id: `${noun}.update` as `${N}.update`,
      http: { method: 'PATCH', path: `${base}/:id` },
      args: spec.update.extend(IdParam.shape),
      result: savedReply(spec.record),
      gates: gate(gates.edit, licence),
    }),
    delete: defineCommand({
      id: `${noun}.delete` as `${N}.delete`,
      http: { method: 'DELETE', path: `${base}/:id` },
      argsIn: 'query',
      args: spec.deleteOptions ? IdParam.extend(spec.deleteOptions.shape) : IdParam,
      result: OkReply,
      gates: gate(gates.delete, licence),
    }),
    delete_all: defineCommand({
      id: `${noun}.delete_all` as `${N}.delete_all`,
      http: { method: 'POST', path: `${base}/delete-all` },
      args: spec.deleteOptions ? DeleteAllBody.extend(spec.deleteOptions.shape) : DeleteAllBody,
      result: DeleteAllReply,
      gates: gate(gates.delete, licence),
    }),
  };
}

/** Declares a whole generic family (spec part 2 §7): a schema, its fields and its gates. */
export function defineResource<N extends string, Rec extends ZodObject, Cre extends ZodObject, Upd extends ZodObject>(
  spec: ResourceSpec<N, Rec, Cre, Upd>,
): Resource<N, Rec, Cre, Upd> {
  const fields: Record<string, ResourceField> = {};
  for (const [name, f] of Object.entries(spec.fields)) fields[name] = { labelKey: `fields.${spec.noun}.${name}`, ...f };
  const filterable = Object.fromEntries(
    Object.entries(fields)
      .filter(([, f]) => f.filterable)
      .map(([name, f]) => [name, { kind: f.kind, values: f.values } satisfies FilterableField]),
  );
  return {
    noun: spec.noun,
    segment: spec.segment,
    record: spec.record,
    createArgs: spec.create,
    updateArgs: spec.update,
    fields,
    filterable,
    sortable: Object.entries(fields)
      .filter(([, f]) => f.sortable)
      .map(([name]) => name),
    gates: spec.gates,
    licence: spec.licence ?? [],
    commands: familyCommands(spec),
  };
}

export type AnyResource = Resource<string, ZodObject, ZodObject, ZodObject>;
export type { FieldKind, Command };
