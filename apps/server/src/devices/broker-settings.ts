import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { sql } from 'kysely';
import type { CertificateInfo } from '@lintel/commands';
import type { ServerContext } from '../context';

/**
 * The broker's settings (table `broker_settings`, one row, installation-wide): the TLS certificate and private
 * key of the embedded broker's mqtts:// listener. The key never leaves the server: replies show what the
 * certificate says, logs and audit events say only that it changed.
 */
export interface BrokerCertificate {
  /** PEM: the certificate, its chain after it */
  cert: string;
  /** PEM, unencrypted */
  key: string;
}

export async function loadBrokerCertificate(app: ServerContext): Promise<BrokerCertificate | null> {
  const r = await sql<{ certificate: string; private_key: string }>`
    select certificate, private_key from broker_settings where id`.execute(app.db);
  const row = r.rows[0];
  return row ? { cert: row.certificate, key: row.private_key } : null;
}

export async function saveBrokerCertificate(
  app: ServerContext,
  pem: BrokerCertificate | null,
  userId: number,
): Promise<void> {
  if (!pem) {
    await sql`delete from broker_settings`.execute(app.db);
    return;
  }
  await sql`insert into broker_settings (id, certificate, private_key, updated_by, updated_at)
    values (true, ${pem.cert}, ${pem.key}, ${userId}, ${app.clock.now()})
    on conflict (id) do update set certificate = excluded.certificate, private_key = excluded.private_key,
      updated_by = excluded.updated_by, updated_at = excluded.updated_at`.execute(app.db);
}

/** The first certificate of a PEM text (the leaf: a chain follows it), or null when there is none. */
function leaf(pem: string): X509Certificate | null {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  if (!m) return null;
  try {
    return new X509Certificate(m[0]);
  } catch {
    return null;
  }
}

/**
 * What is wrong with an uploaded certificate and key, as the field and rule of `check_fields_data`, or null:
 * a certificate that cannot be read (`pem_certificate`), a key that cannot be read or is encrypted
 * (`pem_key`), a key that is not the certificate's (`key_mismatch`).
 */
export function brokerCertificateProblem(pem: BrokerCertificate): { field: string; rule: string } | null {
  const cert = leaf(pem.cert);
  if (!cert) return { field: 'certificate', rule: 'pem_certificate' };
  let key: KeyObject;
  try {
    key = createPrivateKey(pem.key);
  } catch {
    return { field: 'key', rule: 'pem_key' };
  }
  if (!cert.checkPrivateKey(key)) return { field: 'key', rule: 'key_mismatch' };
  return null;
}

const iso = (text: string) => {
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? text : d.toISOString();
};

const altNames = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((s) => s.trim().replace(/^(DNS|IP Address):/, ''))
    .filter(Boolean);

/** What a stored certificate says (its leaf). */
export function certificateInfo(pem: string): CertificateInfo | null {
  const cert = leaf(pem);
  if (!cert) return null;
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    issuer: cert.issuer.replace(/\n/g, ', '),
    valid_from: iso(cert.validFrom),
    valid_to: iso(cert.validTo),
    fingerprint: cert.fingerprint256,
    names: altNames(cert.subjectAltName),
  };
}

const dn = (o: Record<string, string | string[] | undefined> | undefined) =>
  Object.entries(o ?? {})
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`)
    .join(', ');

/** What the certificate an external broker presented on the platform's connection says. */
export function peerCertificateInfo(peer: PeerCertificate | undefined): CertificateInfo | null {
  if (!peer || !peer.fingerprint256) return null;
  return {
    subject: dn(peer.subject as unknown as Record<string, string>),
    issuer: dn(peer.issuer as unknown as Record<string, string>),
    valid_from: iso(peer.valid_from),
    valid_to: iso(peer.valid_to),
    fingerprint: peer.fingerprint256,
    names: altNames(peer.subjectaltname),
  };
}
