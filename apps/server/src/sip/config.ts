import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_INTERCEPT_RING_S, DEFAULT_WAITING_HOLD_S } from '@lintel/core';

/**
 * The SIP service's settings (environment, else defaults). `local`: Lintel renders Kamailio's configuration
 * from apps/server/sip/kamailio.cfg.tmpl and runs Kamailio itself; `remote`: a Kamailio run by someone else on
 * that template, driven through its JSON-RPC URL (KAMAILIO_RPC_URL); `off`: no telephony.
 */
export interface SipConfig {
  mode: 'local' | 'remote' | 'off';
  /** the Kamailio binary (KAMAILIO_BIN, default /usr/sbin/kamailio) */
  bin: string;
  /** Kamailio's modules folder (KAMAILIO_MODULES_DIR, default: found beside the binary's library folders) */
  modulesDir?: string;
  /** the address SIP listens on (LINTEL_SIP_HOST, default HOST, else every address) */
  host: string;
  /** SIP over UDP and TCP (LINTEL_SIP_PORT, default 5060) */
  port: number;
  /** SIP over secure websocket (LINTEL_SIP_WS_PORT, default 8443, the spec's) */
  wsPort: number;
  /** plain websocket instead of secure, allowed only when SIP listens on loopback (LINTEL_SIP_WS_PLAIN) */
  wsPlain: boolean;
  /** the websocket's certificate and key (LINTEL_SIP_TLS_CERT, LINTEL_SIP_TLS_KEY); none: a self-signed pair */
  tlsCert?: string;
  tlsKey?: string;
  /** the local Kamailio's JSON-RPC port on loopback (LINTEL_SIP_RPC_PORT, default 5071) */
  rpcPort: number;
  /** a remote Kamailio's JSON-RPC URL (KAMAILIO_RPC_URL, e.g. http://10.0.0.5:5071/RPC) */
  rpcUrl?: string;
  /** the digest realm the numbers' credentials are made for (LINTEL_SIP_REALM, default `lintel`) */
  realm: string;
  /** where the rendered configuration, pid and certificate live (LINTEL_SIP_RUNTIME_DIR; default data folder) */
  runtimeDir?: string;
  /** how long one JSON-RPC call may take (LINTEL_SIP_RPC_TIMEOUT_MS, default 3 s) */
  rpcTimeoutMs: number;
  /** Kamailio's log level (LINTEL_SIP_DEBUG, default 1: errors and warnings) */
  debug: number;
  /**
   * where Kamailio asks Lintel where calls go and tells it what happens to them (LINTEL_SIP_ROUTE_URL, e.g.
   * http://10.0.0.2:3000/api/v0/sip); default: this instance's own HTTP address once it listens
   */
  routeUrl?: string;
  /** how long Kamailio waits for Lintel's answer before its fallback route (LINTEL_SIP_ROUTE_TIMEOUT_S, default 1) */
  routeTimeoutS: number;
  /**
   * how long the routing's facts (numbers, owners, forward rules, trunks) are kept in memory at most
   * (LINTEL_SIP_ROUTE_CACHE_MS, default 60 s; 0: read for every call). Any change forgets them at once.
   */
  routeCacheMs: number;
  /**
   * how long an intercepted panel call rings the intercepting concierges before it waits
   * (LINTEL_SIP_INTERCEPT_RING_S, default 20), and how long the platform then holds it for a concierge to take
   * it (LINTEL_SIP_WAITING_HOLD_S, default 300)
   */
  interceptRingS: number;
  waitingHoldS: number;
  /**
   * the ICE servers the web dialer's browsers use (LINTEL_SIP_ICE_SERVERS: a JSON array of RTCIceServer, or
   * URLs separated by spaces or commas); none by default: no public STUN server is asked unless configured
   */
  iceServers: IceServer[];
  /**
   * what Kamailio advertises behind NAT (the SIP settings' public address and port; none by default: the
   * address it listens on), and how long a call rings unanswered before it is given up (default 60 s)
   */
  publicAddress?: string;
  publicPort?: number;
  ringTimeoutS: number;
}

/**
 * The SIP settings an installer saved (table `sip_settings`, settings.sip_update), each replacing the
 * environment's value; a key left out is the environment's.
 */
export interface StoredSipSettings {
  realm?: string;
  public_address?: string;
  public_port?: number;
  ice_servers?: IceServer[];
  ring_timeout_s?: number;
  route_timeout_s?: number;
  intercept_ring_s?: number;
  waiting_hold_s?: number;
}

/** The SIP service's settings in force: the environment's, with the saved SIP settings over them. */
export function withSipSettings(base: SipConfig, s: StoredSipSettings): SipConfig {
  return {
    ...base,
    realm: s.realm ?? base.realm,
    publicAddress: s.public_address !== undefined ? s.public_address || undefined : base.publicAddress,
    publicPort: s.public_port ?? base.publicPort,
    iceServers: s.ice_servers ?? base.iceServers,
    ringTimeoutS: s.ring_timeout_s ?? base.ringTimeoutS ?? 60,
    routeTimeoutS: s.route_timeout_s ?? base.routeTimeoutS,
    interceptRingS: s.intercept_ring_s ?? base.interceptRingS,
    waitingHoldS: s.waiting_hold_s ?? base.waitingHoldS,
  };
}

/** What the rendered configuration depends on among the settings: a change of it needs Kamailio restarted. */
export function renderedKey(c: SipConfig): string {
  return JSON.stringify([
    c.realm,
    c.publicAddress ?? '',
    c.publicPort ?? 0,
    c.ringTimeoutS,
    c.routeTimeoutS,
    c.interceptRingS,
    c.waitingHoldS,
  ]);
}

export interface IceServer {
  urls: string | string[];
  username?: string;
  credential?: string;
}

/** LINTEL_SIP_ICE_SERVERS: a JSON array of `{urls, username?, credential?}`, or URLs; bad JSON is refused. */
export function parseIceServers(value: string | undefined): IceServer[] {
  const text = (value ?? '').trim();
  if (!text) return [];
  if (text.startsWith('[')) {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) throw new Error('LINTEL_SIP_ICE_SERVERS: not an array');
    return parsed.map((s, i) => {
      const server = s as Partial<IceServer>;
      const urls = server.urls;
      const ok =
        typeof urls === 'string' || (Array.isArray(urls) && urls.every((u) => typeof u === 'string'));
      if (!ok) throw new Error(`LINTEL_SIP_ICE_SERVERS: entry ${i} has no urls`);
      return {
        urls: urls as string | string[],
        ...(typeof server.username === 'string' ? { username: server.username } : {}),
        ...(typeof server.credential === 'string' ? { credential: server.credential } : {}),
      };
    });
  }
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((urls) => ({ urls }));
}

const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) ? Number(v) : d);

export function loadSipConfig(env: NodeJS.ProcessEnv): SipConfig {
  const rpcUrl = env.KAMAILIO_RPC_URL || undefined;
  const mode = (env.LINTEL_SIP || '').toLowerCase();
  return {
    mode: mode === 'off' ? 'off' : rpcUrl ? 'remote' : 'local',
    bin: env.KAMAILIO_BIN || '/usr/sbin/kamailio',
    modulesDir: env.KAMAILIO_MODULES_DIR || undefined,
    host: env.LINTEL_SIP_HOST || env.HOST || '0.0.0.0',
    port: int(env.LINTEL_SIP_PORT, 5060),
    wsPort: int(env.LINTEL_SIP_WS_PORT, 8443),
    wsPlain: /^(1|true|yes|on)$/i.test(env.LINTEL_SIP_WS_PLAIN ?? ''),
    tlsCert: env.LINTEL_SIP_TLS_CERT || undefined,
    tlsKey: env.LINTEL_SIP_TLS_KEY || undefined,
    rpcPort: int(env.LINTEL_SIP_RPC_PORT, 5071),
    rpcUrl,
    realm: env.LINTEL_SIP_REALM || 'lintel',
    runtimeDir: env.LINTEL_SIP_RUNTIME_DIR || undefined,
    rpcTimeoutMs: int(env.LINTEL_SIP_RPC_TIMEOUT_MS, 3_000),
    debug: int(env.LINTEL_SIP_DEBUG, 1),
    iceServers: parseIceServers(env.LINTEL_SIP_ICE_SERVERS),
    routeUrl: env.LINTEL_SIP_ROUTE_URL || undefined,
    routeTimeoutS: Math.max(1, int(env.LINTEL_SIP_ROUTE_TIMEOUT_S, 1)),
    routeCacheMs: int(env.LINTEL_SIP_ROUTE_CACHE_MS, 60_000),
    interceptRingS: Math.max(1, int(env.LINTEL_SIP_INTERCEPT_RING_S, DEFAULT_INTERCEPT_RING_S)),
    waitingHoldS: Math.max(1, int(env.LINTEL_SIP_WAITING_HOLD_S, DEFAULT_WAITING_HOLD_S)),
    publicAddress: env.LINTEL_SIP_PUBLIC_ADDRESS || undefined,
    publicPort: int(env.LINTEL_SIP_PUBLIC_PORT, 0) || undefined,
    ringTimeoutS: Math.max(1, int(env.LINTEL_SIP_RING_TIMEOUT_S, 60)),
  };
}

/** The template beside the migrations: apps/server/sip in the repository, found from src/ or dist/. */
export function templatePath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'sip', 'kamailio.cfg.tmpl');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('the SIP template (sip/kamailio.cfg.tmpl) was not found');
}

const MODULE_DIRS = [
  '/usr/lib/x86_64-linux-gnu/kamailio/modules',
  '/usr/lib/aarch64-linux-gnu/kamailio/modules',
  '/usr/lib64/kamailio/modules',
  '/usr/lib/kamailio/modules',
  '/usr/local/lib64/kamailio/modules',
  '/usr/local/lib/kamailio/modules',
];

/** Kamailio's modules folder, or undefined when the modules Lintel needs are not installed. */
export function findModulesDir(config: SipConfig): string | undefined {
  const dirs = config.modulesDir ? [config.modulesDir] : MODULE_DIRS;
  return dirs.find((d) =>
    ['websocket.so', 'jsonrpcs.so', 'htable.so', 'xhttp.so', 'http_client.so', 'dialog.so'].every((m) =>
      fs.existsSync(path.join(d, m)),
    ),
  );
}

const isLoopback = (host: string) => host === 'localhost' || /^127\./.test(host) || host === '::1';

export interface Rendered {
  file: string;
  text: string;
}

/** Renders the template with the settings; `tlsConfig` is the tls module's file when the websocket is secure. */
export function renderConfig(
  config: SipConfig,
  modulesDir: string,
  tlsConfig: string | undefined,
  runtimeDir: string,
  template = fs.readFileSync(templatePath(), 'utf8'),
): string {
  const plain = config.wsPlain && isLoopback(config.host);
  // behind NAT: the public address (and port) Kamailio writes in Via, Record-Route and Contact
  const pub = config.publicAddress?.includes(':') ? `[${config.publicAddress}]` : config.publicAddress;
  const advertise = (port: number) => (pub ? ` advertise ${pub}:${port}` : '');
  const values: Record<string, string> = {
    DEFINES: plain ? '' : '#!define WITH_WSS',
    DEBUG: String(config.debug),
    SIP_HOST: config.host,
    SIP_PORT: String(config.port),
    SIP_ADVERTISE: advertise(config.publicPort ?? config.port),
    WS_ADVERTISE: advertise(config.wsPort),
    FR_INV_TIMER_MS: String(Math.max(1, config.ringTimeoutS ?? 60) * 1000),
    WS_PORT: String(config.wsPort),
    RPC_HOST: '127.0.0.1',
    RPC_PORT: String(config.rpcPort),
    MODULES_DIR: modulesDir.endsWith('/') ? modulesDir : `${modulesDir}/`,
    REALM: config.realm.replace(/[^A-Za-z0-9._-]/g, ''),
    TLS_CONFIG: tlsConfig ?? '',
    UACREG_DIR: uacregDir(runtimeDir),
    REG_CONTACT: registrationContact(config),
    ROUTE_TIMEOUT_S: String(Math.max(1, Math.floor(config.routeTimeoutS ?? 1))),
    // the longest plan: three minutes (the SIP default) or an intercepted call's ring and wait, and a margin
    MAX_INV_LIFETIME_MS: String(
      Math.max(
        180,
        (config.interceptRingS ?? DEFAULT_INTERCEPT_RING_S) +
          (config.waitingHoldS ?? DEFAULT_WAITING_HOLD_S) +
          60,
      ) * 1000,
    ),
  };
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`the SIP template names an unknown value {{${name}}}`);
    return v;
  });
}

/** The folder of the empty table Kamailio's trunk registrations start from (`writeUacregTable`). */
export const uacregDir = (runtimeDir: string) => path.join(runtimeDir, 'uacreg');

/**
 * The table Kamailio's `uac` module reads its registrations from at start, empty (db_text, the `uacreg` table
 * of version 5 with the version table): Lintel gives the records over JSON-RPC (`uac.reg_add`).
 */
export function writeUacregTable(runtimeDir: string): void {
  const dir = uacregDir(runtimeDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dir, 'version'), 'table_name(string) table_version(int)\nuacreg:5\n');
  fs.writeFileSync(
    path.join(dir, 'uacreg'),
    'id(int,auto) l_uuid(string) l_username(string) l_domain(string) r_username(string) r_domain(string) ' +
      'realm(string) auth_username(string) auth_password(string) auth_ha1(string,null) auth_proxy(string) ' +
      'expires(int) flags(int) reg_delay(int) contact_addr(string,null) socket(string,null)\n',
  );
}

/**
 * The address a trunk's provider sends its calls to (the Contact of Kamailio's registration): the public
 * address and port when set (behind NAT), else the address SIP listens on — when that is every address, the
 * machine's first address that is not loopback.
 */
export function registrationContact(config: SipConfig): string {
  let host = config.publicAddress ?? config.host;
  if (host === '0.0.0.0' || host === '::' || host === '') {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    host = external?.address ?? '127.0.0.1';
  }
  const port = config.publicAddress ? (config.publicPort ?? config.port) : config.port;
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Whether the websocket is plain (tests on loopback) rather than secure. */
export const wsIsPlain = (config: SipConfig) => config.wsPlain && isLoopback(config.host);

/** The runtime folder: the configured one, the data folder's `sip`, or a private temporary one (memory://). */
export function runtimeDirFor(config: SipConfig, dataDir: string): string {
  const dir =
    config.runtimeDir ??
    (dataDir.startsWith('memory://')
      ? fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-sip-'))
      : path.join(dataDir, 'sip'));
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The HA1 Kamailio checks a number's password against: MD5 of `number:realm:password` (RFC 2617). */
export function sipHa1(number: string, realm: string, password: string): string {
  return crypto.createHash('md5').update(`${number}:${realm}:${password}`).digest('hex');
}
