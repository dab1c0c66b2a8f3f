import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { NotificationType } from '@lintel/core';
import type { ServerContext } from '../context';
import { notify } from '../notifications/notify';
import {
  findModulesDir,
  renderConfig,
  renderedKey,
  runtimeDirFor,
  withSipSettings,
  writeUacregTable,
  wsIsPlain,
  type SipConfig,
  type StoredSipSettings,
} from './config';
import { activeSipBans } from './abuse';
import { TRUNK_REGISTRATION_PREFIX, trunkAddresses, trunkRegistrations } from './trunks';
import { CallWriter } from './call-writer';
import { catchUpCalls } from './catch-up';
import { kamailioRpc } from './rpc-client';

/** Why telephony is down (locale texts `sip.reasons.<reason>` in web.json). */
export type SipDownReason =
  'disabled' | 'not_installed' | 'start_failed' | 'exited' | 'unreachable' | 'stopped';

export interface SipStatus {
  state: 'up' | 'down' | 'starting';
  reason: SipDownReason | null;
  mode: SipConfig['mode'];
  instances: {
    type: 'kamailio';
    ip_address: string;
    state: 'up' | 'down' | 'starting';
    version: string | null;
    pid: number | null;
    restarts: number;
    started_at: string | null;
    sip_port: number | null;
    ws_port: number | null;
    public_address: string | null;
    uptime_s: number | null;
    contacts: number | null;
    dialogs: number | null;
    trunks: { id: number; state: 'registered' | 'registering' | 'failed' }[];
  }[];
  listen: { sip_port: number; ws_port: number; ws_secure: boolean; realm: string } | null;
  numbers: number;
  /** the last time telephony went down, and why (it may be up again since) */
  last_failure: { reason: SipDownReason; at: string } | null;
}

/** What a change of the SIP settings did to the SIP server. */
export type SipApplied = 'restarted' | 'reinitialised' | 'unchanged' | 'not_running' | 'failed';

/** the back-off between restarts of a Kamailio that died: 0.5 s doubling up to 30 s */
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;
/** How long a registration with a trunk lasts before Kamailio renews it, seconds */
const REGISTRATION_EXPIRES_S = 300;
/** Kamailio's shared memory, MB (calls in progress and the ~5 s after each; docs/decisions.md) */
const SHM_MB = 256;
/** how long a starting Kamailio has to answer JSON-RPC */
const START_TIMEOUT_MS = 20_000;

/**
 * The SIP service (the `sip` module of the lifecycle): Lintel's SIP server is Kamailio, configured from the
 * project's template (sip/config.ts), started and supervised here (restarted with back-off when it dies,
 * stopped on close) or, with KAMAILIO_RPC_URL, run by someone else. Lintel drives it over JSON-RPC: the
 * numbers' credentials go into its `sipauth` htable when it starts and whenever a number changes.
 * Without Kamailio, or when it cannot start, telephony is down with a reason and nothing else is.
 */
export class SipService {
  private state: SipStatus['state'] = 'down';
  private reason: SipDownReason | null = 'stopped';
  private child: ChildProcess | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private backoffMs = BACKOFF_MIN_MS;
  private restarts = 0;
  private startedAt: Date | null = null;
  private version: string | null = null;
  private runtimeDir: string | null = null;
  private unsubscribe: (() => void) | null = null;
  private stderr: string[] = [];
  private loaded = 0;
  private lastFailure: SipStatus['last_failure'] = null;
  /** a Lintel that exits without closing (an uncaught error, `process.exit`) takes its Kamailio with it */
  private readonly onProcessExit = () => {
    if (this.child) killGroup(this.child, 'SIGKILL');
    if (this.adopted !== null) signalGroup(this.adopted, 'SIGKILL');
  };
  /** a Kamailio taken over from a Lintel that was killed (its main process id), watched by `adoptedWatch` */
  private adopted: number | null = null;
  private adoptedWatch: NodeJS.Timeout | null = null;
  /** where Kamailio reaches Lintel's SIP routes (sip.route, sip.call_event), once this instance listens */
  private routeBase: string | null = null;
  private secretValue: string | null = null;
  /** the saved SIP settings (table `sip_settings`), over the environment's; read at start and on each change */
  private stored: StoredSipSettings = {};
  private settingsLive = false;
  /** what the running Kamailio was configured with (renderedKey; a remote one: its realm) */
  private runningKey: string | null = null;
  /** serialises starts, restarts and credential loads */
  private chain: Promise<unknown> = Promise.resolve();

  /** the calls' writes, after the routing's answers and in the order of the calls' events (sip/call-writer.ts) */
  readonly writes: CallWriter;
  /** this run of Lintel, in the generations of routes it gives Kamailio (`routeGeneration`) */
  private readonly runTag = crypto.randomBytes(4).toString('hex');
  /** the routes Kamailio keeps are being forgotten (`forgetRoutes`), and whether they must be once more */
  private routesFlush: Promise<void> | null = null;
  private routesDirty = false;
  /** whether an answer Kamailio may keep went out since it last forgot its routes, and how often it did */
  private routesGiven = false;
  private routeFlushes = 0;
  private offRoutes: (() => void) | null = null;

  /** made with the way to the context it is a part of (server.ts), read when it runs */
  constructor(private readonly contextOf: () => ServerContext) {
    this.writes = new CallWriter(contextOf);
  }

  private get ctx(): ServerContext {
    return this.contextOf();
  }

  /** The SIP service's settings in force: the environment's (config.sip) with the saved SIP settings over them. */
  get config(): SipConfig {
    return withSipSettings(this.ctx.config.sip, this.stored);
  }

  /** The saved SIP settings as they are in the database (an empty object: none saved). */
  async readSettings(db: Kysely<DB> = this.ctx.db): Promise<StoredSipSettings> {
    const row = await sql<{
      settings: StoredSipSettings | string;
    }>`select settings from sip_settings where id`.execute(db);
    const v = row.rows[0]?.settings;
    return (typeof v === 'string' ? (JSON.parse(v) as StoredSipSettings) : v) ?? {};
  }

  /**
   * The settings in force, read afresh unless this instance runs the SIP service (which keeps them current from
   * SipSettingsChangedEvent): an instance without the `sip` module makes numbers' HA1 with the saved realm too.
   */
  async currentConfig(db: Kysely<DB> = this.ctx.db): Promise<SipConfig> {
    if (this.settingsLive) return this.config;
    return withSipSettings(this.ctx.config.sip, await this.readSettings(db));
  }

  /**
   * The SIP settings changed (settings.sip_update here, or SipSettingsChangedEvent from another instance):
   * read them, and when what Kamailio was configured with changed, render its configuration again and restart
   * it (local), or load the numbers' credentials for the new realm (remote). `projectId`: whose people are told
   * of the SIP reboot (the instance where the change was made tells them; the others restart quietly).
   */
  async applySettings(projectId: number | null): Promise<SipApplied> {
    this.stored = await this.readSettings();
    if (!this.settingsLive || this.stopping) return 'not_running';
    const c = this.config;
    if (c.mode === 'off') return 'not_running';
    if (c.mode === 'remote') {
      if (this.state !== 'up') return 'not_running';
      if (this.runningKey === c.realm) return 'unchanged';
      if (projectId !== null) await this.notifyReboot(projectId, 'sip_reboot_started');
      const ok = await this.serial(() =>
        this.loadCredentials(true).then(
          () => ((this.runningKey = c.realm), true),
          () => false,
        ),
      );
      if (projectId !== null)
        await this.notifyReboot(projectId, ok ? 'sip_reboot_completed' : 'sip_reboot_error');
      return ok ? 'reinitialised' : 'failed';
    }
    if (!this.installed()) return 'not_running';
    if (this.state === 'up' && this.runningKey === renderedKey(c)) return 'unchanged';
    this.ctx.log.info('the SIP settings changed: the SIP server is restarted with them');
    if (projectId !== null) await this.restart(projectId);
    else await this.serial(() => this.relaunch());
    return this.state === 'up' ? 'restarted' : 'failed';
  }

  get rpcUrl(): string {
    return this.config.rpcUrl ?? `http://127.0.0.1:${this.config.rpcPort}/RPC`;
  }

  /** Telephony is configured on this installation (local Kamailio installed, or a remote one). */
  get enabled(): boolean {
    if (this.config.mode === 'off') return false;
    if (this.config.mode === 'remote') return true;
    return this.installed();
  }

  private installed(): boolean {
    return fs.existsSync(this.config.bin) && !!findModulesDir(this.config);
  }

  async start(): Promise<void> {
    this.stopping = false;
    process.on('exit', this.onProcessExit);
    this.stored = await this.readSettings().catch((err: Error) => {
      this.ctx.log.warn({ err: err.message }, 'the SIP settings could not be read: the environment is used');
      return {};
    });
    this.settingsLive = true;
    this.offRoutes = this.ctx.routeCache.onClear(() => void this.forgetRoutes());
    this.unsubscribe = this.ctx.events.subscribe((m) => {
      if (m.data.type === 'SipSettingsChangedEvent') {
        void this.applySettings(null).catch((err: Error) =>
          this.ctx.log.warn({ err: err.message }, 'the SIP settings did not reach the SIP server'),
        );
        return;
      }
      // a number or a trunk changed on whichever instance: the routing reads it afresh (sip/calls.ts)
      if (m.data.type === 'SipNumberChangedEvent' || m.data.type === 'SipTrunkChangedEvent')
        this.ctx.routeCache.clear();
      if (m.data.type === 'SipTrunkChangedEvent' && this.state === 'up') {
        void this.serial(() =>
          this.loadTrunks().catch((err: Error) =>
            this.ctx.log.warn({ err: err.message }, 'the SIP trunks did not reach the SIP server'),
          ),
        );
        return;
      }
      if (m.data.type !== 'SipNumberChangedEvent' || this.state !== 'up') return;
      const numbers = (m.data as { numbers?: unknown }).numbers;
      if (Array.isArray(numbers)) void this.serial(() => this.syncNumbers(numbers.map(String)));
    });
    if (this.config.mode === 'off') return this.down('disabled');
    await this.serial(() => this.boot());
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.offRoutes?.();
    this.offRoutes = null;
    await this.routesFlush;
    this.settingsLive = false;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.chain.catch(() => undefined);
    // the calls routed and told so far are written before the database closes
    await this.writes.idle().catch(() => undefined);
    await this.kill();
    process.off('exit', this.onProcessExit);
    // a private temporary folder (memory:// data) goes with the instance
    if (this.runtimeDir && !this.config.runtimeDir && this.ctx.config.dataDir.startsWith('memory://'))
      fs.rmSync(this.runtimeDir, { recursive: true, force: true });
    this.runtimeDir = null;
    this.down('stopped');
  }

  status(): SipStatus {
    const c = this.config;
    return {
      state: this.state,
      reason: this.state === 'up' ? null : this.reason,
      mode: c.mode,
      instances:
        c.mode === 'off'
          ? []
          : [
              {
                type: 'kamailio',
                ip_address: c.mode === 'remote' ? new URL(this.rpcUrl).hostname : c.host,
                state: this.state,
                version: this.version,
                pid: this.child?.pid ?? this.adopted,
                restarts: this.restarts,
                started_at: this.startedAt?.toISOString() ?? null,
                sip_port: c.mode === 'local' ? c.port : null,
                ws_port: c.mode === 'local' ? c.wsPort : null,
                public_address: c.publicAddress ?? null,
                uptime_s: null,
                contacts: null,
                dialogs: null,
                trunks: [],
              },
            ],
      listen:
        c.mode === 'off'
          ? null
          : { sip_port: c.port, ws_port: c.wsPort, ws_secure: !wsIsPlain(c), realm: c.realm },
      numbers: this.loaded,
      last_failure: this.lastFailure,
    };
  }

  /** The status, with a remote Kamailio asked whether it answers. */
  async check(): Promise<SipStatus> {
    if (this.config.mode === 'remote' && !this.stopping) {
      const ok = await this.rpc('core.version').then(
        () => true,
        () => false,
      );
      if (!ok && this.state === 'up') this.down('unreachable');
      if (ok && this.state !== 'up') await this.serial(() => this.boot());
    }
    const status = this.status();
    if (this.state === 'up' && status.instances[0]) Object.assign(status.instances[0], await this.figures());
    return status;
  }

  /** Kamailio's last lines of output (up to 200, kept for the error log of a failed start): for diagnostics. */
  recentOutput(): string[] {
    return [...this.stderr];
  }

  /**
   * What the SIP node says of itself (spec part 1 §2.4 "SIP nodes"): how long it has run, the contacts its
   * registrar holds and the dialogs in progress; null for what it does not answer.
   */
  private async figures(): Promise<{
    uptime_s: number | null;
    contacts: number | null;
    dialogs: number | null;
    trunks: { id: number; state: 'registered' | 'registering' | 'failed' }[];
  }> {
    const stat = async (name: string) => {
      // by its bare name (`group:name` is not a name it takes); answers `group:name = value` lines
      const lines = await this.rpc<string[]>('stats.get_statistics', [name]).catch(() => null);
      const found = lines?.map((l) => new RegExp(`:${name} = (\\d+)`).exec(l)).find(Boolean);
      return found ? Number(found[1]) : null;
    };
    const uptime = await this.rpc<{ uptime?: number }>('core.uptime').catch(() => null);
    return {
      uptime_s: typeof uptime?.uptime === 'number' ? Math.floor(uptime.uptime) : null,
      contacts: await stat('location_contacts'),
      dialogs: await stat('active_dialogs'),
      trunks: [...(await this.trunkRegistrationStates())]
        .map(([id, state]) => ({ id, state }))
        .sort((a, b) => a.id - b.id),
    };
  }

  /** Loads every number's credentials again (spec: SIP instances re-initialised). */
  async reinit(projectId: number): Promise<SipStatus> {
    await this.notifyReboot(projectId, 'sip_reboot_started');
    const ok = await this.serial(async () => {
      if (this.state !== 'up') return false;
      return this.loadCredentials(true).then(
        () =>
          this.loadBans()
            .then(() => this.trunksLoaded())
            .then(() => true),
        () => false,
      );
    });
    await this.notifyReboot(projectId, ok ? 'sip_reboot_completed' : 'sip_reboot_error');
    return this.status();
  }

  /** Restarts the SIP server (local: a new Kamailio; remote: its credentials loaded again). */
  async restart(projectId: number): Promise<SipStatus> {
    await this.notifyReboot(projectId, 'sip_reboot_started');
    await this.serial(() => this.relaunch());
    await this.notifyReboot(projectId, this.state === 'up' ? 'sip_reboot_completed' : 'sip_reboot_error');
    return this.status();
  }

  /** A new Kamailio (local) with the settings in force, or the remote one reached again. */
  private async relaunch(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.kill();
    this.backoffMs = BACKOFF_MIN_MS;
    await this.boot();
  }

  /**
   * The installation's SIP secret: what Kamailio shows Lintel when it asks where a call goes (the `sip`
   * principal). Made by the first instance that needs it and shared through the database, so any instance
   * answers a Kamailio that another one configured; it reaches Kamailio over JSON-RPC only.
   */
  async secret(): Promise<string> {
    if (this.secretValue) return this.secretValue;
    await sql`insert into installation_secrets (name, value) values ('sip_route_secret', ${crypto.randomBytes(32).toString('hex')})
      on conflict (name) do nothing`.execute(this.ctx.db);
    const row = await sql<{
      value: string;
    }>`select value from installation_secrets where name = 'sip_route_secret'`.execute(this.ctx.db);
    this.secretValue = row.rows[0]!.value;
    return this.secretValue;
  }

  /**
   * Kamailio asks this instance where calls go once it listens (`address`: its HTTP address), or the
   * configured LINTEL_SIP_ROUTE_URL. Until then, and whenever Lintel does not answer, its fallback route rings
   * the number dialled.
   */
  async routeThrough(address: string): Promise<void> {
    if (this.config.mode === 'off') return;
    let base = this.config.routeUrl;
    if (!base && address) {
      const url = new URL(address);
      // Kamailio runs beside this instance: its loopback reaches whatever address HTTP listens on
      if (this.config.mode === 'local' && (url.hostname === '0.0.0.0' || url.hostname === '[::]'))
        url.hostname = '127.0.0.1';
      base = `${url.origin}/api/v0/sip`;
    }
    if (!base) return;
    this.routeBase = base.replace(/\/+$/, '');
    await this.serial(async () => {
      if (this.state === 'up') await this.pushRoute().catch(() => undefined);
    });
  }

  /**
   * Lintel's address and secret into Kamailio's `lintel` table, after catching up on the call events Kamailio
   * kept while it could not give them (sip/catch-up.ts); what it kept meanwhile is read once Lintel is named.
   */
  private async pushRoute(): Promise<void> {
    if (!this.routeBase) return;
    await this.catchUp();
    await this.rpc('htable.sets', ['lintel', 'secret', await this.secret()]);
    // the routes it kept (from an earlier run of Lintel, or before a change it missed) are forgotten
    this.routeFlushes++;
    this.routesGiven = false;
    await this.rpc('htable.sets', ['lintel', 'gen', this.routeGeneration()]);
    await this.rpc('htable.flush', ['routes']);
    await this.rpc('htable.sets', ['lintel', 'route', this.routeBase]);
    await this.catchUp();
  }

  private async catchUp(): Promise<void> {
    await catchUpCalls(this.ctx, (method, params) => this.rpc(method, params)).catch((err: Error) =>
      this.ctx.log.warn({ err: err.message }, 'the call events the SIP server kept were not all read'),
    );
  }

  /**
   * The generation of the routes Kamailio keeps (htable `lintel`, `gen`): this run of Lintel's (a route an
   * earlier run gave is never taken for a current one) and how many times it was told to forget them. Kamailio
   * keeps a route's answer (table `routes`) only when the answer's generation is the one it holds, so an answer
   * still on its way when Kamailio forgot its routes is not kept.
   */
  private routeGeneration(): string {
    return `${this.runTag}-${this.routeFlushes}`;
  }

  /**
   * A route answer read in the route cache's `epoch` goes out: the generation Kamailio may keep it under, or
   * null when the facts changed while it was read (then it must not be kept). Kamailio is told to forget its
   * routes at the next change.
   */
  routeKeepable(epoch: number): string | null {
    if (epoch !== this.ctx.routeCache.generation) return null;
    this.routesGiven = true;
    return this.routeGeneration();
  }

  /**
   * The facts the routing reads changed (the route cache was cleared, `onClear`): Kamailio is given the new
   * generation, then forgets the routes it keeps — when it may keep some. Changes while that is under way make
   * one more round, not one each. `routesSettled` is what a command that changed something waits for.
   */
  private forgetRoutes(): Promise<void> {
    // a Kamailio not up now is given the generation and forgets its routes when it is (pushRoute)
    if (this.state !== 'up' || !this.routeBase) return Promise.resolve();
    if (!this.routesGiven && !this.routesFlush) return Promise.resolve();
    this.routesDirty = true;
    if (this.routesFlush) return this.routesFlush;
    this.routesFlush = (async () => {
      while (this.routesDirty) {
        this.routesDirty = false;
        this.routesGiven = false;
        this.routeFlushes++;
        await this.rpc('htable.sets', ['lintel', 'gen', this.routeGeneration()])
          .then(() => this.rpc('htable.flush', ['routes']))
          .catch((err: Error) =>
            this.ctx.log.warn({ err: err.message }, 'the SIP server did not forget the routes it keeps'),
          );
      }
    })().finally(() => {
      this.routesFlush = null;
    });
    return this.routesFlush;
  }

  /** Once Kamailio has forgotten the routes a change made stale (at once when it keeps none). */
  routesSettled(): Promise<void> {
    return this.routesFlush ?? Promise.resolve();
  }

  /** One JSON-RPC call to Kamailio (sip/rpc-client.ts); a JSON-RPC error or no answer in time is thrown. */
  rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return kamailioRpc<T>(this.rpcUrl, this.config.rpcTimeoutMs, method, params);
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private down(reason: SipDownReason): void {
    if (reason === 'exited' || reason === 'start_failed' || reason === 'unreachable')
      this.lastFailure = { reason, at: this.ctx.clock.now().toISOString() };
    this.state = 'down';
    this.reason = reason;
    this.loaded = 0;
  }

  /** Starts (local) or reaches (remote) Kamailio and loads the credentials; failures leave it down. */
  private async boot(): Promise<void> {
    if (this.stopping) return;
    if (this.config.mode === 'remote') {
      try {
        this.version = await this.rpc<string>('core.version');
        this.runningKey = this.config.realm;
        await this.loadCredentials(true);
        await this.loadBans();
        await this.trunksLoaded();
        await this.pushRoute();
        this.state = 'up';
        this.reason = null;
        this.startedAt = this.ctx.clock.now();
      } catch (err) {
        this.ctx.log.warn(
          { err: (err as Error).message },
          'the SIP server (KAMAILIO_RPC_URL) does not answer',
        );
        this.down('unreachable');
      }
      return;
    }
    const modulesDir = findModulesDir(this.config);
    if (!fs.existsSync(this.config.bin) || !modulesDir) {
      this.ctx.log.warn(
        'telephony is down: Kamailio is not installed (Debian: apt-get install kamailio kamailio-websocket-modules kamailio-tls-modules kamailio-json-modules)',
      );
      return this.down('not_installed');
    }
    this.state = 'starting';
    this.reason = null;
    try {
      await this.launch(modulesDir);
      await this.loadCredentials(true);
      await this.loadBans();
      await this.trunksLoaded();
      await this.pushRoute();
      this.state = 'up';
      this.backoffMs = BACKOFF_MIN_MS;
      this.ctx.log.info(
        { pid: this.child?.pid ?? this.adopted, port: this.config.port },
        'the SIP server is up',
      );
    } catch (err) {
      this.ctx.log.error(
        { err: (err as Error).message, output: this.stderr.slice(-20).join('\n') },
        'the SIP server did not start',
      );
      await this.kill();
      this.down('start_failed');
      this.scheduleRestart();
    }
  }

  private async launch(modulesDir: string): Promise<void> {
    const dir = (this.runtimeDir ??= runtimeDirFor(this.config, this.ctx.config.dataDir));
    const pidFile = path.join(dir, 'kamailio.pid');
    const tls = wsIsPlain(this.config) ? undefined : this.tlsConfig(dir);
    const cfg = path.join(dir, 'kamailio.cfg');
    const config = this.config;
    const rendered = renderConfig(config, modulesDir, tls, dir);
    this.runningKey = renderedKey(config);
    if (await this.adopt(pidFile, cfg, rendered)) return;
    this.killStale(pidFile);
    writeUacregTable(dir);
    fs.writeFileSync(cfg, rendered, { mode: 0o600 });
    this.stderr = [];
    const child = spawn(
      this.config.bin,
      // shared memory: each call's transactions are held about 5 s after it ends (tm's wait timer), some 33 KB a
      // call; 64 MB ran out after 1,500 calls in three seconds (bench/sip-routing) and every new call was refused
      // with a 500. Only the pages used are the machine's.
      ['-DD', '-E', '-f', cfg, '-P', pidFile, '-Y', dir, '-m', String(SHM_MB), '-M', '8'],
      // its own process group: Kamailio's children outlive a main process that was killed, and are ended
      // with it by the group
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    this.child = child;
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        // the `sip` system log (logs/log-files.ts), scrubbed there
        this.ctx.logFiles.write('sip', line);
        this.stderr.push(line);
        if (this.stderr.length > 200) this.stderr.shift();
      }
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
    child.once('error', (err) => this.stderr.push(err.message));
    // ready when JSON-RPC answers
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const answer = await Promise.race([
        this.rpc<string>('core.version').then(
          (v) => ({ v }),
          () => null,
        ),
        exited.then(() => ({ exited: true })),
      ]);
      if (answer && 'exited' in answer) throw new Error('kamailio exited while starting');
      if (answer) {
        this.version = answer.v.trim();
        break;
      }
      if (Date.now() > deadline) throw new Error('kamailio did not answer JSON-RPC');
      await new Promise((r) => setTimeout(r, 50));
    }
    this.startedAt = this.ctx.clock.now();
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    // whatever ended the main process, its children go too (they hold the ports)
    killGroup(child, 'SIGKILL');
    if (this.child !== child) return;
    this.child = null;
    if (this.stopping) return;
    this.ctx.log.error(
      { code, signal, output: this.stderr.slice(-20).join('\n') },
      'the SIP server stopped; restarting it',
    );
    if (this.state !== 'starting') {
      this.down('exited');
      this.scheduleRestart();
    }
  }

  private scheduleRestart(): void {
    if (this.stopping || this.restartTimer) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.restarts++;
      void this.serial(() => this.boot());
    }, wait);
    this.restartTimer.unref();
  }

  private async kill(): Promise<void> {
    await this.killAdopted();
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.child = null;
      return;
    }
    this.child = null;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
    // the children it forked hold the SIP ports until they have exited too: a Kamailio started before that
    // could not bind them and exited while starting (a restart answered "failed", seen in CI under load)
    if (child.pid) await groupGone(child.pid);
  }

  /**
   * A Kamailio left running on this runtime folder by a Lintel that was killed, on the very configuration this
   * instance would start, is taken over rather than ended: its registrations and calls go on, and the call
   * events it kept meanwhile are caught up on (sip/catch-up.ts). Watched by its process id (it is not this
   * process's child: its exit is not reported), ended by its process group like a started one.
   */
  private async adopt(pidFile: string, cfg: string, rendered: string): Promise<boolean> {
    let pid: number;
    try {
      if (fs.readFileSync(cfg, 'utf8') !== rendered) return false;
      pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!cmd[0]?.includes('kamailio') || !cmd.includes(cfg)) return false;
      this.version = (await this.rpc<string>('core.version')).trim();
    } catch {
      return false;
    }
    this.stderr = [];
    this.adopted = pid;
    this.adoptedWatch = setInterval(() => {
      if (processAlive(pid)) return;
      this.dropAdopted();
      if (this.stopping) return;
      this.ctx.log.error({ pid }, 'the SIP server stopped; restarting it');
      this.down('exited');
      this.scheduleRestart();
    }, 1000);
    this.adoptedWatch.unref();
    this.startedAt = this.ctx.clock.now();
    this.ctx.log.warn({ pid }, 'the SIP server a Lintel left running is taken over: its calls go on');
    return true;
  }

  private dropAdopted(): number | null {
    const pid = this.adopted;
    if (this.adoptedWatch) clearInterval(this.adoptedWatch);
    this.adoptedWatch = null;
    this.adopted = null;
    return pid;
  }

  /** Ends an adopted Kamailio's process group: SIGTERM, then SIGKILL after 5 s. */
  private async killAdopted(): Promise<void> {
    const pid = this.dropAdopted();
    if (pid === null) return;
    signalGroup(pid, 'SIGTERM');
    for (let waited = 0; processAlive(pid) && waited < 5_000; waited += 50)
      await new Promise((r) => setTimeout(r, 50));
    signalGroup(pid, 'SIGKILL');
    await groupGone(pid);
  }

  /**
   * A Kamailio left running on this runtime folder by a Lintel that was killed (its main process and the
   * children it forked): found by their command line, which names this folder, and ended.
   */
  private killStale(pidFile: string): void {
    fs.rmSync(pidFile, { force: true });
    const dir = path.dirname(pidFile);
    let pids: string[] = [];
    try {
      pids = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
    } catch {
      return;
    }
    for (const pid of pids) {
      try {
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        if (cmd[0]?.includes('kamailio') && cmd.includes(path.join(dir, 'kamailio.cfg')))
          process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already, or not ours to read
      }
    }
  }

  /** The tls module's file; without a configured certificate a self-signed one made once with openssl. */
  private tlsConfig(dir: string): string {
    let cert = this.config.tlsCert;
    let key = this.config.tlsKey;
    if (!cert || !key) {
      cert = path.join(dir, 'wss-cert.pem');
      key = path.join(dir, 'wss-key.pem');
      if (!fs.existsSync(cert) || !fs.existsSync(key)) {
        const made = spawnSync('openssl', [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '3650',
          '-subj',
          '/CN=lintel-sip',
          '-keyout',
          key,
          '-out',
          cert,
        ]);
        if (made.status !== 0)
          throw new Error('no certificate for SIP over secure websocket (openssl failed)');
      }
    }
    const file = path.join(dir, 'tls.cfg');
    fs.writeFileSync(
      file,
      `[server:default]\nmethod = TLSv1.2+\nverify_certificate = no\nrequire_certificate = no\nprivate_key = ${key}\ncertificate = ${cert}\n`,
      { mode: 0o600 },
    );
    return file;
  }

  /**
   * The SIP service's bans in force into Kamailio's `ipban` table, each with the time it has left, replacing
   * what was there (a ban lifted or whitelisted in Lintel is lifted there too). Called when Kamailio starts
   * and when an operator changes the SIP service's bans, whitelist or settings.
   */
  async syncBans(): Promise<void> {
    await this.serial(async () => {
      if (this.state !== 'up') return;
      await this.loadBans();
    });
  }

  private async loadBans(): Promise<void> {
    const bans = await activeSipBans(this.ctx);
    await this.rpc('htable.flush', ['ipban']);
    for (const b of bans) await this.rpc('htable.setxi', ['ipban', b.ip, 1, b.seconds]);
  }

  /**
   * The trunks' addresses into Kamailio's `trunkip` table (address → the trunks' ids), replacing what was
   * there: an INVITE from one of them is a call in from a trunk (sip/trunks.ts). Called when Kamailio starts,
   * on reinit and whenever a trunk changes.
   */
  /**
   * The trunks loaded at a start: a failure (a remote Kamailio on an older template, without `trunkip`) costs
   * the calls in from trunks, not telephony.
   */
  private async trunksLoaded(): Promise<void> {
    await this.loadTrunks().catch((err: Error) =>
      this.ctx.log.warn({ err: err.message }, 'the SIP trunks did not reach the SIP server'),
    );
  }

  private async loadTrunks(): Promise<void> {
    const { byAddress, unresolved } = await trunkAddresses(this.ctx.db);
    if (unresolved.length)
      this.ctx.log.warn({ hosts: unresolved }, 'SIP trunks whose host does not resolve take no calls in');
    await this.rpc('htable.flush', ['trunkip']);
    for (const [address, ids] of byAddress)
      await this.rpc('htable.sets', ['trunkip', address, ids.join(',')]);
    await this.loadTrunkRegistrations();
  }

  /**
   * Kamailio registers with every trunk that has a login and a password (`uac` remote registration): the
   * records it holds are made again from the trunks (removed, then added: a changed trunk registers anew at
   * once); a trunk gone is unregistered first. docs/decisions.md "Telephony: registering with SIP trunks".
   */
  private async loadTrunkRegistrations(): Promise<void> {
    const wanted = await trunkRegistrations(this.ctx.db);
    const held = await this.rpc<{ l_uuid?: string }[]>('uac.reg_dump').catch(() => []);
    const keep = new Set(wanted.map((r) => r.uuid));
    for (const r of Array.isArray(held) ? held : []) {
      const uuid = r.l_uuid;
      if (!uuid?.startsWith(TRUNK_REGISTRATION_PREFIX)) continue;
      if (!keep.has(uuid)) await this.rpc('uac.reg_unregister', ['l_uuid', uuid]).catch(() => undefined);
      await this.rpc('uac.reg_remove', [uuid]).catch(() => undefined);
    }
    for (const r of wanted)
      await this.rpc('uac.reg_add', [
        r.uuid,
        r.uuid,
        r.domain,
        r.login,
        r.domain,
        // the provider's realm, whatever it names (an empty realm is not compared)
        '',
        r.login,
        r.password,
        '',
        r.proxy,
        REGISTRATION_EXPIRES_S,
        0,
        0,
        '',
        '',
      ]);
  }

  /** The trunks' registrations as Kamailio holds them: which are registered now. */
  async trunkRegistrationStates(): Promise<Map<number, 'registered' | 'registering' | 'failed'>> {
    const out = new Map<number, 'registered' | 'registering' | 'failed'>();
    if (this.state !== 'up') return out;
    const held = await this.rpc<{ l_uuid?: string; flags?: number; diff_expires?: number }[]>(
      'uac.reg_dump',
    ).catch(() => []);
    for (const r of Array.isArray(held) ? held : []) {
      const id = Number(r.l_uuid?.slice(TRUNK_REGISTRATION_PREFIX.length));
      if (!r.l_uuid?.startsWith(TRUNK_REGISTRATION_PREFIX) || !Number.isInteger(id)) continue;
      const flags = r.flags ?? 0;
      // uac's flags: 4 registered, 2 under way, 1 disabled
      out.set(id, flags & 4 ? 'registered' : flags & 2 || !(flags & 16) ? 'registering' : 'failed');
    }
    return out;
  }

  /** Every active number's credentials into Kamailio's `sipauth` table (`flush`: what was there goes). */
  private async loadCredentials(flush: boolean): Promise<void> {
    const rows = await this.ctx.db
      .selectFrom('sip_numbers')
      .select(['number', 'password_ha1'])
      .where('is_active', '=', true)
      .where('password_ha1', 'is not', null)
      .where('ha1_realm', '=', this.config.realm)
      .orderBy('id')
      .execute();
    if (flush) await this.rpc('htable.flush', ['sipauth']);
    for (const r of rows) await this.rpc('htable.sets', ['sipauth', r.number, r.password_ha1!]);
    this.loaded = rows.length;
  }

  /** Sets or deletes the credentials of these numbers as they are now in the database. */
  private async syncNumbers(numbers: string[]): Promise<void> {
    for (const number of numbers) {
      const row = await this.ctx.db
        .selectFrom('sip_numbers')
        .select(['password_ha1'])
        .where('number', '=', number)
        .where('is_active', '=', true)
        .where('password_ha1', 'is not', null)
        .where('ha1_realm', '=', this.config.realm)
        .orderBy('id')
        .executeTakeFirst();
      try {
        if (row) await this.rpc('htable.sets', ['sipauth', number, row.password_ha1!]);
        else await this.rpc('htable.delete', ['sipauth', number]);
      } catch (err) {
        // Kamailio restarting: its next start loads every number
        this.ctx.log.warn({ number, err: (err as Error).message }, 'a number did not reach the SIP server');
      }
    }
    const n = await sql<{ n: number }>`
      select count(*)::int as n from sip_numbers
      where is_active and password_ha1 is not null and ha1_realm = ${this.config.realm}`.execute(this.ctx.db);
    this.loaded = n.rows[0]?.n ?? this.loaded;
  }

  /** SIP reboot notifications (spec part 2 §7) to the project's people who may restart the SIP service. */
  private async notifyReboot(projectId: number, type: NotificationType): Promise<void> {
    const users = await sql<{ id: number }>`
      select u.id from users u join roles r on r.id = u.role_id
      where u.project_id = ${projectId} and r.permissions @> ${JSON.stringify(['project_settings.change'])}::jsonb
      order by u.id`.execute(this.ctx.db);
    if (!users.rows.length) return;
    await this.ctx.outbox.transaction(this.ctx.db, (trx) =>
      notify(this.ctx, trx, {
        projectId,
        recipients: users.rows.map((u) => u.id),
        type,
        data: { status: type.replace('sip_reboot_', '') },
      }),
    );
  }
}

/** Signals Kamailio's process group (its main process and the children it forked). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid) signalGroup(child.pid, signal);
}

function signalGroup(leader: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-leader, signal);
  } catch {
    // the group is gone
  }
}

/**
 * Resolves once no process of the group `leader` led is left (its children exit after it, holding its
 * sockets until then): SIGKILL to what is left after 5 s, and given up after 10.
 */
async function groupGone(leader: number): Promise<void> {
  for (let waited = 0; waited < 10_000 && groupAlive(leader); waited += 20) {
    if (waited === 5_000) signalGroup(leader, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Whether a process of the group is still running: from /proc, where a zombie (exited, not yet reaped: its
 * sockets are closed) does not count; `kill(-group, 0)` would count it. Elsewhere, by that signal.
 */
function groupAlive(leader: number): boolean {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    try {
      process.kill(-leader, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // after the command's name: state, parent, process group
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(group) === leader && state !== 'Z' && state !== 'X') return true;
    } catch {
      // gone between the listing and the read
    }
  }
  return false;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
