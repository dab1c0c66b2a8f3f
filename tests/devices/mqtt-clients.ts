/**
 * A device that is not ours: Debian's mosquitto-clients (`mosquitto_pub`, `mosquitto_sub`) as child
 * processes, speaking the topics and payloads of ../shared/DEVICES.md to whichever broker a test names.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface BrokerAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

const authArgs = (b: BrokerAddress) => [
  '-h',
  b.host,
  '-p',
  String(b.port),
  ...(b.username ? ['-u', b.username] : []),
  ...(b.password ? ['-P', b.password] : []),
];

/** `mosquitto_pub` once: its exit code and what it wrote to stderr. */
export function mosquittoPub(
  broker: BrokerAddress,
  topic: string,
  message: string,
  /** `v5`: MQTT 5, whose PUBACK says when the broker refused the publish (stderr: "Not authorized") */
  opts: { qos?: 0 | 1; retain?: boolean; clientId?: string; v5?: boolean } = {},
): Promise<{ code: number; stderr: string }> {
  const args = [
    ...authArgs(broker),
    '-t',
    topic,
    '-m',
    message,
    '-q',
    String(opts.qos ?? 1),
    ...(opts.retain ? ['-r'] : []),
    ...(opts.clientId ? ['-i', opts.clientId] : []),
    ...(opts.v5 ? ['-V', 'mqttv5'] : []),
  ];
  return new Promise((resolve, reject) => {
    const p = spawn('mosquitto_pub', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

/**
 * `mosquitto_sub` on one topic until `count` messages came (or `waitS` passed). Resolves `subscribed` once
 * the broker granted the subscription (its SUBACK, read from `-d`), so a test publishes only after that.
 */
export function mosquittoSub(
  broker: BrokerAddress,
  topic: string,
  opts: { count?: number; waitS?: number } = {},
): { subscribed: Promise<void>; messages: Promise<string[]>; stop(): void } {
  const args = [
    ...authArgs(broker),
    '-t',
    topic,
    '-q',
    '1',
    '-C',
    String(opts.count ?? 1),
    '-W',
    String(opts.waitS ?? 10),
    '-d',
    '-F',
    'MSG %t %p',
  ];
  // line-buffered: its debug lines (the SUBACK) must arrive as they are written, not when it exits
  const p = spawn('stdbuf', ['-oL', 'mosquitto_sub', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let onSuback: () => void = () => undefined;
  let onFail: (e: Error) => void = () => undefined;
  const subscribed = new Promise<void>((resolve, reject) => {
    onSuback = resolve;
    onFail = reject;
  });
  p.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (/received SUBACK/.test(out)) onSuback();
  });
  p.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const messages = new Promise<string[]>((resolve, reject) => {
    p.on('error', reject);
    p.on('close', () => {
      onFail(new Error(`mosquitto_sub ended before subscribing: ${out}`));
      resolve(
        out
          .split('\n')
          .filter((l) => l.startsWith('MSG '))
          .map((l) => l.slice(4)),
      );
    });
  });
  return { subscribed, messages, stop: () => p.kill() };
}

/** Polls observable state (never a fixed sleep): resolves with the first truthy answer, or fails after `ms`. */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('the state awaited did not come');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The Debian broker's binary, for tests that run (and kill) a Mosquitto of their own. */
export const MOSQUITTO_BIN = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => fs.existsSync(p));

/**
 * A Mosquitto of a test's own, on a free port of 127.0.0.1, configured by `config` (lines after the listener)
 * in a folder of its own: started, killed (SIGKILL, as a crash) and started again on the same port.
 */
export class PrivateMosquitto {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-broker-'));
  port = 0;
  private child: ChildProcess | null = null;

  constructor(private readonly config: readonly string[]) {
    if (!MOSQUITTO_BIN) throw new Error('the mosquitto broker is needed (Debian: apt-get install mosquitto)');
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.port ||= await freePort();
    const conf = path.join(this.dir, 'mosquitto.conf');
    fs.writeFileSync(conf, [`listener ${this.port} 127.0.0.1`, ...this.config, ''].join('\n'));
    this.child = spawn(MOSQUITTO_BIN!, ['-c', conf], { stdio: 'ignore' });
    await until(() => accepting(this.port));
  }

  async kill(): Promise<void> {
    const b = this.child;
    this.child = null;
    if (!b) return;
    const exited = new Promise((r) => b.once('exit', r));
    b.kill('SIGKILL');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
