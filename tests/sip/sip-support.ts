/**
 * SIP clients that are not ours, for tests/sip: `sipp` (Debian's sip-tester) running a scenario of
 * tests/sip/scenarios, and sip.js in Node over a websocket (it needs `globalThis.WebSocket`, given it from `ws`).
 */
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { Registerer, UserAgent } from 'sip.js';
import { loadSipConfig, type SipConfig } from '@lintel/server';

const scenarios = path.join(import.meta.dirname, 'scenarios');

/** A port free on 127.0.0.1 for both TCP and UDP (SIP listens on both). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const s = dgram.createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}

/** The SIP service on free loopback ports, plain websocket (allowed on loopback). */
export async function sipTestConfig(): Promise<SipConfig> {
  return {
    ...loadSipConfig({}),
    host: '127.0.0.1',
    port: await freePort(),
    wsPort: await freePort(),
    wsPlain: true,
    rpcPort: await freePort(),
    rpcTimeoutMs: 5_000,
  };
}

/**
 * Runs one call of a sipp scenario of tests/sip/scenarios against the SIP server, with one line of injected
 * fields (`number;[authentication …];extra…`), and resolves whether it ran as written (sipp's exit code 0)
 * with the end of its output. `waitMs`: how long sipp waits for an awaited message.
 */
async function runSipp(
  sip: SipConfig,
  scenario: string,
  fields: string[],
  opts: { waitMs: number; extra?: string[] },
): Promise<{ ok: boolean; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-sipp-'));
  const inf = path.join(dir, 'numbers.csv');
  fs.writeFileSync(inf, `SEQUENTIAL\n${fields.join(';')}\n`);
  const args = [
    `127.0.0.1:${sip.port}`,
    '-sf',
    path.join(scenarios, `${scenario}.xml`),
    '-inf',
    inf,
    '-m',
    '1',
    '-i',
    '127.0.0.1',
    '-p',
    String(await freePort()),
    ...(opts.extra ?? []),
    '-nostdin',
    '-recv_timeout',
    String(opts.waitMs),
    '-timeout',
    `${Math.ceil((opts.waitMs * 2) / 1000)}s`,
  ];
  try {
    return await new Promise((resolve) => {
      execFile('sipp', args, { cwd: dir, timeout: opts.waitMs * 4 }, (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ ok: code === 0, output: `${stdout}\n${stderr}`.slice(-3000) });
      });
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const credentials = (number: string, password: string) =>
  `[authentication username=${number} password=${password}]`;

/**
 * Runs one sipp REGISTER of `number` with `password` against the SIP server: `register` succeeds only on
 * 200 OK, `register-refused` only when the credentials are challenged again (refused). Resolves whether the
 * scenario ran as written (sipp's exit code 0).
 */
export function sippRegister(
  sip: SipConfig,
  scenario: 'register' | 'register-refused',
  number: string,
  password: string,
): Promise<{ ok: boolean; output: string }> {
  return runSipp(sip, scenario, [number, credentials(number, password)], { waitMs: 15_000 });
}

/**
 * A caller that is not ours: sipp calls `callee` as `number` (with `password`) through the SIP server and
 * succeeds only when the call rings (180) and the callee turns it down (486), the scenario
 * `call-refused`. Resolves when sipp ends: whether it ran as written, and its output.
 */
export async function sippCallRefused(
  sip: SipConfig,
  number: string,
  password: string,
  callee: string,
): Promise<{ ok: boolean; output: string }> {
  return runSipp(sip, 'call-refused', [number, credentials(number, password), callee], {
    waitMs: 60_000,
    extra: ['-mp', String(await freePort())],
  });
}

// sip.js reads the browser's WebSocket
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

/**
 * Registers `number` with sip.js over the SIP server's websocket: `registered`, or `rejected <status>` when
 * the server refuses the credentials. The user agent is stopped afterwards.
 */
export async function sipjsRegister(sip: SipConfig, number: string, password: string): Promise<string> {
  const ua = new UserAgent({
    uri: UserAgent.makeURI(`sip:${number}@127.0.0.1`)!,
    transportOptions: { server: `ws://127.0.0.1:${sip.wsPort}`, connectionTimeout: 15 },
    authorizationUsername: number,
    authorizationPassword: password,
    logLevel: 'error',
    logBuiltinEnabled: false,
    // signalling only: no media in these tests
    sessionDescriptionHandlerFactory: () => {
      throw new Error('no media in this test');
    },
  });
  await ua.start();
  try {
    const registerer = new Registerer(ua, { expires: 120 });
    return await new Promise<string>((resolve, reject) => {
      registerer
        .register({
          requestDelegate: {
            onAccept: () => resolve('registered'),
            onReject: (r) => resolve(`rejected ${r.message.statusCode}`),
          },
        })
        .catch(reject);
    });
  } finally {
    await ua.stop().catch(() => undefined);
  }
}
