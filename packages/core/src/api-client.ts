import type { ZodType } from 'zod';
import { API_BASE, Timeouts } from './constants';
import { isUnauthenticated, type ErrorBody } from './errors';
import { RefreshReply, type ProjectRef } from './schemas';

/** What a signed-in client keeps: the tokens of one project session. */
export interface StoredSession {
  token: string;
  refresh: string;
  project: ProjectRef;
  /** the server this session belongs to (the CLI keeps several) */
  server?: string;
  login?: string;
}

/** Where a client keeps its session: browser local or session storage, or a file for the CLI. */
export interface SessionStore {
  get(): StoredSession | null;
  set(session: StoredSession): void;
  clear(): void;
  /**
   * Runs `fn` while no other holder of the same stored session (another tab of the browser, another CLI
   * process) refreshes it; `get()` inside reads what the others stored. Without it, refreshes of one client
   * are shared only within that client.
   */
  exclusive?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * The session another holder rotated `refresh` into (its new tokens), adopted by this store, waited for a
   * short while; null when none comes. A refresh token is single-use: a tab that refreshed second finds the
   * first tab's tokens here instead of signing out.
   */
  successorOf?(refresh: string): Promise<StoredSession | null>;
}

export class MemorySessionStore implements SessionStore {
  constructor(private session: StoredSession | null = null) {}
  get() {
    return this.session;
  }
  set(session: StoredSession) {
    this.session = session;
  }
  clear() {
    this.session = null;
  }
}

/** A failed call: the server's catalogue error, or `network_error` / `timeout` with status 0. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly data: Record<string, unknown> | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
  get body(): ErrorBody {
    return { message: this.message, error_code: this.code, data: this.data };
  }
}

export interface RequestOptions<T> {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  /** ms; 0 means none. Defaults to the spec's 30 s. */
  timeoutMs?: number;
  /** send the bearer token and refresh on 401 (default true) */
  auth?: boolean;
  /** validate the reply */
  schema?: ZodType<T>;
  signal?: AbortSignal;
  /**
   * A write that is safe to send again when the server answered 503 with Retry-After (it did nothing: the
   * embedded database was not free in time): asked again after that wait, within the timeout, as reads
   * always are. The refresh is one: a busy server must not sign anyone out.
   */
  repeatUnavailable?: boolean;
}

export interface ApiClientOptions {
  /** origin of the server, e.g. `http://localhost:8080`; empty for the page's own origin */
  baseUrl: string;
  store: SessionStore;
  fetch?: typeof fetch;
  /** called once the session is gone (refresh failed): the web goes to /login?redirect=…, the CLI exits 3 */
  onSignedOut?: () => void;
  /**
   * Called before each request is sent, with its timeout (0: none) and whether its reply is read as it
   * arrives: the CLI lifts the HTTP connection's own bounds for the requests they would cut
   * (apps/cli/src/long-requests.ts).
   */
  beforeFetch?: (request: { timeoutMs: number; stream: boolean }) => Promise<void> | void;
}

export class ApiClient {
  private refreshing: Promise<boolean> | null = null;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ApiClientOptions) {
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args));
  }

  get store(): SessionStore {
    return this.options.store;
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  url(path: string, query?: RequestOptions<unknown>['query']): string {
    const clean = path.replace(/^\/+/, '').replace(/^api\/v0\//, '');
    let url = `${this.options.baseUrl.replace(/\/+$/, '')}${API_BASE}${clean}`;
    if (query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.set(k, String(v));
      const qs = params.toString();
      if (qs) url += `?${qs}`;
    }
    return url;
  }

  get<T = unknown>(path: string, options: RequestOptions<T> = {}) {
    return this.request<T>('GET', path, options);
  }
  post<T = unknown>(path: string, body?: unknown, options: RequestOptions<T> = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }
  patch<T = unknown>(path: string, body?: unknown, options: RequestOptions<T> = {}) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  put<T = unknown>(path: string, body?: unknown, options: RequestOptions<T> = {}) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  delete<T = unknown>(path: string, options: RequestOptions<T> = {}) {
    return this.request<T>('DELETE', path, options);
  }

  async request<T = unknown>(method: string, path: string, options: RequestOptions<T> = {}): Promise<T> {
    const auth = options.auth ?? true;
    const sentWith = this.options.store.get()?.token;
    try {
      return await this.send<T>(method, path, options, auth);
    } catch (err) {
      if (!(auth && err instanceof ApiError && isUnauthenticated(err.status, err.body))) throw err;
      if (!(await this.refresh(sentWith))) {
        this.signOut();
        throw err;
      }
      try {
        return await this.send<T>(method, path, options, auth);
      } catch (again) {
        if (again instanceof ApiError && isUnauthenticated(again.status, again.body)) this.signOut();
        throw again;
      }
    }
  }

  /**
   * One refresh shared by every request that got a 401 at the same time. `refused`: the access token the
   * refused request was sent with; when the stored one is already another (refreshed meanwhile, here or by
   * another holder of the session), the request is sent again with it, and nothing is refreshed.
   */
  refresh(refused?: string): Promise<boolean> {
    if (refused !== undefined && this.options.store.get()?.token !== refused) return Promise.resolve(true);
    if (!this.refreshing) {
      this.refreshing = this.doRefresh(refused).finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  /**
   * Refreshes the stored session once for every holder of it (issue 25, item 9: two tabs spending one
   * single-use refresh token signed the user out): under the store's lock, a session another holder already
   * rotated is taken as it is; a refresh refused because another holder used the token first takes that
   * holder's tokens.
   */
  private async doRefresh(refused?: string): Promise<boolean> {
    const store = this.options.store;
    const before = store.get();
    if (!before) return false;
    const attempt = async (): Promise<boolean> => {
      const current = store.get();
      if (!current) return false;
      // rotated while this one waited for the lock (by another tab, another process)
      if (current.refresh !== before.refresh || (refused !== undefined && current.token !== refused))
        return true;
      try {
        const reply = await this.send(
          'POST',
          'refresh',
          { body: { token: current.refresh }, schema: RefreshReply, repeatUnavailable: true },
          false,
        );
        store.set({ ...current, token: reply.session.token, refresh: reply.session.refresh });
        return true;
      } catch {
        return (await store.successorOf?.(current.refresh)) != null;
      }
    };
    return store.exclusive ? store.exclusive(attempt) : attempt();
  }

  signOut(): void {
    this.options.store.clear();
    this.options.onSignedOut?.();
  }

  /**
   * A request whose reply is read as it arrives (an export): resolves once the status and headers are in,
   * with the body unread. A refused call throws its ApiError as `request` does (with one refresh and retry
   * on 401); the timeout bounds the wait for the headers only. Abort `signal` to stop reading: the
   * connection is closed and the server stops.
   */
  async openStream(
    method: string,
    path: string,
    options: Omit<RequestOptions<never>, 'schema'> = {},
  ): Promise<Response> {
    const auth = options.auth ?? true;
    const open = () => this.fetchReply(method, path, options, auth, true);
    const sentWith = this.options.store.get()?.token;
    try {
      return await open();
    } catch (err) {
      if (!(auth && err instanceof ApiError && isUnauthenticated(err.status, err.body))) throw err;
      if (!(await this.refresh(sentWith))) {
        this.signOut();
        throw err;
      }
      return open();
    }
  }

  private async send<T>(method: string, path: string, options: RequestOptions<T>, auth: boolean): Promise<T> {
    const res = await this.fetchReply(method, path, options, auth, false);
    const textBody = await res.text();
    let parsed: unknown = null;
    if (textBody) {
      try {
        parsed = JSON.parse(textBody);
      } catch {
        parsed = textBody;
      }
    }
    return options.schema ? options.schema.parse(parsed) : (parsed as T);
  }

  /** Sends the request; a reply that is not 2xx is read and thrown as its ApiError. */
  private async fetchReply(
    method: string,
    path: string,
    options: Omit<RequestOptions<unknown>, 'schema'>,
    auth: boolean,
    stream: boolean,
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: BodyInit | undefined;
    if (options.body !== undefined) {
      if (typeof FormData !== 'undefined' && options.body instanceof FormData) body = options.body;
      else {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(options.body);
      }
    }
    const session = this.options.store.get();
    if (auth && session) headers.authorization = `Bearer ${session.token}`;

    const timeoutMs = options.timeoutMs ?? Timeouts.default;
    const ready = this.options.beforeFetch?.({ timeoutMs, stream });
    if (ready) await ready;
    const controller = new AbortController();
    const timer = timeoutMs > 0 ? setTimeout(() => controller.abort(), timeoutMs) : undefined;
    const onAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onAbort);
    let res: Response;
    try {
      for (;;) {
        res = await this.fetchImpl(this.url(path, options.query), {
          method,
          headers,
          body,
          signal: controller.signal,
        });
        // a read the server could not serve now (the embedded database held by a backup, a burst) is asked
        // again after the Retry-After it names, within the request's own timeout: a read changes nothing,
        // so asking twice is safe. A write's 503 goes to the caller, who knows whether to send it again
        const wait = method === 'GET' || options.repeatUnavailable ? retryAfterMs(res) : null;
        if (wait === null) break;
        await res.body?.cancel();
        await abortableDelay(wait, controller.signal);
      }
    } catch (err) {
      options.signal?.removeEventListener('abort', onAbort);
      if (controller.signal.aborted) throw new ApiError(0, 'timeout', 'timeout', { ms: timeoutMs });
      throw new ApiError(0, 'network_error', 'network_error', {
        cause: String((err as Error)?.message ?? err),
      });
    } finally {
      if (timer) clearTimeout(timer);
      // a stream keeps listening: the caller's abort must still stop the body it reads
      if (!stream) options.signal?.removeEventListener('abort', onAbort);
    }
    if (res.ok) return res;
    options.signal?.removeEventListener('abort', onAbort);
    const textBody = await res.text();
    let parsed: unknown = null;
    if (textBody) {
      try {
        parsed = JSON.parse(textBody);
      } catch {
        parsed = textBody;
      }
    }
    const e = (parsed && typeof parsed === 'object' ? parsed : {}) as Partial<ErrorBody>;
    throw new ApiError(
      res.status,
      typeof e.message === 'string' ? e.message : 'internal_error',
      typeof e.error_code === 'string' ? e.error_code : 'internal_error',
      (e.data as Record<string, unknown> | null | undefined) ?? null,
    );
  }
}

/** The longest a client waits on one Retry-After before asking again (a server may name minutes). */
const MAX_RETRY_WAIT_MS = 5_000;

/** A 503 `service_unavailable` with Retry-After in seconds: how long to wait before asking again; else null. */
function retryAfterMs(res: Response): number | null {
  if (res.status !== 503) return null;
  const header = res.headers.get('retry-after');
  const seconds = header !== null && /^\d+$/.test(header.trim()) ? Number(header) : NaN;
  return Number.isFinite(seconds) ? Math.min(seconds * 1000, MAX_RETRY_WAIT_MS) : null;
}

/** Waits `ms`, or rejects as an abort (the fetch's own way) when `signal` is aborted first. */
function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(new DOMException('aborted', 'AbortError'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}

/** `a` then `b` in one array (a line cut by a chunk's end, with its rest). */
function joinBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The values of complete NDJSON lines (`text`: lines joined by line breaks, none after the last): one
 * `JSON.parse` of them all as an array — a third faster than one a line — else, when that fails (a blank
 * line, a line that is no JSON), line by line, so a bad line throws its own error and blank ones are skipped.
 * JSON text holds no raw line break (in strings it is escaped), so each line break is between two values.
 */
function parseLines(text: string): unknown[] {
  try {
    return JSON.parse(`[${text.replaceAll('\n', ',')}]`) as unknown[];
  } catch {
    const values: unknown[] = [];
    for (const line of text.split('\n')) if (line.trim()) values.push(JSON.parse(line));
    return values;
  }
}

/**
 * The lines of a streamed NDJSON reply as parsed values, handed over a chunk's worth at a time (a batch of
 * whatever lines the chunk completed), so a caller holds one chunk, however long the reply. A chunk is cut
 * at its last line break as bytes (a line break is never inside a UTF-8 sequence), so only whole lines are
 * decoded, in one piece. A reply cut off before its last line break (the server failed half-way, the
 * connection dropped) throws `network_error`: a complete reply ends with one.
 */
export async function* ndjsonValues(body: ReadableStream<Uint8Array> | null): AsyncGenerator<unknown[]> {
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  /** the bytes after the last line break so far: the start of a line */
  let rest: Uint8Array | null = null;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw new ApiError(0, 'network_error', 'network_error', {
          cause: String((err as Error)?.message ?? err),
        });
      }
      if (chunk.done) break;
      const bytes = chunk.value;
      const cut = bytes.lastIndexOf(10);
      if (cut < 0) {
        rest = rest ? joinBytes(rest, bytes) : bytes;
        continue;
      }
      const lines = rest ? joinBytes(rest, bytes.subarray(0, cut)) : bytes.subarray(0, cut);
      rest = cut + 1 < bytes.length ? bytes.subarray(cut + 1) : null;
      const values = parseLines(decoder.decode(lines));
      if (values.length) yield values;
    }
    if (rest && decoder.decode(rest).trim())
      throw new ApiError(0, 'network_error', 'network_error', { cause: 'the reply ended in a line' });
  } finally {
    // stopping early (break, an error, an abort) closes the connection: the server stops writing
    await reader.cancel().catch(() => undefined);
  }
}
