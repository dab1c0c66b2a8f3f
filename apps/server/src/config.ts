import path from 'node:path';
import type { Writable } from 'node:stream';
import { DeviceSearchLimits } from '@lintel/core';
import type { Clock } from './clock';
import { defaultJobSettings, type JobSettings } from './jobs/queue';
import { defaultWebsocketSettings, type WebsocketSettings } from './realtime/websocket';

export interface Config {
  port: number;
  host: string;
  /** where the PGlite data folder lives when no DATABASE_URL is given; `memory://` keeps it in memory */
  /**
   * where the server writes the demo's simulated devices and their credentials for `device-sim --demo`
   * (LINTEL_DEMO_DEVICES_FILE; `npm start` sets it unless LINTEL_DEMO_DEVICES=0); none: not written
   */
  demoDevicesFile?: string;
  dataDir: string;
  databaseUrl?: string;
  /** embedded database only: ms after its arrival a request that has not had the database yet gets a 503 with Retry-After; 0: no bound */
  dbWaitMs: number;
  /** uploaded files (avatars, logos): LINTEL_STORAGE_DIR, else `storage` in the data folder */
  storageDir: string;
  /** backups' zips (LINTEL_BACKUPS_DIR); default `backups` in the data folder (backup/service.ts) */
  backupsDir?: string;
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
  /** failed logins: slowed after `slowAfter`, refused after `blockAfter` per address or `accountBlockAfter` per account, per window */
  login: {
    slowAfter: number;
    blockAfter: number;
    accountBlockAfter: number;
    windowS: number;
    maxDelayMs: number;
  };
  /** limits of the rate-limit policies that differ from the defaults (security/rate-limit.ts) */
  rateLimits?: Partial<Record<string, { limit: number; windowS: number }>>;
  resendCodeAfterS: number;
  codeTtlH: number;
  registrationOpen: boolean;
  selfRegistrationOpen: boolean;
  /** the long-lived parts this instance runs, in start order (LINTEL_MODULES, default all: events,jobs,devices,http,websocket) */
  modules: string[];
  jobs: JobSettings;
  /** the websocket's timers and limits (realtime/websocket.ts) */
  websocket: WebsocketSettings;
  /** events between instances through this Redis instead of PostgreSQL's NOTIFY (REDIS_URL) */
  redisUrl?: string;
  /** days each journal keeps, by noun (else its LINTEL_<NOUN>_RETENTION_DAYS, else its default) */
  retentionDays?: Partial<Record<string, number>>;
  /** check every handler's result against its command's result schema (development and tests) */
  checkResults: boolean;
  /** lists count their matching rows exactly up to this many, and estimate above (LINTEL_LIST_EXACT_COUNT, default 1,000) */
  listExactCount: number;
  /** how long a request's caller (token, role, groups) is remembered, ms; 0: read afresh every time */
  authCacheMs: number;
  /** the server's time; tests pass a ManualClock */
  clock?: Clock;
  /** licences (licensing/licence.service.ts) */
  licences: LicenceConfig;
  /** the device gateway (devices/gateway.ts) */
  mqtt: MqttConfig;
}

export interface MqttConfig {
  /**
   * an external broker (MQTT_URL, e.g. `mqtt://lintel:secret@127.0.0.1:1883`): Mosquitto or any MQTT 3.1.1 or 5
   * broker; without it the server runs its embedded broker
   */
  url?: string;
  /** the embedded broker's port (MQTT_PORT, default 1884; 0: any free port) */
  port: number;
  /** the embedded broker's address to listen on (MQTT_HOST, default HOST) */
  host: string;
  /** the broker address devices are told to connect to (MQTT_PUBLIC_URL); default from MQTT_URL or the public URL's host */
  publicUrl?: string;
  /**
   * take device pushes and status messages as MQTT shared subscriptions (`$share/<group>/…`), so each is handled
   * by one instance (MQTT_SHARED; default on with an external broker, off with the embedded one)
   */
  shared: boolean;
  /** the shared subscriptions' group (MQTT_SHARE_GROUP; default from the installation's instance id) */
  shareGroup?: string;
  /** how long a request to a device may take (LINTEL_DEVICE_REQUEST_TIMEOUT_MS, default 10 s) */
  requestTimeoutMs: number;
  /**
   * how long a network search waits for one address's `GET /api/info` (LINTEL_DEVICE_SEARCH_TIMEOUT_MS,
   * default `DeviceSearchLimits.probeTimeoutMs`, 1.5 s)
   */
  searchProbeTimeoutMs?: number;
  /** how often the gateway looks for devices whose heartbeats stopped (LINTEL_DEVICE_SWEEP_MS, default 5 s) */
  sweepMs: number;
  /** how many times a device task is sent before it is `error` (LINTEL_DEVICE_TASK_ATTEMPTS, default 5) */
  taskAttempts?: number;
  /**
   * an external Mosquitto with its dynamic-security plugin: Lintel keeps the devices' broker accounts and their
   * topic rights through the plugin's control API (MQTT_DYNSEC; devices/dynsec.ts)
   */
  dynsec?: boolean;
  /**
   * the external broker's user name and password (MQTT_USERNAME, MQTT_PASSWORD; else those of MQTT_URL); with
   * MQTT_DYNSEC, the plugin's admin account
   */
  username?: string;
  password?: string;
}

export interface LicenceConfig {
  /** Ed25519 public keys trusted besides the shipped vendor keys (LINTEL_LICENCE_PUBLIC_KEYS, comma-separated) */
  publicKeys: string[];
  /** the licence server "add from cloud" asks (LINTEL_LICENCE_CLOUD_URL); none: that call says not configured */
  cloudUrl?: string;
  /** how long the licence server may take (LINTEL_LICENCE_CLOUD_TIMEOUT_MS) */
  cloudTimeoutMs: number;
  /** days of the evaluation licence a first start makes (LINTEL_EVALUATION_DAYS; 0: none) */
  evaluationDays: number;
}

const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) ? Number(v) : d);
const bool = (v: string | undefined, d: boolean) =>
  v === undefined || v === '' ? d : /^(1|true|yes|on)$/i.test(v);

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = int(env.PORT, 8080);
  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.LINTEL_DATA_DIR || './data'),
    demoDevicesFile: env.LINTEL_DEMO_DEVICES_FILE ? path.resolve(env.LINTEL_DEMO_DEVICES_FILE) : undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    dbWaitMs: int(env.LINTEL_DB_WAIT_MS, 2500),
    storageDir: path.resolve(env.LINTEL_STORAGE_DIR || path.join(env.LINTEL_DATA_DIR || './data', 'storage')),
    backupsDir: env.LINTEL_BACKUPS_DIR ? path.resolve(env.LINTEL_BACKUPS_DIR) : undefined,
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
      accountBlockAfter: int(env.LINTEL_LOGIN_ACCOUNT_BLOCK_AFTER, 20),
      maxDelayMs: int(env.LINTEL_LOGIN_MAX_DELAY_MS, 2000),
    },
    resendCodeAfterS: int(env.LINTEL_RESEND_CODE_AFTER, 60),
    codeTtlH: int(env.LINTEL_CODE_TTL_HOURS, 24),
    registrationOpen: bool(env.LINTEL_REGISTRATION_OPEN, false),
    selfRegistrationOpen: bool(env.LINTEL_SELF_REGISTRATION_OPEN, true),
    modules: (env.LINTEL_MODULES || 'events,jobs,devices,http,websocket')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean),
    jobs: {
      pollMs: int(env.LINTEL_JOBS_POLL_MS, defaultJobSettings.pollMs),
      leaseS: int(env.LINTEL_JOBS_LEASE_S, defaultJobSettings.leaseS),
      concurrency: int(env.LINTEL_JOBS_CONCURRENCY, defaultJobSettings.concurrency),
      backoffBaseS: int(env.LINTEL_JOBS_BACKOFF_S, defaultJobSettings.backoffBaseS),
      backoffCapS: int(env.LINTEL_JOBS_BACKOFF_CAP_S, defaultJobSettings.backoffCapS),
    },
    websocket: {
      ...defaultWebsocketSettings,
      pingMs: int(env.LINTEL_WS_PING_MS, defaultWebsocketSettings.pingMs),
      revalidateMs: int(env.LINTEL_WS_REVALIDATE_MS, defaultWebsocketSettings.revalidateMs),
    },
    redisUrl: env.REDIS_URL || undefined,
    listExactCount: int(env.LINTEL_LIST_EXACT_COUNT, 1_000),
    authCacheMs: int(env.LINTEL_AUTH_CACHE_MS, 10_000),
    checkResults: bool(
      env.LINTEL_CHECK_RESULTS,
      /^(test|development)$/.test(env.NODE_ENV ?? process.env.NODE_ENV ?? '') || Boolean(process.env.VITEST),
    ),
    licences: {
      publicKeys: (env.LINTEL_LICENCE_PUBLIC_KEYS || '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
      cloudUrl: env.LINTEL_LICENCE_CLOUD_URL || undefined,
      cloudTimeoutMs: int(env.LINTEL_LICENCE_CLOUD_TIMEOUT_MS, 10_000),
      evaluationDays: int(env.LINTEL_EVALUATION_DAYS, 30),
    },
    mqtt: {
      url: env.MQTT_URL || undefined,
      port: int(env.MQTT_PORT, 1884),
      host: env.MQTT_HOST || env.HOST || '0.0.0.0',
      publicUrl: env.MQTT_PUBLIC_URL || undefined,
      shared: bool(env.MQTT_SHARED, Boolean(env.MQTT_URL)),
      shareGroup: env.MQTT_SHARE_GROUP || undefined,
      requestTimeoutMs: int(env.LINTEL_DEVICE_REQUEST_TIMEOUT_MS, 10_000),
      searchProbeTimeoutMs: int(env.LINTEL_DEVICE_SEARCH_TIMEOUT_MS, DeviceSearchLimits.probeTimeoutMs),
      sweepMs: int(env.LINTEL_DEVICE_SWEEP_MS, 5_000),
      taskAttempts: int(env.LINTEL_DEVICE_TASK_ATTEMPTS, 5),
      dynsec: bool(env.MQTT_DYNSEC, false),
      username: env.MQTT_USERNAME || undefined,
      password: env.MQTT_PASSWORD || undefined,
    },
    ...overrides,
  };
}
