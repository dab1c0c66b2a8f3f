import { z, type ZodType } from 'zod';
import { pathParams, type Command } from './command';
import { uploadFields } from './upload';

/**
 * The OpenAPI 3.1 document of the API, made from the command registry (issue 24 item 6): one operation per
 * command — its method and path, its arguments (path parameters, query parameters, or a JSON or multipart
 * body, as `toRequest` sends them), its result, who may call it and the gates it checks — so other clients
 * can be generated from it. The schemas are zod's own JSON Schema (draft 2020-12, the dialect of OpenAPI
 * 3.1): the arguments as they are accepted (`io: 'input'`), the result as it is sent (`io: 'output'`).
 */

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** the server's version, `info.version` */
  version: string;
  /** the server's URL, else the document names the API's path only */
  serverUrl?: string;
}

/** `/users/:id` → `/users/{id}` */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

/** `device.remote_session` → `deviceRemoteSession`: unique, and a name every generator takes as it is. */
export const operationIdOf = (id: string) =>
  id.replace(/[._]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `z.instanceof(Blob)` (fileArg) is zod's `custom` type: the one custom type the registry declares. */
const isFileSchema = (schema: unknown) =>
  (schema as { _zod?: { def?: { type?: string } } })._zod?.def?.type === 'custom';

/**
 * One schema as JSON Schema, its local references moved into `components.schemas` under `name`: zod writes
 * a recursive or reused part as `$defs` with `#/$defs/…` references (and the whole schema as `#`), which in
 * an OpenAPI document would point at the document's root.
 */
function toComponent(schema: ZodType, io: 'input' | 'output', name: string, components: Json): Json {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      // a file argument (a Blob in the clients): a part of a multipart body
      if (isFileSchema(ctx.zodSchema) && Object.keys(ctx.jsonSchema).length === 0) {
        ctx.jsonSchema.type = 'string';
        ctx.jsonSchema.contentMediaType = 'application/octet-stream';
      }
    },
  }) as Json;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Record<string, Json>;
  delete json.$defs;
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object') {
      const out: Json = {};
      for (const [k, x] of Object.entries(v as Json)) {
        if (k === '$ref' && typeof x === 'string') {
          if (x === '#') out[k] = `#/components/schemas/${name}`;
          else if (x.startsWith('#/$defs/'))
            out[k] =
              `#/components/schemas/${name}_${x.slice('#/$defs/'.length).replace(/[^A-Za-z0-9._-]/g, '_')}`;
          else out[k] = x;
        } else out[k] = rewrite(x);
      }
      return out;
    }
    return v;
  };
  for (const [k, d] of Object.entries(defs))
    components[`${name}_${k.replace(/[^A-Za-z0-9._-]/g, '_')}`] = rewrite(d) as Json;
  const body = rewrite(json) as Json;
  components[name] = body;
  return body;
}

/** The gates of a command, as a person reads them in the operation's description. */
export function gateText(cmd: Pick<Command, 'access' | 'gates'>): string {
  const lines: string[] = [];
  if (cmd.access === 'public') lines.push('Access: public (no session).');
  else if (cmd.access === 'device')
    lines.push('Access: a device (HTTP Basic: its serial number and the password Lintel issued).');
  else lines.push('Access: a signed-in session (bearer token).');
  const perms = cmd.gates.anyPermission ?? [];
  if (perms.length) lines.push(`Permission: any of ${perms.map((p) => `\`${p}\``).join(', ')}.`);
  else if (cmd.access === 'session') lines.push('Permission: none beyond the session.');
  const lic = cmd.gates.licence ?? [];
  if (lic.length) lines.push(`Licence: ${lic.map((f) => `\`${f}\``).join(', ')} (server and group).`);
  return lines.join('\n\n');
}

const errorResponse = { $ref: '#/components/responses/Error' };

export function openApiDocument(commands: Iterable<Command>, opts: OpenApiOptions): Json {
  const schemas: Json = {
    Error: {
      type: 'object',
      description:
        'Every refusal: `error_code` is a key of the error catalogue, `data` the values its message needs.',
      properties: {
        message: { type: 'string' },
        error_code: { type: 'string' },
        data: { type: 'object', additionalProperties: true },
      },
      required: ['message', 'error_code'],
    },
  };
  const paths: Record<string, Record<string, Json>> = {};
  const tags = new Set<string>();
  const sorted = [...commands].sort((a, b) => a.id.localeCompare(b.id));
  for (const cmd of sorted) {
    const opId = operationIdOf(cmd.id);
    const tag = cmd.id.slice(0, cmd.id.indexOf('.'));
    tags.add(tag);
    const argsJson = toComponent(cmd.args, 'input', `${pascal(opId)}Args`, schemas);
    const props = (argsJson.properties ?? {}) as Record<string, Json>;
    const required = new Set((argsJson.required ?? []) as string[]);
    const inPath = pathParams(cmd.http.path);
    const parameters: Json[] = inPath.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: props[name] ?? { type: 'string' },
    }));
    const rest = Object.keys(props).filter((k) => !inPath.includes(k));
    let requestBody: Json | undefined;
    if (cmd.argsIn === 'query') {
      for (const name of rest) {
        const schema = props[name]!;
        const isObject = schema.type === 'object' || schema.type === 'array';
        // an object or a list travels as JSON text in its parameter (toRequest)
        parameters.push(
          isObject
            ? { name, in: 'query', required: required.has(name), content: { 'application/json': { schema } } }
            : { name, in: 'query', required: required.has(name), schema },
        );
      }
    } else if (rest.length || argsJson.type !== 'object') {
      const files = uploadFields(cmd.args);
      const body: Json =
        argsJson.type === 'object'
          ? {
              type: 'object',
              properties: Object.fromEntries(rest.map((k) => [k, props[k]])),
              ...(rest.some((k) => required.has(k)) ? { required: rest.filter((k) => required.has(k)) } : {}),
            }
          : { $ref: `#/components/schemas/${pascal(opId)}Args` };
      const media = Object.keys(files).length ? 'multipart/form-data' : 'application/json';
      requestBody = { required: rest.some((k) => required.has(k)), content: { [media]: { schema: body } } };
    }
    const streamed = 'stream' in cmd;
    const resultJson = streamed
      ? undefined
      : toComponent(cmd.result, 'output', `${pascal(opId)}Result`, schemas);
    const ok: Json = streamed
      ? {
          description: 'A file, streamed (NDJSON, CSV or XLSX by `format`)',
          content: {
            'application/x-ndjson': {},
            'text/csv': {},
            'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': {},
          },
        }
      : Object.keys(resultJson!).length === 0
        ? { description: 'The reply (a file or a document)', content: { '*/*': {} } }
        : {
            description: 'The reply',
            content: {
              'application/json': { schema: { $ref: `#/components/schemas/${pascal(opId)}Result` } },
            },
          };
    const operation: Json = {
      operationId: opId,
      summary: cmd.id,
      description: gateText(cmd),
      tags: [tag],
      'x-lintel-command': cmd.id,
      security:
        cmd.access === 'public' ? [] : cmd.access === 'device' ? [{ deviceBasic: [] }] : [{ bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: { '200': ok, '4XX': errorResponse, '5XX': errorResponse },
      ...(cmd.hidden ? { 'x-lintel-hidden': true } : {}),
      ...(cmd.timeoutMs ? { 'x-lintel-timeout-ms': cmd.timeoutMs } : {}),
    };
    const p = openApiPath(cmd.http.path);
    (paths[p] ??= {})[cmd.http.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lintel API',
      version: opts.version,
      description:
        'Made from the command registry (packages/commands): one operation per command. Errors carry a stable `error_code` of the catalogue.',
    },
    servers: [{ url: opts.serverUrl ? `${opts.serverUrl.replace(/\/$/, '')}/api/v0` : '/api/v0' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas,
      responses: {
        Error: {
          description: 'A refusal with its catalogue code',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token from `POST /login`.' },
        deviceBasic: { type: 'http', scheme: 'basic', description: 'A device: serial number and password.' },
      },
    },
  };
}
