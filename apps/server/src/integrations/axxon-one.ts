import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { AppError } from '../errors';
import { refusedRange } from '../devices/outbound';
import type { IntegrationSettings } from '../config';

/**
 * A small client of Axxon One's HTTP API (AxxonSoft's documentation, "Macros" and "Cameras" of the HTTP API):
 * requests with Basic authorization (the web server refuses anonymous ones), read as JSON.
 * - `GET {server}/macro/list/?exclude_auto` → `{macroCommands: [{id, name}]}`: the macros people run (the
 *   automatic rules left out).
 * - `GET {server}/camera/list?limit=&next_page=&query=` → `{cameras: [{displayId, displayName, accessPoint,
 *   isActivated, ipAddress, vendor, model, …}], nextPageToken?}`: the video sources, a page at a time.
 * The server URL may hold the web server's prefix (`https://vms:8443/asip-api`). Each request is bounded by
 * a time and a size; no redirect is followed; loopback, link-local and unspecified addresses are refused as
 * the connection is made (unless the operator allows them), as for devices and webhooks. Over HTTPS the
 * certificate uploaded for the integration, when there is one, is the only one trusted. Nothing here logs:
 * the credentials go in the Authorization header alone, and errors name a reason, never the reply's text.
 */
export interface AxxonServer {
  url: string;
  login: string;
  password: string;
  /** PEM: the certificate (or CA) its HTTPS is trusted by; null: the system's CAs */
  ca: string | null;
}

/** The most of a reply read: a camera list of thousands of sources with their streams fits. */
const REPLY_MAX_BYTES = 8 * 1024 * 1024;

type Settings = Pick<IntegrationSettings, 'allowLoopback' | 'timeoutMs'>;

const unavailable = (reason: string, extra: Record<string, unknown> = {}) =>
  new AppError('integration_server_unavailable', { reason, ...extra });

/** The reason of a failed connection, in words a person can act on (never the server's text). */
function reasonOf(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'not_found';
  if (code === 'ETIMEDOUT' || err.message === 'timed out') return 'timeout';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  if (/CERT|SSL|TLS|SELF_SIGNED|HOSTNAME|ERR_TLS/.test(code) || /certificate/i.test(err.message))
    return 'tls';
  if (err.message.startsWith('refused address')) return 'address_refused';
  return 'network';
}

/** One GET of the server's API, its reply parsed as JSON. */
export async function axxonGet(
  server: AxxonServer,
  path: string,
  query: Record<string, string | undefined>,
  settings: Settings,
): Promise<unknown> {
  const base = new URL(server.url);
  const target = new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) target.searchParams.set(k, v);
  // `exclude_auto` is a flag without a value in Axxon's documentation
  const href = target.href.replace(/=(?=&|$)/g, '');
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(literal) && refusedRange(literal, settings.allowLoopback))
    throw unavailable('address_refused');
  // the address is checked as the connection is made: a name re-pointed after a check gains nothing
  const lookup = ((
    host: string,
    options: dns.LookupOptions,
    done: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void,
  ) => {
    dns.lookup(host, { ...options, all: true }, (err, addresses) => {
      if (err) return done(err, '');
      const list = addresses as dns.LookupAddress[];
      if (list.some((a) => refusedRange(a.address, settings.allowLoopback)))
        return done(new Error('refused address'), '');
      if (options.all) return done(null, list);
      done(null, list[0]!.address, list[0]!.family);
    });
  }) as typeof dns.lookup;
  const secure = target.protocol === 'https:';
  const auth = Buffer.from(`${server.login}:${server.password}`).toString('base64');
  const reply = await new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    const req = (secure ? https : http).request(
      href,
      {
        method: 'GET',
        headers: { authorization: `Basic ${auth}`, accept: 'application/json' },
        lookup,
        timeout: settings.timeoutMs,
        ...(secure && server.ca ? { ca: server.ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > REPLY_MAX_BYTES) res.destroy(new Error('too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', (err) =>
          reject(err.message === 'too large' ? unavailable('reply_too_large') : unavailable('reset')),
        );
      },
    );
    // the whole exchange is bounded, not only the socket's idle time
    const deadline = setTimeout(() => req.destroy(new Error('timed out')), settings.timeoutMs);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => reject(unavailable(reasonOf(err as NodeJS.ErrnoException))));
    req.on('close', () => clearTimeout(deadline));
    req.end();
  });
  if (reply.status === 401 || reply.status === 403) throw new AppError('integration_wrong_password');
  if (reply.status < 200 || reply.status >= 300) throw unavailable('status', { status: reply.status });
  try {
    return JSON.parse(reply.body.toString('utf8'));
  } catch {
    throw unavailable('reply');
  }
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The macros people run (`/macro/list/?exclude_auto`), as `{id, name}`. */
export async function axxonMacros(
  server: AxxonServer,
  settings: Settings,
): Promise<Array<{ id: string; name: string }>> {
  const body = (await axxonGet(server, '/macro/list/', { exclude_auto: '' }, settings)) as {
    macroCommands?: unknown;
  } | null;
  if (!body || !Array.isArray(body.macroCommands)) throw unavailable('reply');
  return body.macroCommands.flatMap((m: unknown) => {
    const r = m as { id?: unknown; name?: unknown };
    const id = text(r?.id);
    return id ? [{ id, name: text(r.name) ?? id }] : [];
  });
}

export interface AxxonCamera {
  id: string;
  name: string;
  access_point: string;
  is_active: boolean;
  ip_address: string | null;
  vendor: string | null;
  model: string | null;
}

/** A page of cameras (`/camera/list`), and the token of the next one when there are more. */
export async function axxonCameras(
  server: AxxonServer,
  page: { limit: number; next?: string; search?: string },
  settings: Settings,
): Promise<{ cameras: AxxonCamera[]; next: string | null }> {
  const body = (await axxonGet(
    server,
    '/camera/list',
    { limit: String(page.limit), next_page: page.next, query: page.search || undefined },
    settings,
  )) as { cameras?: unknown; nextPageToken?: unknown } | null;
  if (!body || !Array.isArray(body.cameras)) throw unavailable('reply');
  const cameras = body.cameras.flatMap((c: unknown): AxxonCamera[] => {
    const r = c as Record<string, unknown>;
    const accessPoint = text(r?.accessPoint);
    const id = text(r?.displayId) ?? accessPoint;
    if (!id) return [];
    return [
      {
        id,
        name: text(r.displayName) ?? id,
        access_point: accessPoint ?? '',
        is_active: r.isActivated !== false && r.enabled !== false,
        ip_address: text(r.ipAddress),
        vendor: text(r.vendor),
        model: text(r.model),
      },
    ];
  });
  return { cameras, next: text(body.nextPageToken) };
}
