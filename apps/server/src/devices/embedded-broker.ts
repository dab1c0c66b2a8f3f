import net from 'node:net';
import tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { FastifyBaseLogger } from 'fastify';
import { DeviceTopicAccess, parseDeviceTopic } from '@lintel/core';
import { samePassword } from '../pipeline/principal';

/** Who a broker connection is: the platform itself, or one device (by its serial number). */
type Identity = { kind: 'platform' } | { kind: 'device'; serial: string };

/** The platform's own user on the embedded broker: `$` is no character of a serial number, so no device has it. */
export const PLATFORM_USER = '$lintel';

const refused = (code: 2 | 4 | 5): AuthenticateError =>
  Object.assign(
    new Error(
      code === 2 ? 'client id not allowed' : code === 4 ? 'bad user name or password' : 'not authorised',
    ),
    { returnCode: code },
  );

/** The platform's client ids (`lintel-…`): no device may take one. */
const PLATFORM_CLIENT_PREFIX = 'lintel-';

/**
 * The MQTT broker `npm start` runs (aedes), on a port of its own. Devices sign in with their serial number and
 * the password Lintel issued; each may publish and subscribe only on its own topics (../shared/DEVICES.md):
 * anything else is refused, and aedes closes a connection whose publish is refused. The platform signs in with
 * a secret made at start that never leaves the process.
 */
export class EmbeddedBroker {
  readonly platformPassword = randomBytes(24).toString('base64url');
  private broker: Aedes | null = null;
  private server: net.Server | null = null;
  private readonly identities = new WeakMap<Client, Identity>();
  /** who first signed in under each client id (the serial, or the platform): only they may use it again */
  private readonly owners = new Map<string, string>();
  /** publishes and subscriptions refused (for the log and the tests) */
  readonly refusals: Array<{ serial: string; topic: string; action: 'publish' | 'subscribe' }> = [];
  port = 0;
  /** the TLS listener's port once it listens (0: none) */
  tlsPort = 0;
  private tlsServer: tls.Server | null = null;
  private readonly tlsSockets = new Set<net.Socket>();
  /** the certificate and key the TLS listener serves (PEM), from the broker settings */
  private certificate: { cert: string; key: string } | null = null;
  /** when the broker last started, and how many times `restart` ran */
  startedAt: Date | null = null;
  restarts = 0;

  constructor(
    private readonly opts: {
      port: number;
      host: string;
      log: FastifyBaseLogger;
      /** the stored password of a device, by serial number; null when there is no such device */
      passwordOf(serial: string): Promise<string | null>;
      /** counts a sign-in attempt by address and serial; throws when over the limits (auth/device-throttle.ts) */
      throttle?(ip: string, serial: string): { succeeded(): Promise<void> };
      /** the TLS listener's port (MQTT_TLS_PORT; 0: any free port); none: no TLS listener */
      tlsPort?: number;
      /** the server's clock */
      now?: () => Date;
    },
  ) {}

  /** aedes's version */
  get version(): string | null {
    const b = this.broker as (Aedes & { version?: string }) | null;
    return b ? `aedes ${b.version ?? ''}`.trim() : null;
  }

  /** clients connected now (the platform's connection included) */
  get clients(): number | null {
    return this.broker ? this.broker.connectedClients : null;
  }

  get listeners(): Array<{ protocol: 'mqtt' | 'mqtts'; port: number }> {
    if (!this.server) return [];
    return [
      { protocol: 'mqtt' as const, port: this.port },
      ...(this.tlsServer ? [{ protocol: 'mqtts' as const, port: this.tlsPort }] : []),
    ];
  }

  /** whether this broker can serve TLS (MQTT_TLS_PORT is set) */
  get tlsConfigured(): boolean {
    return this.opts.tlsPort !== undefined;
  }

  /**
   * Serves TLS with this certificate and key from now on (null: closes the TLS listener). Connections already
   * open keep the certificate they were made with. A certificate the TLS stack refuses throws, and the listener
   * is left as it was.
   */
  async setCertificate(pem: { cert: string; key: string } | null): Promise<void> {
    if (pem) tls.createSecureContext(pem);
    this.certificate = pem;
    if (!this.broker) return;
    // a new certificate for the listener there is: the connections made from now on present it
    if (pem && this.tlsServer) this.tlsServer.setSecureContext(pem);
    else if (pem) await this.listenTls();
    else await this.closeTls();
  }

  private async listenTls(): Promise<void> {
    const broker = this.broker;
    if (!broker || !this.certificate || this.opts.tlsPort === undefined) return;
    const server = tls.createServer({ ...this.certificate, noDelay: true }, broker.handle);
    server.on('connection', (socket: net.Socket) => {
      this.tlsSockets.add(socket);
      socket.once('close', () => this.tlsSockets.delete(socket));
    });
    server.on('tlsClientError', (err) =>
      this.opts.log.debug({ err: err.message }, 'mqtt: a TLS handshake failed'),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.tlsPort || this.opts.tlsPort, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.tlsServer = server;
    this.tlsPort = (server.address() as net.AddressInfo).port;
  }

  /** Closes the TLS listener and the connections it still has (the certificate was removed, or the broker stops). */
  private async closeTls(): Promise<void> {
    const server = this.tlsServer;
    this.tlsServer = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.tlsSockets) socket.destroy();
    await closed;
  }

  /**
   * Stops the broker and starts it again on the same ports: every client is disconnected (devices reconnect by
   * themselves, as after any outage), retained messages and sessions are gone (it keeps none on disk).
   */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
    this.restarts += 1;
  }

  async start(): Promise<void> {
    const broker = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        let attempt: { succeeded(): Promise<void> } | undefined;
        try {
          // a device's password guesses are throttled like people's logins (issue 20 item 8)
          const ip = (client.conn as Partial<net.Socket> | undefined)?.remoteAddress ?? '';
          if (username && username !== PLATFORM_USER) attempt = this.opts.throttle?.(ip, username);
        } catch {
          this.opts.log.warn({ serial: username }, 'mqtt: too many failed sign-ins; refused unchecked');
          return done(refused(5), false);
        }
        this.authenticate(username, password).then(
          async (identity) => {
            if (!identity) return done(refused(4), false);
            await attempt?.succeeded();
            // a client id is bound to who signed in: taking another's would end its connection
            if (!(await this.mayUseClientId(identity, client.id))) {
              this.opts.log.warn(
                { serial: identity.kind === 'device' ? identity.serial : PLATFORM_USER, clientId: client.id },
                'mqtt: a client id bound to another identity was refused',
              );
              return done(refused(2), false);
            }
            this.identities.set(client, identity);
            this.owners.set(client.id, identity.kind === 'device' ? identity.serial : PLATFORM_USER);
            done(null, true);
          },
          (err: Error) => {
            this.opts.log.error({ err: err.message }, 'mqtt: authentication failed');
            done(refused(5), false);
          },
        );
      },
      authorizePublish: (client, packet, done) => {
        const who = client ? this.identities.get(client) : ({ kind: 'platform' } as const);
        if (this.may(who, packet.topic, 'write')) return done(null);
        this.refuse(who, packet.topic, 'publish');
        done(new Error('not authorised'));
      },
      authorizeSubscribe: (client, sub, done) => {
        const who = this.identities.get(client);
        if (this.may(who, sub.topic, 'read')) return done(null, sub);
        this.refuse(who, sub.topic, 'subscribe');
        // a refused subscription is answered with a failure code (0x80), the connection stays
        done(null, null);
      },
    });
    this.broker = broker;
    // a clean session leaves nothing behind to take over: its client id is free again once it is gone
    // (the map stays as large as the connections, and a serial number stays its device's by the rule)
    broker.on('clientDisconnect', (client) => {
      const id = client.id;
      if (!client.clean || id === undefined) return;
      // unless the same identity connected again under it (a takeover ends the older connection)
      setImmediate(() => {
        const live = (this.broker as unknown as { clients?: Record<string, Client> } | null)?.clients;
        if (!live?.[id]) this.owners.delete(id);
      });
    });
    broker.on('clientError', (client, err) =>
      this.opts.log.debug({ client: client.id, err: err.message }, 'mqtt: client error'),
    );
    // no-delay: a request forwarded to a device (and its reply forwarded back) leaves at once. With Nagle's
    // algorithm a small write waits for the peer's acknowledgement, which the peer delays (40 ms): a device
    // sync sent 16 requests at a time made 185 round trips a second instead of 9,300 (docs/decisions.md)
    const server = net.createServer({ noDelay: true }, broker.handle);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port || this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as net.AddressInfo).port;
    // a TLS port in use does not keep devices on plain MQTT out: the status shows no mqtts listener
    await this.listenTls().catch((err: Error) =>
      this.opts.log.error(
        { err: err.message, port: this.opts.tlsPort },
        'mqtt: the TLS listener did not start',
      ),
    );
    this.startedAt = this.opts.now?.() ?? new Date();
  }

  private async authenticate(
    username: string | undefined,
    password: Buffer | undefined,
  ): Promise<Identity | null> {
    if (!username) return null;
    if (username === PLATFORM_USER)
      return samePassword(this.platformPassword, password) ? { kind: 'platform' } : null;
    const stored = await this.opts.passwordOf(username);
    return stored !== null && samePassword(stored, password) ? { kind: 'device', serial: username } : null;
  }

  /**
   * Whether this identity may connect under this client id (issue 20 item 5): MQTT ends the older connection
   * of a client id that connects again, so a client id is bound to the first identity that used it, a device's
   * serial number (the client id its credentials name) is its own, and the platform's ids are the platform's.
   */
  private async mayUseClientId(who: Identity, clientId: string): Promise<boolean> {
    const me = who.kind === 'device' ? who.serial : PLATFORM_USER;
    const owner = this.owners.get(clientId);
    if (owner !== undefined) return owner === me;
    if (who.kind === 'platform') return true;
    if (clientId === who.serial) return true;
    if (clientId.startsWith(PLATFORM_CLIENT_PREFIX)) return false;
    // another device's serial number is that device's client id
    return (await this.opts.passwordOf(clientId)) === null;
  }

  /** A device reads its requests and writes its replies, pushes and status, under its own serial only. */
  private may(who: Identity | undefined, topic: string, action: 'read' | 'write'): boolean {
    if (!who) return false;
    if (who.kind === 'platform') return true;
    const t = parseDeviceTopic(topic);
    if (!t || t.serial !== who.serial) return false;
    const access = DeviceTopicAccess[t.kind];
    return access === 'readwrite' || access === action;
  }

  private refuse(who: Identity | undefined, topic: string, action: 'publish' | 'subscribe') {
    const serial = who?.kind === 'device' ? who.serial : '?';
    this.refusals.push({ serial, topic, action });
    if (this.refusals.length > 1000) this.refusals.shift();
    this.opts.log.warn({ serial, topic, action }, 'mqtt: a device was refused a topic that is not its own');
  }

  /** Ends the connections of one device (its password changed, or it was deleted). */
  disconnect(serial: string): void {
    const clients = (this.broker as unknown as { clients?: Record<string, Client> } | null)?.clients ?? {};
    for (const client of Object.values(clients)) {
      const who = this.identities.get(client);
      if (who?.kind === 'device' && who.serial === serial) client.close();
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    const broker = this.broker;
    this.server = null;
    this.broker = null;
    if (broker) await new Promise<void>((resolve) => broker.close(() => resolve()));
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await this.closeTls();
  }
}
