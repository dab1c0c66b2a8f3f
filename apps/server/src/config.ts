import type { WebhookSettings } from './webhooks/service';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { DeviceSearchLimits, WsLimits } from '@lintel/core';
import type { Clock } from './clock';
import { defaultImageSettings, type ImageSettings } from './storage/image-worker';
import { loadSipConfig, type SipConfig } from './sip/config';
import { defaultLogSettings, type LogSettings } from './logs/log-files';

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
  /**
   * an in-memory embedded database (`memory://`) only: a dump of a PGlite data folder (`Database.dump`) to
   * start from instead of an empty one — no initdb, and the migrations it holds are not run again. Set by
   * code, never by the environment: the tests start each server from one with the migrations applied
   * (tests/support/database-template.ts), which costs a fifth of the CPU of a first start.
   */
  pgliteTemplate?: Blob;
  databaseUrl?: string;
  /** embedded database only: ms a request may wait for the database (its own work before it asks not counted) before a 503 with Retry-After; 0: no bound */
  dbWaitMs: number;
  /**
   * closing: how long it waits for one module to stop before it goes on without it (modules/lifecycle.ts;
   * default 15 s). Set by code, not by the environment: tests that strand a module's work shorten it.
   */
  moduleStopBoundMs?: number;
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
  /** the image decoder's deadline and processes (storage/image-worker.ts) */
  images: ImageSettings;
  /** bounds on HTTP connections (issue 20, item 1; docs/decisions.md "Hardening, second pass (HTTP)") */
  http: HttpLimits;
  /** where the log goes (tests capture it); default stdout */
  logStream?: Writable;
  /**
   * the log files the server reads back (logs/log-files.ts): LINTEL_LOG_DIR (default the data folder's
   * `logs`), LINTEL_LOG_MAX_BYTES (one file's bound, default 10 MiB), LINTEL_LOG_FILES (files kept per log, 5)
   */
  logs: LogSettings;
  accessTtlS: number;
  refreshTtlS: number;
  /**
   * A refresh token presented again this soon after it was used (LINTEL_REFRESH_REUSE_GRACE_S, default 30 s)
   * is refused without revoking its session: two tabs of one browser refreshing at once (the second takes
   * the first's tokens). Later, a second use revokes the session as a stolen token's would.
   */
  refreshReuseGraceS: number;
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
  /**
   * a bearer token that reads `GET /api/v0/metrics` and nothing else (LINTEL_METRICS_TOKEN), for Prometheus,
   * which cannot refresh a session; none: only a session with `system_info.view` reads the metrics
   */
  metricsToken?: string;
  codeTtlH: number;
  registrationOpen: boolean;
  selfRegistrationOpen: boolean;
  /** the long-lived parts this instance runs, in start order (LINTEL_MODULES, default all: events,jobs,devices,access,sip,webhooks,http,websocket) */
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
  /** what devices may cost the server (docs/decisions.md "Hardening, second pass (devices)") */
  devices: DeviceLimits;
  /** the SIP service (sip/config.ts): LINTEL_SIP, LINTEL_SIP_PORT, LINTEL_SIP_WS_PORT, KAMAILIO_RPC_URL, … */
  sip: SipConfig;
  /** webhooks (webhooks/service.ts): LINTEL_WEBHOOK_INSECURE, LINTEL_WEBHOOK_TIMEOUT_MS, LINTEL_WEBHOOK_POLL_MS */
  webhooks: WebhookSettings;
  /**
   * the integrations' servers (integrations/axxon-one.ts): LINTEL_INTEGRATION_ALLOW_LOOPBACK,
   * LINTEL_INTEGRATION_TIMEOUT_MS; defaults when absent
   */
  integrations?: Partial<IntegrationSettings>;
  /** the access sync to the devices (access-sync/planner.ts); defaults when absent */
  accessSync?: Partial<AccessSyncConfig>;
}

export interface IntegrationSettings {
  /** the servers may be on loopback, link-local or unspecified addresses (tests and closed labs) */
  allowLoopback: boolean;
  /** how long one request to an integration's server may take, ms */
  timeoutMs: number;
}

export const defaultIntegrationSettings: IntegrationSettings = { allowLoopback: false, timeoutMs: 10_000 };

export interface AccessSyncConfig {
  /** how often the planner looks for committed access changes, ms (LINTEL_ACCESS_SYNC_MS, default 500; 0: only when asked) */
  pollMs: number;
  /** requests of the identifier API in one device task (LINTEL_ACCESS_SYNC_BATCH, default 500) */
  batchSize: number;
  /** requests of one task in flight to its device at once (LINTEL_ACCESS_SYNC_WINDOW, default 16) */
  window: number;
  /**
   * seconds before a device whose batch failed for good is planned again, doubling with each failed batch in
   * a row, at most a day (LINTEL_ACCESS_SYNC_REPLAN_S, default 300)
   */
  replanAfterS: number;
}

export const defaultAccessSync: AccessSyncConfig = {
  pollMs: 500,
  batchSize: 500,
  window: 16,
  replanAfterS: 300,
};

export interface DeviceLimits {
  /**
   * send to device addresses in loopback, link-local and unspecified ranges (LINTEL_DEVICE_ALLOW_LOOPBACK,
   * default off; the demo and the tests, whose simulated devices are on loopback, turn it on)
   */
  allowLoopback: boolean;
  /** the largest reply read from a device's own address (LINTEL_DEVICE_REPLY_MAX_BYTES, default 1 MiB) */
  replyMaxBytes: number;
  /** messages one device may push per window before it is refused on its own topic (LINTEL_DEVICE_PUSH_LIMIT, default 120 per 10 s) */
  pushLimit: number;
  pushWindowS: number;
  /**
   * device messages handled at once by this instance, all devices together (LINTEL_DEVICE_CONCURRENCY; 0, the
   * default: 2 on the embedded database, 5 of PostgreSQL's 10 connections) — always below the database's places
   */
  concurrency: number;
  /** device messages waiting for a place, all devices together; past it a push is refused (LINTEL_DEVICE_QUEUE, default 1,000) */
  queueMax: number;
  /** bytes of event pictures one device may keep (LINTEL_DEVICE_PICTURES_MAX_BYTES, default 256 MiB); past it a picture is refused */
  picturesPerDevice: number;
  /** bytes of event pictures all devices together may keep (LINTEL_PICTURES_MAX_BYTES, default 10 GiB) */
  picturesTotal: number;
}

export const defaultDeviceLimits: DeviceLimits = {
  allowLoopback: false,
  replyMaxBytes: 1024 * 1024,
  pushLimit: 120,
  pushWindowS: 10,
  concurrency: 0,
  queueMax: 1000,
  picturesPerDevice: 256 * 1024 * 1024,
  picturesTotal: 10 * 1024 * 1024 * 1024,
};

export interface HttpLimits {
  /** the whole request, headers and body, must arrive within this (LINTEL_HTTP_REQUEST_TIMEOUT_MS, default 120 s) */
  requestTimeoutMs: number;
  /** a connection that sends and receives nothing for this long is closed (LINTEL_HTTP_IDLE_TIMEOUT_MS, default 30 s) */
  idleTimeoutMs: number;
  /**
   * open connections from one address; the next is closed at once (LINTEL_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
   * default 256; behind a reverse proxy, LINTEL_TRUST_PROXY, default 0: the proxy is every caller; 0: no limit)
   */
  maxConnectionsPerAddress: number;
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
  /**
   * the embedded broker's TLS port (MQTT_TLS_PORT, default 8884; 0: any free port), where it serves mqtts:// once
   * a certificate is uploaded (`settings.broker_update`); none: no TLS listener
   */
  tlsPort?: number;
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
    logs: {
      dir: env.LINTEL_LOG_DIR ? path.resolve(env.LINTEL_LOG_DIR) : undefined,
      maxBytes: Math.max(4096, int(env.LINTEL_LOG_MAX_BYTES, defaultLogSettings.maxBytes)),
      files: Math.min(100, Math.max(1, int(env.LINTEL_LOG_FILES, defaultLogSettings.files))),
    },
    trustProxy: bool(env.LINTEL_TRUST_PROXY, false),
    images: {
      deadlineMs: int(env.LINTEL_IMAGE_DEADLINE_MS, defaultImageSettings.deadlineMs),
      decoders: int(env.LINTEL_IMAGE_DECODERS, defaultImageSettings.decoders),
    },
    http: {
      requestTimeoutMs: int(env.LINTEL_HTTP_REQUEST_TIMEOUT_MS, 120_000),
      idleTimeoutMs: int(env.LINTEL_HTTP_IDLE_TIMEOUT_MS, 30_000),
      maxConnectionsPerAddress: int(
        env.LINTEL_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
        bool(env.LINTEL_TRUST_PROXY, false) ? 0 : 256,
      ),
    },
    accessTtlS: int(env.LINTEL_ACCESS_TTL, 900),
    refreshTtlS: int(env.LINTEL_REFRESH_TTL, 30 * 24 * 3600),
    refreshReuseGraceS: int(env.LINTEL_REFRESH_REUSE_GRACE_S, 30),
    login: {
      slowAfter: int(env.LINTEL_LOGIN_SLOW_AFTER, 3),
      blockAfter: int(env.LINTEL_LOGIN_BLOCK_AFTER, 10),
      windowS: int(env.LINTEL_LOGIN_WINDOW, 900),
      accountBlockAfter: int(env.LINTEL_LOGIN_ACCOUNT_BLOCK_AFTER, 20),
      maxDelayMs: int(env.LINTEL_LOGIN_MAX_DELAY_MS, 2000),
    },
    resendCodeAfterS: int(env.LINTEL_RESEND_CODE_AFTER, 60),
    metricsToken: env.LINTEL_METRICS_TOKEN || undefined,
    codeTtlH: int(env.LINTEL_CODE_TTL_HOURS, 24),
    registrationOpen: bool(env.LINTEL_REGISTRATION_OPEN, false),
    // closed on a fresh install: an installer comes by invitation unless the operator opens it (issue 20 item 3)
    selfRegistrationOpen: bool(env.LINTEL_SELF_REGISTRATION_OPEN, false),
    modules: (env.LINTEL_MODULES || 'events,jobs,devices,access,sip,webhooks,http,websocket')
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
      maxSocketsPerUser: int(env.LINTEL_WS_MAX_PER_USER, defaultWebsocketSettings.maxSocketsPerUser),
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
      tlsPort: int(env.MQTT_TLS_PORT, 8884),
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
    devices: {
      allowLoopback: bool(env.LINTEL_DEVICE_ALLOW_LOOPBACK, defaultDeviceLimits.allowLoopback),
      replyMaxBytes: int(env.LINTEL_DEVICE_REPLY_MAX_BYTES, defaultDeviceLimits.replyMaxBytes),
      pushLimit: int(env.LINTEL_DEVICE_PUSH_LIMIT, defaultDeviceLimits.pushLimit),
      pushWindowS: int(env.LINTEL_DEVICE_PUSH_WINDOW_S, defaultDeviceLimits.pushWindowS),
      concurrency: int(env.LINTEL_DEVICE_CONCURRENCY, defaultDeviceLimits.concurrency),
      queueMax: int(env.LINTEL_DEVICE_QUEUE, defaultDeviceLimits.queueMax),
      picturesPerDevice: int(env.LINTEL_DEVICE_PICTURES_MAX_BYTES, defaultDeviceLimits.picturesPerDevice),
      picturesTotal: int(env.LINTEL_PICTURES_MAX_BYTES, defaultDeviceLimits.picturesTotal),
    },
    sip: loadSipConfig(env),
    webhooks: {
      insecure: bool(env.LINTEL_WEBHOOK_INSECURE, false),
      timeoutMs: int(env.LINTEL_WEBHOOK_TIMEOUT_MS, 10_000),
      pollMs: int(env.LINTEL_WEBHOOK_POLL_MS, 5_000),
    },
    integrations: {
      allowLoopback: bool(env.LINTEL_INTEGRATION_ALLOW_LOOPBACK, defaultIntegrationSettings.allowLoopback),
      timeoutMs: int(env.LINTEL_INTEGRATION_TIMEOUT_MS, defaultIntegrationSettings.timeoutMs),
    },
    accessSync: {
      pollMs: int(env.LINTEL_ACCESS_SYNC_MS, defaultAccessSync.pollMs),
      batchSize: int(env.LINTEL_ACCESS_SYNC_BATCH, defaultAccessSync.batchSize),
      window: int(env.LINTEL_ACCESS_SYNC_WINDOW, defaultAccessSync.window),
      replanAfterS: int(env.LINTEL_ACCESS_SYNC_REPLAN_S, defaultAccessSync.replanAfterS),
    },
    ...overrides,
  };
}

/** The job queue's settings (jobs/queue.ts). */
export interface JobSettings {
  /** how often an idle worker looks for due jobs */
  pollMs: number;
  /**
   * how long a claim holds before another instance may take the job over (LINTEL_JOBS_LEASE_S, default 30 s);
   * a running job extends it every third of it, so this bounds how long a dead instance's jobs wait
   */
  leaseS: number;
  /** jobs run at once per instance */
  concurrency: number;
  /** back-off: base × 2^(attempt-1), at most cap */
  backoffBaseS: number;
  backoffCapS: number;
}

export const defaultJobSettings: JobSettings = {
  pollMs: 1000,
  leaseS: 30,
  concurrency: 2,
  backoffBaseS: 10,
  backoffCapS: 3600,
};

/** The application websocket's settings (realtime/websocket.ts). */
export interface WebsocketSettings {
  /** how often sockets whose access token expired (by the server's clock) are closed */
  sweepMs: number;
  /** how often each socket is pinged; one that did not answer the previous ping is dropped */
  pingMs: number;
  /** how often the callers of open sockets are read again (revoked sessions, changed roles) */
  revalidateMs: number;
  /** bytes waiting to be sent to one socket past which it is closed as too slow */
  sendBufferBytes: number;
  /** a re-subscription also replays the events committed this long before its last one (commit order ≠ id order) */
  backlogOverlapS: number;
  maxSubscriptions: number;
  /** sockets one user may hold open on this instance (LINTEL_WS_MAX_PER_USER) */
  maxSocketsPerUser: number;
  messagesPerWindow: number;
  windowS: number;
  backlogLimit: number;
}

export const defaultWebsocketSettings: WebsocketSettings = {
  sweepMs: 1000,
  pingMs: 30_000,
  revalidateMs: 30_000,
  sendBufferBytes: 1024 * 1024,
  backlogOverlapS: 30,
  maxSubscriptions: WsLimits.maxSubscriptions,
  maxSocketsPerUser: WsLimits.maxSocketsPerUser,
  messagesPerWindow: WsLimits.messagesPerWindow,
  windowS: WsLimits.windowS,
  backlogLimit: WsLimits.backlogLimit,
};
