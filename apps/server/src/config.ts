import path from 'node:path';
import type { Writable } from 'node:stream';

export interface Config {
  port: number;
  host: string;
  /** where the PGlite data folder lives when no DATABASE_URL is given; `memory://` keeps it in memory */
  dataDir: string;
  databaseUrl?: string;
  /** uploaded files (avatars, logos): LINTEL_STORAGE_DIR, else `storage` in the data folder */
  storageDir: string;
  adminLogin: string;
  adminPassword?: string;
  /** the address people open; used in e-mailed links */
  publicUrl: string;
  /** the built console to serve; missing folder means API only */
  webDir?: string;
  smtpUrl?: string;
  mailFrom: string;
  logLevel: string;
  /** behind a reverse proxy: take the caller's address from X-Forwarded-For */
  trustProxy: boolean;
  /** where the log goes (tests capture it); default stdout */
  logStream?: Writable;
  accessTtlS: number;
  refreshTtlS: number;
  login: { slowAfter: number; blockAfter: number; windowS: number; blockS: number; maxDelayMs: number };
  resendCodeAfterS: number;
  codeTtlH: number;
  registrationOpen: boolean;
  selfRegistrationOpen: boolean;
}

const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) ? Number(v) : d);
const bool = (v: string | undefined, d: boolean) => (v === undefined || v === '' ? d : /^(1|true|yes|on)$/i.test(v));

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = int(env.PORT, 8080);
  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.LINTEL_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    storageDir: path.resolve(env.LINTEL_STORAGE_DIR || path.join(env.LINTEL_DATA_DIR || './data', 'storage')),
    adminLogin: env.LINTEL_ADMIN_LOGIN || 'admin',
    adminPassword: env.LINTEL_ADMIN_PASSWORD || undefined,
    publicUrl: (env.LINTEL_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    webDir: env.LINTEL_WEB_DIR || undefined,
    smtpUrl: env.LINTEL_SMTP_URL || undefined,
    mailFrom: env.LINTEL_MAIL_FROM || 'Lintel <lintel@localhost>',
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: bool(env.LINTEL_TRUST_PROXY, false),
    accessTtlS: int(env.LINTEL_ACCESS_TTL, 900),
    refreshTtlS: int(env.LINTEL_REFRESH_TTL, 30 * 24 * 3600),
    login: {
      slowAfter: int(env.LINTEL_LOGIN_SLOW_AFTER, 3),
      blockAfter: int(env.LINTEL_LOGIN_BLOCK_AFTER, 10),
      windowS: int(env.LINTEL_LOGIN_WINDOW, 900),
      blockS: int(env.LINTEL_LOGIN_BLOCK_SECONDS, 900),
      maxDelayMs: int(env.LINTEL_LOGIN_MAX_DELAY_MS, 2000),
    },
    resendCodeAfterS: int(env.LINTEL_RESEND_CODE_AFTER, 60),
    codeTtlH: int(env.LINTEL_CODE_TTL_HOURS, 24),
    registrationOpen: bool(env.LINTEL_REGISTRATION_OPEN, false),
    selfRegistrationOpen: bool(env.LINTEL_SELF_REGISTRATION_OPEN, true),
    ...overrides,
  };
}
