/**
 * Every kind of file the spec lets a user upload, with its limits (issue 12). A command names the kind of each
 * file argument (`fileArg('avatar')` in @lintel/commands); the server reads at most `maxBytes` of it, finds its
 * type from its first bytes (never from its name or the client's content type) and, for an image, reads its
 * dimensions from the header and refuses more than `maxPixels` before anything decodes it.
 */
export type UploadType =
  | 'image/png'
  | 'image/jpeg'
  | 'image/gif'
  | 'image/bmp'
  | 'image/webp'
  | 'audio/mpeg'
  | 'audio/wav'
  | 'audio/ogg'
  | 'application/gzip'
  | 'application/zip'
  | 'application/x-tar'
  | 'application/json'
  | 'text/plain';

export interface UploadKind {
  /** largest accepted file */
  maxBytes: number;
  /** types accepted, as detected from the bytes */
  types: readonly UploadType[];
  /** images only: the most pixels (width × height) the header may announce */
  maxPixels?: number;
  /** the catalogue error of a file of another type (default `invalid_file`) */
  refusal?: 'invalid_file' | 'invalid_backup_image';
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const UploadKinds = {
  /** decoded by jimp (PNG, JPEG, GIF, BMP) and cropped; 25 MP is a 48 MP phone photo halved, ~100 MB decoded */
  avatar: {
    maxBytes: 5 * MiB,
    types: ['image/png', 'image/jpeg', 'image/gif', 'image/bmp'],
    maxPixels: 25_000_000,
  },
  /**
   * a project's or a group's white-label logo: decoded and stored again as PNG (its transparency kept), so
   * only what the one decoder reads; no SVG (it can carry script)
   */
  logo: {
    maxBytes: 2 * MiB,
    types: ['image/png', 'image/jpeg', 'image/gif'],
    maxPixels: 16_000_000,
  },
  /** a face photo for an identifier */
  identifier_photo: { maxBytes: 5 * MiB, types: ['image/png', 'image/jpeg'], maxPixels: 25_000_000 },
  /** the sound an emergency alert plays */
  alert_audio: { maxBytes: 10 * MiB, types: ['audio/mpeg', 'audio/wav', 'audio/ogg'] },
  /** a signed licence: text or JSON */
  licence_file: { maxBytes: 64 * KiB, types: ['text/plain', 'application/json'] },
  /** a backup of the project uploaded to be applied */
  backup: {
    maxBytes: 256 * MiB,
    types: ['application/gzip', 'application/zip', 'application/x-tar'],
    refusal: 'invalid_backup_image',
  },
  /** a PEM certificate or private key (the embedded MQTT broker's TLS): text, never a binary DER */
  certificate: { maxBytes: 64 * KiB, types: ['text/plain'] },
  /** a device's own backup, imported into the project settings */
  device_backup: {
    maxBytes: 32 * MiB,
    types: ['application/gzip', 'application/zip', 'application/x-tar', 'application/json'],
  },
} as const satisfies Record<string, UploadKind>;

export type UploadKindName = keyof typeof UploadKinds;

export function isUploadKind(name: unknown): name is UploadKindName {
  return typeof name === 'string' && Object.hasOwn(UploadKinds, name);
}
