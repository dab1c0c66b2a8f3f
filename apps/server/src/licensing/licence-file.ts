import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { LicenceDocument, LicencePayload, type LicencePayload as Payload } from '@lintel/core';
import { AppError } from '../errors';
import { VENDOR_PUBLIC_KEYS } from './vendor-keys';

/** The trusted public keys: the shipped vendor keys and the installation's own (LINTEL_LICENCE_PUBLIC_KEYS). */
export function trustedKeys(configured: readonly string[]): KeyObject[] {
  const out: KeyObject[] = [];
  for (const b64 of [...VENDOR_PUBLIC_KEYS, ...configured]) {
    try {
      out.push(createPublicKey({ key: Buffer.from(b64, 'base64'), format: 'der', type: 'spki' }));
    } catch {
      // a malformed configured key trusts nothing (the server logs it at start: see licence.service)
    }
  }
  return out;
}

/**
 * Reads a licence file: its form (`invalid_file` when it is not one), its signature against the trusted keys
 * (`license_sign_wrong`), then the signed payload (`license_cannot_be_applied` when a trusted signer signed
 * something this server cannot read).
 */
export function readLicenceFile(text: string, keys: readonly KeyObject[]): Payload {
  let doc: LicenceDocument;
  try {
    doc = LicenceDocument.parse(JSON.parse(text));
  } catch {
    throw new AppError('invalid_file');
  }
  const bytes = Buffer.from(doc.payload, 'base64');
  const signature = Buffer.from(doc.signature, 'base64');
  const signed = keys.some((k) => {
    try {
      return verify(null, bytes, k, signature);
    } catch {
      return false;
    }
  });
  if (!signed) throw new AppError('license_sign_wrong');
  let payload: unknown;
  try {
    payload = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new AppError('license_cannot_be_applied', { reason: 'payload' });
  }
  const parsed = LicencePayload.safeParse(payload);
  if (!parsed.success) throw new AppError('license_cannot_be_applied', { reason: 'payload' });
  if (Date.parse(parsed.data.valid_to) <= Date.parse(parsed.data.valid_from))
    throw new AppError('license_cannot_be_applied', { reason: 'period' });
  return parsed.data;
}
