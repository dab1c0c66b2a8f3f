import { z, type ZodObject, type ZodType } from 'zod';
import {
  ListQuery,
  listReply,
  type FieldKind,
  type FilterableField,
  type LicenceFlag,
  type PermissionCode,
  registerLimitKey,
} from '@lintel/core';
import { defineCommand, type Command, type Gates } from './command';
import { declarePicker, Id, type PickerHints } from './refs';
import type { IconName, MenuSection } from './ui-vocabulary';
import { defineExport, ListExportQuery } from './export';

/** A column of a family: how tables show it and how lists may filter and sort by it. */
export interface ResourceField extends FilterableField {
  /** locale key of the column title (namespace `commands`): `fields.<noun>.<name>` by default */
  labelKey?: string;
  /** shown when the user has not chosen columns */
  default?: boolean;
  /** a wide column (description, lists of names) */
  wide?: boolean;
  /** a number of seconds after local midnight: tables show it as a time of day, `09:00` */
  timeOfDay?: boolean;
  filterable?: boolean;
  sortable?: boolean;
  /**
   * an enum whose value is a state people scan for (a device's `online`): each value's tone, and tables show
   * the value as a badge of that colour (its words are `web:values.<field>.<value>`, as for every enum)
   */
  tones?: Readonly<Partial<Record<string, Tone>>>;
}

/** The colour of a state's badge: good (green), bad (red), warn (amber), neutral (grey). */
export type Tone = 'good' | 'bad' | 'warn' | 'neutral';

/** How far a permission reaches over a family's rows (spec part 2 §6); the server turns it into SQL. */
export type ScopeKind = 'all' | 'descendants' | 'domain' | 'own';

/**
 * Where a family sits in the console: its list page's path (add and edit pages are `<path>/add` and
 * `<path>/:id/edit`), its icon and menu section, the `g` key that opens it. The web's routes, menu and
 * palette read this; a family without `ui` has no page (its commands still run from the palette).
 */
export interface ResourceUi {
  path: string;
  /** an icon of the console's set (`ui-vocabulary.ts`): a name it does not draw does not compile */
  icon: IconName;
  /** the side menu's section of its list page */
  section: MenuSection;
  goKey?: string;
  /**
   * locale keys of the pages' texts: `<key>.title`, `.add`, `.add_title`, `.edit_title`, `.created`; default
   * `commands:pages.<noun>`, beside the family's command labels and field names
   */
  key?: string;
  /** whether the palette finds rows of the family by name (default true) */
  search?: boolean;
}

/** The permission gates of each kind of action (any one of the listed codes lets the caller try). */
export interface ResourceGates {
  view: readonly PermissionCode[];
  create: readonly PermissionCode[];
  edit: readonly PermissionCode[];
  delete: readonly PermissionCode[];
}

/**
 * How far each permission of an action reaches: its keys are permission codes of the action's gate (a code
 * the gate does not list, or a typo, does not compile), so scopes and gates cannot disagree.
 */
export type ScopeReach<P extends PermissionCode = PermissionCode> = Readonly<Partial<Record<P, ScopeKind>>>;

/**
 * A many-to-many reference stored in a join table: one row `(owner, column)` per related id, `owner` holding
 * this family's row id and `column` the other family's. Declare the table with `on delete cascade` on both.
 */
export interface JoinTable {
  table: string;
  /** the join table's column holding this family's row id */
  owner: string;
  /** the join table's column holding the related family's id */
  column: string;
}

/**
 * An argument field holding ids of another family. `many: false` is one id, stored in the row's column of the
 * argument's name; `many: true` a list the family's own store keeps; `many: {table, owner, column}` a list
 * stored in that join table, which the generic store then loads into the record, filters with `has`, writes
 * on create and update (the list replaces the stored one) and checks (each id a row of the project).
 */
export interface ResourceRef<F extends string = string> {
  family: F;
  many: boolean | JoinTable;
  /**
   * the record field that shows the related rows (default the argument's name): a list of ids, or of objects
   * (`{id, name}`, a marker's `{id, name, color}`) read from the related family's table by the record's schema
   */
  record?: string;
}

/**
 * What places a row for the scopes: one group column (`group`), or the many-to-many groups relation (`groups`:
 * the name of a `refs` entry to the group family with a join table), and the creator's column.
 */
export interface ResourceOwner<A extends string = string> {
  /** an argument field (and the row's column) holding the row's group */
  group?: A;
  /** an argument field declared in `refs` as many-to-many to groups */
  groups?: A;
  /** the row's column of its maker (not an argument: the server sets it) */
  creator?: string;
}

/**
 * Who may see and change which rows: the columns that place a row (`owner.group`: the group it belongs to,
 * `owner.creator`: the user who made it; without a group column a row is where its maker's groups are), and
 * for each kind of action which permission reaches how far. Without it every gate permission reaches the
 * whole project. `create` scopes check the group a new row is placed in.
 */
export interface ResourceScopes<G extends ResourceGates = ResourceGates, A extends string = string> {
  owner?: ResourceOwner<A>;
  view?: ScopeReach<G['view'][number]>;
  create?: ScopeReach<G['create'][number]>;
  edit?: ScopeReach<G['edit'][number]>;
  delete?: ScopeReach<G['delete'][number]>;
  /** people may always see the rows they made (spec part 2 §6), default true when there is a creator */
  ownAlwaysVisible?: boolean;
}

/**
 * A counted limit: a group's maximums (`license_limits.<feature>`, spec part 1 §3) may cap how many rows of
 * this family its subtree holds; declaring the limit makes `<feature>` a key a group's maximums accept. The rows are placed by `scopes.owner.group` (users by their
 * groups). Creates and moves into a capped group are counted under a lock, so parallel calls cannot pass it.
 */
export interface CountedLimit {
  per: 'group';
  feature: string;
}

/**
 * A live state of a family's rows (issue 25 item 3): an event the server already sends on the websocket
 * that changes one row, and how. Every table of the family (the generic table) listens for it and patches
 * the row on screen in place — a device's `status` from `DeviceStatusChangedEvent` — so a list follows its
 * rows without a reload; a `resync` of the topic reloads the list. The server's events test checks each rule
 * against the declared events (the event exists on that topic, its payload has the keys named here).
 */
export interface LiveRule<Rec extends ZodObject = ZodObject> {
  /** the websocket topic the event is sent on */
  topic: string;
  /** the event's type (`DeviceStatusChangedEvent`) */
  event: string;
  /** the payload's key holding the id of the row it changes */
  id: string;
  /** record field ← the payload's key whose value it takes */
  set: Readonly<Partial<Record<RecordKey<Rec>, string>>>;
}

/** A field of the record (compile-time check of the declaration's field names). */
export type RecordKey<Rec extends ZodObject> = keyof Rec['shape'] & string;

/** A field of the record, or of an object field of the record (`phone` of a user's `profile`). */
export type FieldKey<Rec extends ZodObject> =
  | RecordKey<Rec>
  | {
      [K in RecordKey<Rec>]: Rec['shape'][K] extends ZodObject ? RecordKey<Rec['shape'][K]> : never;
    }[RecordKey<Rec>];

export interface ResourceSpec<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
  G extends ResourceGates = ResourceGates,
> {
  /** singular noun: command ids are `<noun>.list`, `<noun>.get`, ... */
  noun: N;
  /** REST segment in kebab case: `/api/v0/<segment>` */
  segment: string;
  record: Rec;
  create: Cre;
  update: Upd;
  /**
   * the record's fields as lists, filters and forms show them, or a field of an object it holds (a user's
   * `phone`, in his `profile`): a key the record lacks does not compile
   */
  fields: Partial<Record<FieldKey<Rec>, ResourceField>>;
  /** the permission gates of each kind of action (any one of the listed codes lets the caller try) */
  gates: G;
  licence?: readonly LicenceFlag[];
  /** extra arguments of delete and delete-all (e.g. roles' `gently`) */
  deleteOptions?: ZodObject;
  /** pages, menu entry and palette entries of the console */
  ui?: ResourceUi;
  /**
   * the table of a plain family: with it the server stores the family as declared (its generic store, no
   * handler code); a family whose store does more leaves it out and gives its own in apps/server/src/handlers
   */
  table?: string;
  scopes?: ResourceScopes<G, RecordKey<Cre>>;
  /** counted limits on this family's rows (see CountedLimit) */
  limits?: readonly CountedLimit[];
  /**
   * Each row uses one unit of this counted feature of the licence in force (spec part 1 §3: a licence's
   * `license_count` of sip, mobile_app or ukey2, times its units per licence): a create past the capacity is
   * `limit_exceeded` with used and max. Virtual numbers count against SIP.
   */
  licenceCount?: 'sip' | 'mobile_app' | 'ukey2';
  /**
   * write-only fields of the record (a trunk's or a webhook's secret): the record shows the dummy placeholder
   * when one is stored and null when none — never the value —, and a write that sends the placeholder back
   * keeps the stored one (spec part 2 §5). Their columns hold the value; keep them out of filters and search.
   */
  secrets?: readonly RecordKey<Rec>[];
  /** fields unique in a project (of the record): a duplicate is `value_not_unique` naming the field */
  unique?: readonly RecordKey<Rec>[];
  /** fields of the record a list's `search` looks in (default `name`) */
  search?: readonly RecordKey<Rec>[];
  /** argument fields (of the create) that hold ids of another family (the pickers of forms and the CLI palette) */
  refs?: Readonly<Partial<Record<RecordKey<Cre>, ResourceRef>>>;
  /** how a picker row of this family reads: its secondary line and colour */
  picker?: PickerHints;
  /** the live states of its rows: events that patch a row of every list of the family (see LiveRule) */
  live?: readonly LiveRule<Rec>[];
}

export const IdParam = z.object({ id: z.coerce.number().int().min(1).max(2_147_483_647) });
export const DeleteAllBody = z.object({
  items: z.array(z.number().int().min(1).max(2_147_483_647)).min(1).max(1000),
  /**
   * check each item as the delete would, and keep them all: the reply says what would go and why the rest
   * would stay, so a console can say it before it asks (a role held by users, a group with members)
   */
  dry_run: z
    .boolean()
    .optional()
    .meta({ hidden: 'the console asks it itself before its question; the CLI and scripts give it' }),
});
/** What a multi-delete did: the ids deleted, and for the others why not and what depends on them. */
export const DeleteAllReply = z.object({
  deleted: z.array(z.number().int()),
  not_deleted: z.array(
    z.object({
      id: z.number().int(),
      reason: z.string(),
      dependencies: z.record(z.string(), z.number().int()).optional(),
    }),
  ),
});
export const OkReply = z.object({ ok: z.literal(true) });
/** Create and update answer `data` with the entity and its id (spec part 2 §7). */
export const savedReply = <T extends ZodType>(record: T) => z.object({ data: record });

export interface Resource<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
  Keys extends string = string,
> {
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
  licence: readonly LicenceFlag[];
  ui?: ResourceUi;
  table?: string;
  scopes?: ResourceScopes;
  limits: readonly CountedLimit[];
  licenceCount?: 'sip' | 'mobile_app' | 'ukey2';
  unique: readonly string[];
  secrets: readonly string[];
  search: readonly string[];
  refs: Readonly<Record<string, ResourceRef>>;
  live: readonly LiveRule[];
  commands: ReturnType<typeof familyCommands<N, Rec, Cre, Upd>>;
  /**
   * the add and remove verbs of each many-to-many relation (`refs` with a join table), derived from the
   * declaration: see `relationVerbs`. Kept beside `commands`, whose keys the command ids' type is built from.
   */
  relationVerbs: readonly RelationVerbs[];
  /** the same verbs keyed `add_<key>` / `remove_<key>`, typed: the registry's command ids include them */
  relationCommands: RelationCommands<N, Rec, Keys>;
}

/** The most ids one add or remove of a relation takes (more is the schema's `too_big` on the field). */
export const MAX_RELATION_IDS = 1000;

/**
 * The two verbs a many-to-many relation `key` of a family gets from its declaration:
 * `<noun>.add_<key>` (`POST /<segment>/:id/<key>/add {<key>: ids}`) puts the ids in the row's list, and
 * `<noun>.remove_<key>` (`…/remove`) takes them out; both answer the record as update does, are gated as
 * the family's update and change nothing when the list already is so (docs/decisions.md, "Relation verbs").
 */
export interface RelationVerbs {
  key: string;
  ref: ResourceRef & { many: JoinTable };
  add: Command;
  remove: Command;
}

/** The arguments of a relation's add or remove: the row's id and the ids to add or remove. */
const relationArgs = <K extends string>(key: K) =>
  IdParam.extend({ [key]: z.array(Id).min(1).max(MAX_RELATION_IDS) } as {
    [P in K]: z.ZodArray<typeof Id>;
  }).strict();

/** The keys of `refs` declared with a join table. */
export type JoinKeys<Refs> = {
  [K in keyof Refs]-?: NonNullable<Refs[K]> extends { many: JoinTable } ? K : never;
}[keyof Refs] &
  string;

/**
 * The relation verbs of a family's join relations `Keys`, typed with their ids (any family's: commands
 * keyed by verb).
 */
export type RelationCommands<
  N extends string,
  Rec extends ZodObject,
  Keys extends string,
> = string extends Keys ? Readonly<Record<string, Command>> : TypedRelationCommands<N, Rec, Keys>;
type TypedRelationCommands<N extends string, Rec extends ZodObject, Keys extends string> = {
  [K in Keys as `add_${K}`]: Command<
    ReturnType<typeof relationArgs<K>>,
    ReturnType<typeof savedReply<Rec>>,
    `${N}.add_${K}`
  >;
} & {
  [K in Keys as `remove_${K}`]: Command<
    ReturnType<typeof relationArgs<K>>,
    ReturnType<typeof savedReply<Rec>>,
    `${N}.remove_${K}`
  >;
};

/** `time_rules` → `time-rules`: a relation's word in a path. */
const kebab = (s: string) => s.replace(/_/g, '-');

function relationVerbs<N extends string, Rec extends ZodObject, Cre extends ZodObject, Upd extends ZodObject>(
  spec: ResourceSpec<N, Rec, Cre, Upd>,
): RelationVerbs[] {
  const refs = (spec.refs ?? {}) as Readonly<Record<string, ResourceRef>>;
  return Object.entries(refs).flatMap(([key, ref]) => {
    if (typeof ref.many !== 'object') return [];
    const verb = (v: 'add' | 'remove') =>
      defineCommand({
        id: `${spec.noun}.${v}_${key}`,
        http: { method: 'POST', path: `/${spec.segment}/:id/${kebab(key)}/${v}` },
        args: relationArgs(key),
        result: savedReply(spec.record),
        gates: gate(spec.gates.edit, spec.licence),
      }) as unknown as Command;
    return [{ key, ref: ref as ResourceRef & { many: JoinTable }, add: verb('add'), remove: verb('remove') }];
  });
}

function gate(perms: readonly PermissionCode[], licence: readonly LicenceFlag[] | undefined): Gates {
  return { anyPermission: perms, licence };
}

function familyCommands<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
>(spec: ResourceSpec<N, Rec, Cre, Upd>) {
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
    /** every row the list would show, streamed (NDJSON or CSV): see export.ts */
    export: defineExport({
      id: `${noun}.export` as `${N}.export`,
      path: `${base}/export`,
      args: ListExportQuery,
      item: spec.record,
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

/** A family declared with its table: the server stores it as declared (see `ResourceSpec.table`). */
export type PlainResource<
  N extends string = string,
  Rec extends ZodObject = ZodObject,
  Cre extends ZodObject = ZodObject,
  Upd extends ZodObject = ZodObject,
  Keys extends string = string,
> = Resource<N, Rec, Cre, Upd, Keys> & { table: string };

/** Declares a whole generic family (spec part 2 §7): a schema, its fields and its gates. */
/**
 * The update's arguments without the defaults its fields had in the create's input: a family's update is often
 * declared as its create input `.partial()`, and Zod 4 fills a default inside an optional field, so an update
 * naming one field would have set every defaulted field it did not name back to its default (a forward rule
 * updated with only its period lost its numbers). A defaulted field becomes optional with no default, its
 * metadata kept; the object's own settings (strict) and checks are kept.
 */
export function withoutDefaults<S extends ZodObject>(schema: S): S {
  const shape = schema.shape as Record<string, ZodType>;
  let changed = false;
  const next: Record<string, ZodType> = {};
  for (const [key, field] of Object.entries(shape)) {
    let inner: ZodType = field;
    if (inner instanceof z.ZodOptional) inner = inner.unwrap() as ZodType;
    if (inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault) {
      const meta = z.globalRegistry.get(field) ?? z.globalRegistry.get(inner);
      let bare: ZodType = (inner.unwrap() as ZodType).optional();
      if (meta) bare = bare.meta(meta);
      next[key] = bare;
      changed = true;
    } else next[key] = field;
  }
  if (!changed) return schema;
  return schema.clone({ ...schema._zod.def, shape: next } as typeof schema._zod.def) as S;
}

export function defineResource<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
  const G extends ResourceGates,
  const Refs extends Readonly<Partial<Record<RecordKey<Cre>, ResourceRef>>>,
>(
  spec: ResourceSpec<N, Rec, Cre, Upd, G> & { table: string; refs?: Refs },
): PlainResource<N, Rec, Cre, Upd, JoinKeys<Refs>>;
export function defineResource<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
  const G extends ResourceGates,
  const Refs extends Readonly<Partial<Record<RecordKey<Cre>, ResourceRef>>>,
>(spec: ResourceSpec<N, Rec, Cre, Upd, G> & { refs?: Refs }): Resource<N, Rec, Cre, Upd, JoinKeys<Refs>>;
export function defineResource<
  N extends string,
  Rec extends ZodObject,
  Cre extends ZodObject,
  Upd extends ZodObject,
>(declared: ResourceSpec<N, Rec, Cre, Upd>): Resource<N, Rec, Cre, Upd> {
  // an update changes the fields it names and no other: the create's defaults are not an update's
  const spec = { ...declared, update: withoutDefaults(declared.update) };
  const fields: Record<string, ResourceField> = {};
  for (const [name, f] of Object.entries(spec.fields) as [string, ResourceField][])
    fields[name] = { labelKey: `fields.${spec.noun}.${name}`, ...f };
  // a secret is never a filter nor searched: either would let a caller guess it a character at a time
  for (const key of spec.secrets ?? [])
    if (fields[key]?.filterable || fields[key]?.sortable || (spec.search ?? []).includes(key))
      throw new Error(`${spec.noun}.${key}: a secret cannot be filtered, sorted or searched`);
  const filterable = Object.fromEntries(
    Object.entries(fields)
      .filter(([, f]) => f.filterable)
      .map(([name, f]) => [name, { kind: f.kind, values: f.values } satisfies FilterableField]),
  );
  const refs = (spec.refs ?? {}) as Readonly<Record<string, ResourceRef>>;
  declarePicker(spec.noun, spec.picker, refs);
  const verbs = relationVerbs(spec);
  for (const limit of spec.limits ?? []) registerLimitKey(limit.feature);
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
    ui: spec.ui,
    ...(spec.table ? { table: spec.table } : {}),
    scopes: spec.scopes,
    limits: spec.limits ?? [],
    ...(spec.licenceCount ? { licenceCount: spec.licenceCount } : {}),
    unique: spec.unique ?? [],
    secrets: spec.secrets ?? [],
    search: spec.search ?? ['name'],
    refs,
    live: (spec.live ?? []) as readonly LiveRule[],
    commands: familyCommands(spec),
    relationVerbs: verbs,
    relationCommands: Object.fromEntries(
      verbs.flatMap((v) => [
        [`add_${v.key}`, v.add],
        [`remove_${v.key}`, v.remove],
      ]),
    ) as RelationCommands<N, Rec, string>,
  };
}

export type AnyResource = Resource<string, ZodObject, ZodObject, ZodObject>;
export type { FieldKind, Command };
