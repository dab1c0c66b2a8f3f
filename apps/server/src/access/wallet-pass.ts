import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import forge from 'node-forge';
import yazl from 'yazl';

/**
 * Apple Wallet passes (issue 21 item 1, spec part 1 §3 "wallet pass file", part 2 §7 "wallet pass ... download"):
 * a `.pkpass` is a zip of `pass.json`, its images, `manifest.json` (the SHA-1 of every other file) and
 * `signature`, a detached PKCS#7 (CMS) signature of the manifest by the pass type certificate, carrying
 * Apple's WWDR intermediate when the settings hold it. node-forge signs (pure JavaScript, maintained, no
 * binary on the server); yazl zips. docs/decisions.md "QR images and wallet passes".
 */

/** The project's wallet settings as stored (`projects.settings.wallet_settings`); the PEMs never leave the server. */
export interface WalletSettings {
  pass_type_id?: string;
  team_id?: string;
  organization_name?: string;
  /** the pass type certificate (PEM) */
  certificate?: string;
  /** its private key (PEM, unencrypted) */
  key?: string;
  /** Apple's WWDR intermediate certificate (PEM), included in the signature */
  wwdr_certificate?: string;
}

/** A pass can be signed: the pass type, the team, the certificate and its key are all set. */
export const walletEnabled = (s: WalletSettings | undefined): boolean =>
  Boolean(s?.pass_type_id && s.team_id && s.certificate && s.key);

/** Why a certificate, key or intermediate cannot be used (the field and the rule), or null when they can. */
export function walletSettingsProblem(s: WalletSettings): { field: string; rule: string } | null {
  let cert: forge.pki.Certificate | null = null;
  if (s.certificate) {
    try {
      cert = forge.pki.certificateFromPem(s.certificate);
    } catch {
      return { field: 'certificate', rule: 'pem_certificate' };
    }
  }
  if (s.key) {
    let key: forge.pki.rsa.PrivateKey;
    try {
      key = forge.pki.privateKeyFromPem(s.key);
    } catch {
      return { field: 'key', rule: 'pem_rsa_key' };
    }
    const pub = cert?.publicKey as forge.pki.rsa.PublicKey | undefined;
    if (pub && !(pub.n.equals(key.n) && pub.e.equals(key.e))) return { field: 'key', rule: 'key_mismatch' };
  }
  if (s.wwdr_certificate) {
    try {
      forge.pki.certificateFromPem(s.wwdr_certificate);
    } catch {
      return { field: 'wwdr_certificate', rule: 'pem_certificate' };
    }
  }
  return null;
}

/** What a pass shows and carries. */
export interface PassContent {
  serialNumber: string;
  description: string;
  organizationName: string;
  /** the QR code's payload */
  message: string;
  name: string;
  validFrom: string | null;
  validTo: string | null;
  voided: boolean;
  labels: { name: string; validFrom: string; validTo: string };
}

const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (b: Buffer) => {
  let c = 0xffffffff;
  for (const byte of b) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type: string, data: Buffer) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
};

/** A plain square icon of one colour, as a PNG (Wallet refuses a pass without `icon.png`). */
export function plainIcon(size: number, rgb: [number, number, number] = [31, 41, 55]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter method, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The detached PKCS#7 signature (DER) of `manifest`. */
export function signManifest(
  manifest: Buffer,
  settings: Required<Pick<WalletSettings, 'certificate' | 'key'>> & WalletSettings,
): Buffer {
  const cert = forge.pki.certificateFromPem(settings.certificate);
  const key = forge.pki.privateKeyFromPem(settings.key);
  const p7 = forge.pkcs7.createSignedData();
  p7.content = forge.util.createBuffer(manifest.toString('binary'));
  p7.addCertificate(cert);
  if (settings.wwdr_certificate) p7.addCertificate(forge.pki.certificateFromPem(settings.wwdr_certificate));
  p7.addSigner({
    key,
    certificate: cert,
    digestAlgorithm: forge.pki.oids.sha256!,
    authenticatedAttributes: [
      { type: forge.pki.oids.contentType!, value: forge.pki.oids.data },
      { type: forge.pki.oids.messageDigest! },
      { type: forge.pki.oids.signingTime! },
    ],
  });
  p7.sign({ detached: true });
  return Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary');
}

/** Builds the `.pkpass` (a zip) of a pass; the settings must hold the pass type, team, certificate and key. */
export async function buildPkpass(
  settings: WalletSettings & { certificate: string; key: string },
  content: PassContent,
): Promise<Buffer> {
  const field = (key: string, label: string, value: string) => ({ key, label, value });
  const pass = {
    formatVersion: 1,
    passTypeIdentifier: settings.pass_type_id ?? '',
    teamIdentifier: settings.team_id ?? '',
    serialNumber: content.serialNumber,
    organizationName: settings.organization_name || content.organizationName,
    description: content.description,
    foregroundColor: 'rgb(255, 255, 255)',
    backgroundColor: 'rgb(31, 41, 55)',
    labelColor: 'rgb(209, 213, 219)',
    barcodes: [{ format: 'PKBarcodeFormatQR', message: content.message, messageEncoding: 'iso-8859-1' }],
    // iOS 8 and older read the single barcode
    barcode: { format: 'PKBarcodeFormatQR', message: content.message, messageEncoding: 'iso-8859-1' },
    generic: {
      primaryFields: [field('name', content.labels.name, content.name)],
      secondaryFields: [
        ...(content.validFrom ? [field('from', content.labels.validFrom, content.validFrom)] : []),
        ...(content.validTo ? [field('to', content.labels.validTo, content.validTo)] : []),
      ],
    },
    ...(content.validTo ? { expirationDate: content.validTo } : {}),
    ...(content.voided ? { voided: true } : {}),
  };
  const files: Record<string, Buffer> = {
    'pass.json': Buffer.from(JSON.stringify(pass, null, 2)),
    'icon.png': plainIcon(29),
    'icon@2x.png': plainIcon(58),
  };
  const manifest = Buffer.from(
    JSON.stringify(Object.fromEntries(Object.entries(files).map(([n, b]) => [n, sha1(b)])), null, 2),
  );
  const signature = signManifest(manifest, settings);
  const zip = new yazl.ZipFile();
  for (const [name, body] of Object.entries({ ...files, 'manifest.json': manifest, signature }))
    zip.addBuffer(body, name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
