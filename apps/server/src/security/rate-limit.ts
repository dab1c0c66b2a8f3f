import type { FastifyInstance } from 'fastify';
import { registry, type CommandId } from '@lintel/commands';
import type { ErrorKey } from '@lintel/core';
import type { ServerContext } from '../context';
import { audit } from '../audit/audit';
import { AppError } from '../errors';

/**
 * Rate limits: one mechanism for every route and key. A policy counts hits of one kind of key (the caller's
 * address, an account, the e-mail address a message goes to) over a fixed window; the hit is counted FIRST,
 * in one atomic statement, and the decision is made from the count it returns, so parallel requests and
 * several servers on one database cannot all pass a check made before any of them was counted.
 */
export type KeyKind = 'address' | 'account' | 'email';

export interface Policy {
  key: KeyKind;
  limit: number;
  windowS: number;
  /** the catalogue error of a refusal (429, with `{seconds}` to wait) */
  error: Extract<ErrorKey, 'too_many_attempts' | 'too_many_requests'>;
}

/** Every policy, in one place. Limits may be changed per server: `config.rateLimits.<name>`. */
export function policies(app: ServerContext) {
  const login = app.config.login;
  return {
    /** any call of a public route, per route and address: a flood of anything anonymous */
    public: { key: 'address', limit: 300, windowS: 60, error: 'too_many_requests' },
    /** routes that send mail, per route and address */
    mail_address: { key: 'address', limit: 10, windowS: 600, error: 'too_many_requests' },
    /** messages to one e-mail address, whatever the route (invitation, code, recovery) */
    mail_target: { key: 'email', limit: 3, windowS: 600, error: 'too_many_requests' },
    /** a guest pass opening a door, per route and address (the public page's button) */
    guest_open: { key: 'address', limit: 10, windowS: 60, error: 'too_many_requests' },
    /**
     * a guest pass's Apple Wallet file, per route and address: each is signed with RSA (tens of ms of CPU),
     * on a public route a guest needs once or twice
     */
    guest_file: { key: 'address', limit: 10, windowS: 60, error: 'too_many_requests' },
    /** public routes that hash a password or check a secret code, per route and address */
    password_address: { key: 'address', limit: 20, windowS: 600, error: 'too_many_attempts' },
    /** a signed-in account checking or changing its own password */
    password_account: { key: 'account', limit: 10, windowS: 600, error: 'too_many_attempts' },
    /** failed logins (and logins under way) per address; a success gives its own count back */
    login_address: {
      key: 'address',
      limit: login.blockAfter,
      windowS: login.windowS,
      error: 'too_many_attempts',
    },
    /**
     * failed logins per account (or per unknown login name); a success clears it. Over it, the account is
     * refused only to addresses that failed on it (login_pair): never locked for its owner from elsewhere
     */
    login_account: {
      key: 'account',
      limit: login.accountBlockAfter,
      windowS: login.windowS,
      error: 'too_many_attempts',
    },
    /** failed logins per account and address: counted to tell which addresses an account refuses */
    login_pair: {
      key: 'account',
      limit: login.accountBlockAfter,
      windowS: login.windowS,
      error: 'too_many_attempts',
    },
  } satisfies Record<string, Policy>;
}

export type PolicyName = keyof ReturnType<typeof policies>;

/**
 * The address policies of routes, beyond `public` (which every public route has): applied before the
 * handler runs, so a refused request costs one statement.
 */
export const ROUTE_POLICIES: Partial<Record<CommandId, readonly PolicyName[]>> = {
  'self_registration.create': ['mail_address', 'password_address'],
  'self_registration.resend': ['mail_address'],
  'self_registration.confirm': ['password_address'],
  'password.recovery': ['mail_address'],
  'password.reset': ['password_address'],
  'registration.invite_attempt': ['password_address'],
  'registration.register': ['password_address'],
  'guest_access.open': ['guest_open'],
  'guest_access.wallet_pass': ['guest_file'],
};

export const clock = (app: ServerContext): Date => app.clock.now();

function policy(app: ServerContext, name: PolicyName): Policy {
  const base: Policy = policies(app)[name];
  const override = app.config.rateLimits?.[name];
  return override ? { ...base, ...override } : base;
}

export interface Hit {
  key: string;
  count: number;
  limit: number;
  windowStart: Date;
  /** seconds until the window ends */
  retryAfterS: number;
  over: boolean;
}

/** The key of a policy's counter: address policies count per route, the others per account or e-mail. */
export function keyOf(name: PolicyName, value: string, route?: string): string {
  return route ? `${name}:${route}:${value}` : `${name}:${value.toLowerCase()}`;
}

/** Counts one hit and returns the count: ONE statement, atomic on PostgreSQL and PGlite alike. */
export async function hit(app: ServerContext, name: PolicyName, value: string, route?: string): Promise<Hit> {
  const p = policy(app, name);
  const key = keyOf(name, value, route);
  const now = clock(app);
  const end = new Date(now.getTime() + p.windowS * 1000);
  const row = await app.db
    .insertInto('rate_limits')
    .values({ key, window_start: now, window_end: end, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => {
        const expired = eb('rate_limits.window_end', '<=', now);
        return {
          count: eb
            .case()
            .when(expired)
            .then(1)
            .else(eb('rate_limits.count', '+', 1))
            .end(),
          window_start: eb.case().when(expired).then(now).else(eb.ref('rate_limits.window_start')).end(),
          window_end: eb.case().when(expired).then(end).else(eb.ref('rate_limits.window_end')).end(),
        };
      }),
    )
    .returning(['count', 'window_start', 'window_end'])
    .executeTakeFirstOrThrow();
  return {
    key,
    count: row.count,
    limit: p.limit,
    windowStart: row.window_start,
    retryAfterS: Math.max(1, Math.ceil((row.window_end.getTime() - now.getTime()) / 1000)),
    over: row.count > p.limit,
  };
}

/** The refusal of a hit over its limit; the first refusal of a window is an audit event. */
export async function refuse(
  app: ServerContext,
  name: PolicyName,
  h: Hit,
  ip: string | null,
): Promise<never> {
  if (h.count === h.limit + 1)
    await audit(app.db, {
      projectId: null,
      userId: null,
      action: 'rate_limited',
      ip,
      data: { policy: name, limit: h.limit },
    });
  throw new AppError(policy(app, name).error, { seconds: h.retryAfterS });
}

/** Counts a hit and refuses it (429, `{seconds}`) when it is over the policy's limit. */
export async function enforce(
  app: ServerContext,
  name: PolicyName,
  value: string,
  opts: { route?: string; ip?: string } = {},
): Promise<Hit> {
  const h = await hit(app, name, value, opts.route);
  if (h.over) await refuse(app, name, h, opts.ip ?? null);
  return h;
}

/** Gives one hit back (a login that succeeded was not a failure), in the window that counted it. */
export async function refund(app: ServerContext, h: Hit): Promise<void> {
  await app.db
    .updateTable('rate_limits')
    .set((eb) => ({ count: eb('count', '-', 1) }))
    .where('key', '=', h.key)
    .where('window_start', '=', h.windowStart)
    .where('count', '>', 0)
    .execute();
}

export async function clear(app: ServerContext, name: PolicyName, value: string): Promise<void> {
  await app.db.deleteFrom('rate_limits').where('key', '=', keyOf(name, value)).execute();
}

/**
 * The mailbox an address delivers to, as the per-recipient cap counts it: lower case, without the
 * `+tag` of plus-addressing (`victim+1@host` is `victim@host`), so variants cannot multiply the cap.
 */
export function mailbox(email: string): string {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at <= 0) return address;
  const local = address.slice(0, at);
  const plus = local.indexOf('+');
  return (plus > 0 ? local.slice(0, plus) : local) + address.slice(at);
}

/** One message to `email`: refused when its mailbox got its share of mail in this window. */
export const enforceMailTarget = (app: ServerContext, email: string, ip?: string) =>
  enforce(app, 'mail_target', mailbox(email), { ip });

const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Hooks the route policies into the server: every public command gets `public` per address, and the
 * commands of ROUTE_POLICIES their address policies, before the handler; every 429 carries Retry-After.
 * Call it before the routes are added.
 */
export function registerRateLimits(app: FastifyInstance, context: ServerContext): void {
  const byRoute = new Map<string, PolicyName[]>();
  for (const cmd of registry.values()) {
    const names = [
      ...(cmd.access === 'public' ? (['public'] as const) : []),
      ...(ROUTE_POLICIES[cmd.id as CommandId] ?? []),
    ];
    if (names.length) byRoute.set(`${cmd.http.method} /api/v0${cmd.http.path}`, names);
  }
  for (const name of Object.keys(context.config.rateLimits ?? {}))
    if (!(name in policies(context))) throw new Error(`rateLimits: unknown policy ${name}`);

  app.addHook('preHandler', async (req) => {
    const names = byRoute.get(`${req.method} ${req.routeOptions.url}`);
    if (!names) return;
    const route = req.routeOptions.url!.replace(/^\/api\/v0/, '');
    for (const name of names)
      await enforce(context, name, req.ip, { route: `${req.method} ${route}`, ip: req.ip });
  });

  app.addHook('onSend', async (_req, reply, payload) => {
    if (reply.statusCode === 429 && !reply.hasHeader('retry-after') && typeof payload === 'string') {
      try {
        const seconds = (JSON.parse(payload) as { data?: { seconds?: unknown } }).data?.seconds;
        if (typeof seconds === 'number')
          void reply.header('retry-after', String(Math.max(1, Math.ceil(seconds))));
      } catch {
        // not JSON: no Retry-After
      }
    }
    return payload;
  });

  // counters of ended windows are no longer read: drop them now and then
  const prune = () => context.db.deleteFrom('rate_limits').where('window_end', '<', clock(context)).execute();
  const timer = setInterval(
    () =>
      void prune().catch((err: Error) => context.log.warn({ err: err.message }, 'rate_limits prune failed')),
    PRUNE_EVERY_MS,
  );
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
