/**
 * A device that is not ours: Debian's mosquitto-clients (`mosquitto_pub`, `mosquitto_sub`) as child
 * processes, speaking the topics and payloads of ../shared/DEVICES.md to whichever broker a test names.
 */
import { spawn } from 'node:child_process';

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
