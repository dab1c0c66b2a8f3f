import dns from 'node:dns/promises';
import net from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Calls in from SIP trunks (issue 22 item 4): a provider is known by the address it sends from — the
 * addresses its trunk's termination URI names (an address, or a host name resolved when the table is
 * loaded) —, as FreePBX's trunks match a provider by its IP ("identify"). Kamailio holds them in its
 * `trunkip` table (address → the trunks' ids); an INVITE from one of them is a call in from a trunk, asked
 * of Lintel without authentication (`sip.route` with `trunks`). docs/decisions.md "Telephony: calls in from
 * SIP trunks, and wrong numbers".
 */

/**
 * The host's own address is never a provider's: behind a local reverse proxy every browser's websocket comes
 * from it (as with SIP abuse, sip/abuse.ts), and one trunk there would turn every phone's call into a call
 * in from that trunk.
 */
const HOST_OWN = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** How long a host name of a termination URI may take to resolve (a dead DNS must not hold Kamailio's start). */
const RESOLVE_TIMEOUT_MS = 3_000;

/** The host of a termination URI (`sip:[user@]host[:port][;params]`), brackets of IPv6 removed. */
export function uriHost(uri: string): string | null {
  const m = /^sips?:(?:[^@]*@)?(\[[^\]]+\]|[^:;?>\s]+)/i.exec(uri.trim());
  if (!m) return null;
  return m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
}

async function addressesOf(host: string): Promise<string[]> {
  if (net.isIP(host)) return [host];
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('timeout')), RESOLVE_TIMEOUT_MS).unref(),
  );
  const found = await Promise.race([dns.lookup(host, { all: true }), timeout]);
  return found.map((a) => a.address);
}

/**
 * Every trunk's addresses: address → the ids of the trunks whose provider sends from it (oldest first).
 * A host that does not resolve is left out (`unresolved`), and the host's own address never counts.
 */
export async function trunkAddresses(
  db: Kysely<DB>,
): Promise<{ byAddress: Map<string, number[]>; unresolved: string[] }> {
  const rows = (
    await sql<{ id: number; termination_uri: string }>`
      select id, termination_uri from sip_trunks order by id`.execute(db)
  ).rows;
  const byAddress = new Map<string, number[]>();
  const unresolved: string[] = [];
  for (const r of rows) {
    const host = uriHost(r.termination_uri);
    if (!host) continue;
    let addresses: string[];
    try {
      addresses = await addressesOf(host);
    } catch {
      unresolved.push(host);
      continue;
    }
    for (const a of addresses) {
      if (HOST_OWN.has(a)) continue;
      const ids = byAddress.get(a) ?? [];
      if (!ids.includes(r.id)) byAddress.set(a, [...ids, r.id]);
    }
  }
  return { byAddress, unresolved };
}

/** The id Kamailio knows a trunk's registration by, and the user of the contact the provider calls in to. */
export const TRUNK_REGISTRATION_PREFIX = 'lintel-trunk-';

export interface TrunkRegistration {
  uuid: string;
  login: string;
  password: string;
  /** the provider's registrar: `host[:port]` of the termination URI */
  domain: string;
  /** where the REGISTER goes: `sip:host[:port]` */
  proxy: string;
}

/**
 * The registrations Kamailio makes (issue 22 item 4): one per trunk set to register (`register`) that has a
 * login and a password, to the host (and port) of its termination URI, as the login.
 */
export async function trunkRegistrations(db: Kysely<DB>): Promise<TrunkRegistration[]> {
  const rows = (
    await sql<{ id: number; termination_uri: string; login: string; password: string | null }>`
      select id, termination_uri, login, password from sip_trunks where register order by id`.execute(db)
  ).rows;
  const out: TrunkRegistration[] = [];
  for (const r of rows) {
    if (!r.login || !r.password) continue;
    const m = /^sips?:(?:[^@]*@)?(\[[^\]]+\]|[^:;?>\s]+)(?::(\d+))?/i.exec(r.termination_uri.trim());
    if (!m) continue;
    const domain = m[2] ? `${m[1]}:${m[2]}` : m[1]!;
    out.push({
      uuid: `${TRUNK_REGISTRATION_PREFIX}${r.id}`,
      login: r.login,
      password: r.password,
      domain,
      proxy: `sip:${domain}`,
    });
  }
  return out;
}
