import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/** argon2id with OWASP's minimum parameters (19 MiB, 2 passes, 1 lane). */
const ARGON = {
  algorithm: 2 /* Algorithm.Argon2id (a const enum) */,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** How many argon2 computations this process ran (hashes and checks): tests read it to see what a request cost. */
export const argonCount = { value: 0 };

export const hashPassword = (password: string) => {
  argonCount.value++;
  return hash(password, ARGON);
};

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  argonCount.value++;
  if (!stored) {
    // spend the same time as a real check, so a missing login does not answer faster
    await hash(password, ARGON);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** An opaque bearer secret: 256 random bits, URL-safe. */
export const newToken = () => randomBytes(32).toString('base64url');

/** Only hashes of tokens and codes are stored. */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * `value` sealed (AES-256-GCM) with a key made from `secret`, a token the server keeps only the hash of: what
 * is stored can be opened by the holder of that token alone (`openWith`).
 */
export function sealFor(secret: string, value: string): string {
  const key = createHash('sha256').update(`lintel-seal:${secret}`).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** What `sealFor(secret, …)` sealed; null when it was sealed for another secret or is damaged. */
export function openWith(secret: string, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64');
    const key = createHash('sha256').update(`lintel-seal:${secret}`).digest();
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export const sixDigitCode = () => String(randomInt(0, 1_000_000)).padStart(6, '0');

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A readable generated password: 16 characters from an unambiguous alphabet. */
export function generatePassword(length = 16): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(0, alphabet.length)];
  return out;
}
