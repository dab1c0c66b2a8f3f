import net from 'node:net';
import { AppError } from '../errors';

/**
 * What the server sends to a device's own address (the gateway's HTTP path, `device.info`, network search)
 * goes through here, because a device's address is whatever an installer typed (issue 20 item 3): no
 * redirect is followed, a reply is read up to a size and a time, and addresses of the server itself
 * (loopback), of the link (link-local: cloud metadata at 169.254.169.254) and the unspecified one are refused,
 * in IPv4, IPv6 and IPv4-mapped IPv6 forms, unless the operator allows them (LINTEL_DEVICE_ALLOW_LOOPBACK: the
 * demo and tests, whose simulated devices live on loopback). docs/decisions.md "Hardening, second pass
 * (devices)".
 */

const ranges: Array<{ reason: RefusedRange; list: net.BlockList }> = (() => {
  const loopback = new net.BlockList();
  loopback.addSubnet('127.0.0.0', 8, 'ipv4');
  loopback.addAddress('::1', 'ipv6');
  const linkLocal = new net.BlockList();
  linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
  linkLocal.addSubnet('fe80::', 10, 'ipv6');
  const unspecified = new net.BlockList();
  unspecified.addSubnet('0.0.0.0', 8, 'ipv4');
  unspecified.addAddress('::', 'ipv6');
  return [
    { reason: 'loopback', list: loopback },
    { reason: 'link_local', list: linkLocal },
    { reason: 'unspecified', list: unspecified },
  ];
})();

export type RefusedRange = 'loopback' | 'link_local' | 'unspecified' | 'invalid';

/**
 * The address as the URL parser writes it (`127.1` → `127.0.0.1`, IPv6 compressed and in brackets), and the
 * IPv4 address an IPv4-mapped or -translated IPv6 address stands for; null when it is no IP literal.
 */
export function canonicalAddress(ip: string): { host: string; v4: string | null; v6: string | null } | null {
  const literal = ip.includes(':') ? `[${ip}]` : ip;
  let host: string;
  try {
    host = new URL(`http://${literal}/`).hostname;
  } catch {
    return null;
  }
  if (host.startsWith('[')) {
    const v6 = host.slice(1, -1);
    // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated), as the parser writes them: hex groups
    const m = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
    if (m) {
      const hi = parseInt(m[1]!, 16);
      const lo = parseInt(m[2]!, 16);
      return { host, v4: [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.'), v6: null };
    }
    return net.isIPv6(v6) ? { host, v4: null, v6 } : null;
  }
  return net.isIPv4(host) ? { host, v4: host, v6: null } : null;
}

/** Why the server will not send to this address (null: it may), by the operator's choice for loopback & co. */
export function refusedRange(ip: string, allowLoopback: boolean): RefusedRange | null {
  const a = canonicalAddress(ip);
  if (!a) return 'invalid';
  if (allowLoopback) return null;
  for (const { reason, list } of ranges)
    if (a.v4 ? list.check(a.v4, 'ipv4') : list.check(a.v6!, 'ipv6')) return reason;
  return null;
}

/** The URL of `uri` on a device's address, or `device_not_available` naming why the address is refused. */
export function deviceUrl(ip: string, port: number, uri: string, allowLoopback: boolean): string {
  const refused = refusedRange(ip, allowLoopback);
  if (refused) throw new AppError('device_not_available', { reason: 'address_refused', range: refused });
  return `http://${canonicalAddress(ip)!.host}:${port}${uri}`;
}

export interface OutboundReply {
  status: number;
  /** the reply's text; null when it was larger than allowed (what was read is dropped) */
  text: string | null;
}

/**
 * One request to a device: redirects are not followed (a 3xx is the device's answer, its body unread), the
 * reply is read up to `maxBytes` (past it the connection is cut and nothing of it is kept) and the whole
 * exchange is bounded by `timeoutMs`.
 */
export async function deviceFetch(
  url: string,
  init: {
    method: string;
    headers?: Record<string, string>;
    body?: string;
    timeoutMs: number;
    maxBytes: number;
    signal?: AbortSignal;
  },
): Promise<OutboundReply> {
  const timeout = AbortSignal.timeout(init.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const res = await fetch(url, {
    method: init.method,
    headers: init.headers,
    body: init.body,
    redirect: 'manual',
    signal,
  });
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    return { status: res.status, text: '' };
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > init.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return { status: res.status, text: null };
  }
  const reader = res.body?.getReader();
  if (!reader) return { status: res.status, text: '' };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > init.maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { status: res.status, text: null };
    }
    chunks.push(value);
  }
  return { status: res.status, text: Buffer.concat(chunks).toString('utf8') };
}
