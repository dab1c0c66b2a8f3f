import { z } from 'zod';
import { defineCommand } from '../command';
import { defineResource, IdParam } from '../resource';
import { Id, Ids, NameLike, Ref, Timestamp } from '../refs';
import { fileArg } from '../upload';
import { CertificateInfo } from '../broker/broker.commands';

/**
 * Integrations (issue 24 item 5; spec part 1 §3 "Integration: id, type, name, domain_id (optional), domains,
 * axxon_one_settings with certificate file", part 2 §6 their permission rule, §7 "Integrations: available,
 * macros and cameras (both with integrationId)", §8 "server URL exists or unavailable; wrong old password;
 * invalid related entity; integration not allowed for user or device"). An integration is a third-party
 * system the project's devices and people use: today Axxon One, AxxonSoft's video management server, whose
 * cameras a panel shows and whose macros an event runs. `domain_id` is the group that owns it (none: the
 * project's), whose administrators manage it; `domains` are the groups it serves (their devices may use it).
 * The server's password is never returned (the dummy placeholder says one is stored, and sent back keeps
 * it); its certificate (the CA or self-signed certificate its HTTPS presents) is uploaded as a PEM file and
 * shown by what it says. docs/decisions.md "Integrations (issue 24 item 5)".
 */
/** `axxon`: Axxon One (its settings are `axxon_one_settings`; `_one` would read as a plural form in i18next) */
export const IntegrationTypes = ['axxon'] as const;
export const IntegrationType = z.enum(IntegrationTypes);
export type IntegrationType = z.infer<typeof IntegrationType>;

/** The Axxon One server as the record shows it: never its password, never the certificate's PEM. */
export const AxxonOneSettings = z.object({
  server_url: z.string(),
  login: z.string(),
  /** the dummy placeholder when one is stored, else null */
  password: z.string().nullable(),
  /** the certificate uploaded for its HTTPS (`integration.certificate_upload`), null when none */
  certificate: CertificateInfo.nullable(),
});

export const Integration = z.object({
  id: z.number().int(),
  type: IntegrationType,
  name: z.string(),
  /** the group that owns it (its administrators manage it); null: the project's own */
  domain_id: z.number().int().nullable(),
  domain: Ref.nullable(),
  /** the groups it serves: their devices may use it */
  domains: z.array(Ref),
  axxon_one_settings: AxxonOneSettings,
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Integration = z.infer<typeof Integration>;

/**
 * The address of the server's HTTP API, with the web server's prefix if it has one
 * (`https://vms.example:8443/asip-api`): http or https, no credentials in it (they are the login and
 * password), no query or fragment.
 */
export const ServerUrl = z
  .url({ protocol: /^https?$/ })
  .max(500)
  .refine(
    (v) => {
      // the refinement runs on a text the URL check refused too: that one is refused there
      try {
        const u = new URL(v);
        return !u.username && !u.password && !u.search && !u.hash;
      } catch {
        return true;
      }
    },
    { message: 'invalid_format' },
  );

const AxxonOneInput = z.object({
  server_url: ServerUrl,
  login: z.string().trim().min(1).max(128),
  password: z
    .string()
    .min(1)
    .max(128)
    .refine((v) => !/[\r\n]/.test(v), { message: 'invalid_format' })
    .meta({ secret: true }),
});

// the name first: the add form opens with the cursor in it, as every family's does
const IntegrationInput = z.object({
  name: NameLike,
  type: IntegrationType.default('axxon'),
  domain_id: Id.nullable().default(null),
  domains: Ids(1000).default([]),
  axxon_one_settings: AxxonOneInput,
});

/** A change: only what it names (no defaults, which would reset what it leaves out). */
const IntegrationChange = z
  .object({
    name: NameLike,
    domain_id: Id.nullable(),
    domains: Ids(1000),
    axxon_one_settings: AxxonOneInput.partial(),
  })
  .partial()
  .strict();

/**
 * Who may manage an integration (spec part 2 §6 "Mail templates and integrations: without a domain they need
 * change project settings; with a domain they need the domain edit permissions or manage own-domain
 * integrations"): the gates admit any of these; which rows each reaches is the store's (a project's own
 * integration needs `project_settings.change`, a group's one the right to edit that group).
 */
const MANAGE = [
  'project_settings.change',
  'domains.edit_all',
  'domains.edit_descendant',
  'domains.own_integrations',
] as const;

export const integrationResource = defineResource({
  noun: 'integration',
  segment: 'integrations',
  record: Integration,
  create: IntegrationInput.strict(),
  update: IntegrationChange,
  fields: {
    id: { kind: 'number', filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    type: { kind: 'enum', values: IntegrationTypes, default: true, filterable: true, sortable: true },
    domain_id: { kind: 'ref', default: true, filterable: true, sortable: true },
    domains: { kind: 'refs', default: true, wide: true, filterable: true },
    server_url: { kind: 'text', default: true, wide: true, filterable: true, sortable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    // integrations.view: every integration of the project, read-only (an operator's overview)
    view: [...MANAGE, 'integrations.view'],
    create: MANAGE,
    edit: MANAGE,
    delete: MANAGE,
  },
  scopes: {
    owner: { group: 'domain_id', creator: 'created_by' },
    // the project's own integrations (no group) are reached by project_settings.change alone, and the
    // group edit permissions reach only a group's: the store says so (handlers/integration)
    view: {
      'integrations.view': 'all',
      'domains.edit_all': 'all',
      'domains.edit_descendant': 'descendants',
      'domains.own_integrations': 'domain',
    },
    create: {
      'domains.edit_all': 'all',
      'domains.edit_descendant': 'descendants',
      'domains.own_integrations': 'domain',
    },
    edit: {
      'domains.edit_all': 'all',
      'domains.edit_descendant': 'descendants',
      'domains.own_integrations': 'domain',
    },
    delete: {
      'domains.edit_all': 'all',
      'domains.edit_descendant': 'descendants',
      'domains.own_integrations': 'domain',
    },
    ownAlwaysVisible: false,
  },
  unique: ['name'],
  search: ['name'],
  refs: {
    domain_id: { family: 'group', many: false, record: 'domain' },
    domains: {
      family: 'group',
      many: { table: 'integration_domains', owner: 'integration_id', column: 'domain_id' },
    },
  },
  picker: { hint: 'type' },
  ui: { path: '/integration', icon: 'video', section: 'settings' },
});

const VIEW = { anyPermission: [...MANAGE, 'integrations.view'] } as const;

/** One integration type the server offers, and whether this installation can use it. */
export const AvailableIntegration = z.object({
  type: IntegrationType,
  /** the settings object an integration of this type holds */
  settings: z.string(),
  /** it needs a certificate file when its server speaks HTTPS with a certificate of its own */
  certificate: z.boolean(),
});

/** The integration types the server offers (spec part 2 §7 "Integrations: available"). */
export const integrationAvailable = defineCommand({
  id: 'integration.available',
  http: { method: 'GET', path: '/integrations/available' },
  args: z.object({}).strict(),
  result: z.object({ data: z.array(AvailableIntegration) }),
  gates: VIEW,
});

/** An Axxon One macro: its GUID and name. */
export const IntegrationMacro = z.object({ id: z.string(), name: z.string() });
/** An Axxon One camera: its display id and name, and its access point (the video source's id). */
export const IntegrationCamera = z.object({
  id: z.string(),
  name: z.string(),
  access_point: z.string(),
  is_active: z.boolean(),
  ip_address: z.string().nullable(),
  vendor: z.string().nullable(),
  model: z.string().nullable(),
});

const FromServerArgs = IdParam.extend({
  /** what the name holds (the server's search for cameras, a filter on the names for macros) */
  search: z.string().trim().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** the cursor `meta.next` of the previous page */
  next: z.string().max(500).optional(),
}).strict();
const Page = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), meta: z.object({ next: z.string().nullable() }) });

/** Who may read an integration's macros and cameras: who sees it, and who edits devices of a group it serves. */
const READ_FROM_SERVER = {
  anyPermission: [...MANAGE, 'integrations.view', 'devices.create', 'devices.edit'],
} as const;

/**
 * The macros of an integration's server (Axxon One `GET /macro/list/?exclude_auto`), read live: a picker's
 * rows with search and load more. `integration_server_unavailable` when the server cannot be reached.
 */
export const integrationMacros = defineCommand({
  id: 'integration.macros',
  http: { method: 'GET', path: '/integrations/:id/macros' },
  args: FromServerArgs,
  result: Page(IntegrationMacro),
  gates: READ_FROM_SERVER,
});

/** The cameras of an integration's server (Axxon One `GET /camera/list`), a page at a time. */
export const integrationCameras = defineCommand({
  id: 'integration.cameras',
  http: { method: 'GET', path: '/integrations/:id/cameras' },
  args: FromServerArgs,
  result: Page(IntegrationCamera),
  gates: READ_FROM_SERVER,
});

/**
 * Uploads the certificate the integration's server presents over HTTPS (PEM: its own self-signed one, or
 * the CA that signed it): its HTTPS is then trusted by that certificate alone. Gated as the update.
 */
export const integrationCertificateUpload = defineCommand({
  id: 'integration.certificate_upload',
  http: { method: 'POST', path: '/integrations/:id/certificate' },
  args: IdParam.extend({ certificate: fileArg('certificate') }),
  result: z.object({ data: Integration }),
  gates: { anyPermission: MANAGE },
});

/** Removes the uploaded certificate: the server's HTTPS is checked against the system's CAs again. */
export const integrationCertificateDelete = defineCommand({
  id: 'integration.certificate_delete',
  http: { method: 'DELETE', path: '/integrations/:id/certificate' },
  argsIn: 'query',
  args: IdParam,
  result: z.object({ data: Integration }),
  gates: { anyPermission: MANAGE },
});
