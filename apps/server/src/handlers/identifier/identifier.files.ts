import { sql, type Kysely } from 'kysely';
import type { Identifier } from '@lintel/commands';
import type { DB } from '../../db/schema';
import { AppError } from '../../errors';
import { serverT } from '../../i18n';
import { StreamedReply } from '../../pipeline/streamed-reply';
import { Readable } from 'node:stream';
import { QR_CONTENT_TYPES, qrPng, qrSvg, type QrFormat } from '../../access/qr-image';
import { buildPkpass, walletEnabled, type WalletSettings } from '../../access/wallet-pass';
import type { Config } from '../../config';
import { readFacePhoto, removeFacePhoto, storeFacePhoto } from '../../storage/files';

/**
 * The files of a QR identifier (issue 21 item 1): its QR code as an image and its Apple Wallet pass, for the
 * console and the CLI (`identifier.qr`, `identifier.wallet_pass`) and the guest's public page
 * (`guest_access.wallet_pass`). docs/decisions.md "QR images and wallet passes".
 */

/** Only a QR identifier has a QR code to show (a card's number is not read by a camera). */
export function assertQr(ident: Pick<Identifier, 'type'>): void {
  if (ident.type !== 'qr') throw new AppError('invalid_identifier', { type: ident.type });
}

const fileName = (ident: Pick<Identifier, 'id'>, ext: string) => `identifier-${ident.id}.${ext}`;

export async function qrReply(
  ident: Pick<Identifier, 'id' | 'type' | 'value'>,
  format: QrFormat,
  size: number,
): Promise<StreamedReply> {
  assertQr(ident);
  const body = format === 'svg' ? Buffer.from(await qrSvg(ident.value)) : await qrPng(ident.value, size);
  return new StreamedReply(QR_CONTENT_TYPES[format], Readable.from([body]), fileName(ident, format));
}

/** The project's wallet settings (`projects.settings.wallet_settings`), empty when none were saved. */
export async function walletSettingsOf(q: Kysely<DB>, projectId: number): Promise<WalletSettings> {
  const r = await sql<{ wallet: WalletSettings | null }>`
    select settings->'wallet_settings' as wallet from projects where id = ${projectId}`.execute(q);
  return r.rows[0]?.wallet ?? {};
}

/** A date-time as a pass shows it: ISO 8601 with its offset, as Wallet reads `expirationDate` and dates. */
const passDate = (v: string | null) => (v ? new Date(v).toISOString().replace(/\.\d{3}Z$/, 'Z') : null);

/**
 * The `.pkpass` of a QR identifier, signed with the project's wallet settings; `wallet_certificate_missing`
 * while they hold no certificate and key (or no pass type and team, without which Wallet refuses the pass).
 */
export async function walletPassReply(
  q: Kysely<DB>,
  projectId: number,
  ident: Identifier,
  locale: string | null,
): Promise<StreamedReply> {
  assertQr(ident);
  const settings = await walletSettingsOf(q, projectId);
  if (!walletEnabled(settings) || !settings.certificate || !settings.key)
    throw new AppError('wallet_certificate_missing');
  const project = await q
    .selectFrom('projects')
    .select(['uid', 'name'])
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  const t = serverT(locale);
  const pkpass = await buildPkpass(
    { ...settings, certificate: settings.certificate, key: settings.key },
    {
      serialNumber: `${project.uid}-${ident.id}`,
      organizationName: project.name || 'Lintel',
      description: t('commands:wallet_pass_texts.description'),
      message: ident.value,
      name: ident.name,
      validFrom: ident.period_restrict_active ? passDate(ident.period_restrict_from_u) : null,
      validTo: ident.period_restrict_active ? passDate(ident.period_restrict_to_u) : null,
      voided: !ident.is_active,
      labels: {
        name: t('commands:wallet_pass_texts.name'),
        validFrom: t('commands:wallet_pass_texts.valid_from'),
        validTo: t('commands:wallet_pass_texts.valid_to'),
      },
    },
  );
  return new StreamedReply(
    'application/vnd.apple.pkpass',
    Readable.from([pkpass]),
    fileName(ident, 'pkpass'),
  );
}

/** Only a face identifier has a face photo. */
export function assertFace(ident: Pick<Identifier, 'type'>): void {
  if (ident.type !== 'face') throw new AppError('invalid_identifier', { type: ident.type });
}

/**
 * Stores a face identifier's new photo (checked and made like an avatar) and names it on the identifier, in
 * one statement that the sync's trigger sees (a new photo is a difference for the devices holding it). The
 * photo it replaces is removed unless another identifier names the same picture.
 */
export async function replaceFacePhoto(
  db: Kysely<DB>,
  config: Pick<Config, 'storageDir' | 'images'>,
  ident: Pick<Identifier, 'id' | 'type'>,
  image: Blob,
  crop: { x: number; y: number; size: number } | null,
): Promise<string> {
  assertFace(ident);
  const sha256 = await storeFacePhoto(config, image, crop);
  const before = await sql<{ photo_sha256: string | null }>`
    update identifiers n set photo_sha256 = ${sha256} from identifiers o
    where n.id = o.id and n.id = ${ident.id} returning o.photo_sha256`.execute(db);
  const old = before.rows[0]?.photo_sha256 ?? null;
  if (old && old !== sha256) await removeUnnamedPhoto(db, config, old);
  return sha256;
}

/** Removes a stored face photo once no identifier names it. */
export async function removeUnnamedPhoto(
  db: Kysely<DB>,
  config: Pick<Config, 'storageDir'>,
  sha256: string,
): Promise<void> {
  const r = await sql<{
    n: number;
  }>`select count(*)::int as n from identifiers where photo_sha256 = ${sha256}`.execute(db);
  if (!Number(r.rows[0]?.n)) await removeFacePhoto(config, sha256);
}

/** The face identifier's photo as stored (JPEG); `item_not_found` while it has none. */
export async function facePhotoReply(
  db: Kysely<DB>,
  config: Pick<Config, 'storageDir'>,
  ident: Pick<Identifier, 'id' | 'type'>,
): Promise<StreamedReply> {
  assertFace(ident);
  const r = await sql<{ photo_sha256: string | null }>`
    select photo_sha256 from identifiers where id = ${ident.id}`.execute(db);
  const jpeg = await readFacePhoto(config, r.rows[0]?.photo_sha256 ?? null);
  if (!jpeg) throw new AppError('item_not_found');
  return new StreamedReply('image/jpeg', Readable.from([jpeg]), fileName(ident, 'jpg'));
}
