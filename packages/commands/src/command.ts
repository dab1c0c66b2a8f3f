import { z, type ZodType } from 'zod';
import type { ApiClient, Gate, Timeouts } from '@lintel/core';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a command: anyone (`public`), a signed-in session holding the permissions, a device
 * (`device`: what devices push to the platform, over MQTT or HTTP; the device gateway authenticates them), or
 * the SIP server (`sip`: Kamailio asking where a call goes and telling what happened to it, by the secret
 * Lintel gave it).
 */
export type Access = 'public' | 'session' | 'device' | 'sip';

/**
 * Who may call it: any one of `anyPermission` (codes of `PermissionCode`) and every flag of `licence`
 * (`LicenceFlag`), both literal types, so a misspelled code does not compile. `evaluateGate` (core) decides.
 */
export type Gates = Gate;

/** The context every surface hands to `run` (GitHub CLI's Factory): swap any part in tests. */
export interface CommandContext {
  api: ApiClient;
  now?: () => Date;
}

export interface Command<
  A extends ZodType = ZodType,
  R extends ZodType = ZodType,
  Id extends string = string,
> {
  id: Id;
  /** locale key of the title: `commands.<id>.label` */
  titleKey: string;
  http: { method: HttpMethod; path: string };
  /** where the arguments that are not path parameters travel; default: query for GET, body otherwise */
  argsIn: 'query' | 'body';
  args: A;
  result: R;
  access: Access;
  gates: Gates;
  timeoutMs?: number;
  /** not shown in the palette or the CLI's command list (e.g. token refresh, which clients do themselves) */
  hidden?: boolean;
  /**
   * a developer's or a benchmark's tool (the registry's metadata, load-test users): the CLI and the API have
   * it, the console's palette does not offer it to the people who run buildings
   */
  developer?: boolean;
  run(ctx: CommandContext, args: z.input<A>): Promise<z.output<R>>;
}

export interface CommandSpec<Id extends string, A extends ZodType, R extends ZodType> {
  id: Id;
  http: { method: HttpMethod; path: string };
  argsIn?: 'query' | 'body';
  args: A;
  result: R;
  access?: Access;
  gates?: Gates;
  timeoutMs?: (typeof Timeouts)[keyof typeof Timeouts] | number;
  hidden?: boolean;
  developer?: boolean;
  run?: (ctx: CommandContext, args: z.output<A>) => Promise<z.output<R>>;
}

/** Path parameters of a command's path, e.g. `/users/:id` → `['id']`. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
}

/** Splits arguments into the filled path, the query and the body, as the server reads them back. */
export function toRequest(
  cmd: Pick<Command, 'http' | 'argsIn'>,
  args: Record<string, unknown>,
): { path: string; query?: Record<string, string>; body?: unknown } {
  const rest: Record<string, unknown> = { ...args };
  const path = cmd.http.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const v = rest[name];
    delete rest[name];
    return encodeURIComponent(typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  });
  if (cmd.argsIn === 'query') {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(rest)) {
      if (v === undefined || v === null) continue;
      query[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
    }
    return { path, query };
  }
  if (Object.values(rest).some((v) => typeof Blob !== 'undefined' && v instanceof Blob)) {
    // a file among the arguments: the body is multipart, the other arguments its fields
    const form = new FormData();
    for (const [k, v] of Object.entries(rest)) {
      if (v === undefined || v === null) continue;
      if (v instanceof Blob) form.append(k, v, (v as File).name ?? k);
      else form.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
    return { path, body: form };
  }
  return { path, body: rest };
}

export function defineCommand<const Id extends string, A extends ZodType, R extends ZodType>(
  spec: CommandSpec<Id, A, R>,
): Command<A, R, Id> {
  const argsIn = spec.argsIn ?? (spec.http.method === 'GET' ? 'query' : 'body');
  const cmd: Command<A, R, Id> = {
    id: spec.id,
    titleKey: `commands.${spec.id}.label`,
    http: spec.http,
    argsIn,
    args: spec.args,
    result: spec.result,
    access: spec.access ?? 'session',
    gates: spec.gates ?? {},
    timeoutMs: spec.timeoutMs,
    hidden: spec.hidden,
    developer: spec.developer,
    async run(ctx, input) {
      const args = spec.args.parse(input) as z.output<A>;
      if (spec.run) return spec.run(ctx, args);
      const req = toRequest(cmd, (args ?? {}) as Record<string, unknown>);
      return ctx.api.request(spec.http.method, req.path, {
        query: req.query,
        body: req.body,
        auth: cmd.access === 'session',
        timeoutMs: spec.timeoutMs,
        schema: spec.result as ZodType<z.output<R>>,
      });
    },
  };
  return cmd;
}

export const NoArgs = z.object({}).strict();
