/**
 * Security headers on every reply — the console's files, /api and /storage/ (issue 12 point 12), set by
 * helmet from one onRequest hook, so error replies and the 404 fallback carry them too. The middleware is built
 * once (http/app.ts): @fastify/helmet built it again for every request, parsing the policy each time.
 */
import path from 'node:path';
import type { HelmetOptions } from 'helmet';

/**
 * The console's policy: its own scripts only (the built index.html has no inline script), no inline style
 * either (React sets `style` props through the CSSOM, which a policy does not govern), images also from
 * data: (the favicon) and blob: (a picked avatar's preview), calls to its own origin only ('self' covers the
 * websocket on the same host and port), never framed.
 */
export const CONSOLE_CSP = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'font-src': ["'self'", 'data:'],
  'media-src': ["'self'", 'blob:'],
  'connect-src': ["'self'"],
  'worker-src': ["'self'", 'blob:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/**
 * The web dialer's SIP websocket (issue 23) listens on the console's host at its own port: `connect-src` names
 * it for the host the page was asked by (a plain host name or address only; anything else adds nothing).
 */
export function sipWebsocketSource(
  sip: { wsPort: number; secure: boolean } | null,
): (req: { headers: { host?: string } }) => string {
  return (req) => {
    if (!sip) return "'self'";
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])$/.test(host)) return "'self'";
    return `${sip.secure ? 'wss' : 'ws'}://${host}:${sip.wsPort}`;
  };
}

/** The console's headers; `sip`: where the dialer's SIP websocket listens (null: telephony off). */
export function helmetOptionsFor(sip: { wsPort: number; secure: boolean } | null): HelmetOptions {
  return {
    ...helmetOptions,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        ...CONSOLE_CSP,
        'connect-src': sip ? ["'self'", sipWebsocketSource(sip)] : ["'self'"],
      },
    },
  };
}

export const helmetOptions: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: CONSOLE_CSP },
  // links of the console carry one-time codes (password reset, registration): no page sends its address on
  referrerPolicy: { policy: 'no-referrer' },
  frameguard: { action: 'deny' },
  // TLS is ended in front of the server, which knows the host names HSTS may pin; here it would pin every
  // sub-domain of whatever name the console was reached by
  strictTransportSecurity: false,
};

/** Types a browser may show inline from /storage/; anything else is a download. */
const INLINE = new Set(['.jpg', '.jpeg', '.png', '.gif', '.webp', '.bmp', '.mp3', '.wav', '.ogg']);

/**
 * Headers of a stored (uploaded) file: a document that cannot run anything even when opened directly
 * (`sandbox`, nothing loads), and a download unless it is an image or a sound.
 */
export function storageHeaders(res: { setHeader(name: string, value: string): unknown }, file: string): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; img-src 'self'; media-src 'self'; frame-ancestors 'none'; sandbox",
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (!INLINE.has(path.extname(file).toLowerCase())) res.setHeader('Content-Disposition', 'attachment');
}
