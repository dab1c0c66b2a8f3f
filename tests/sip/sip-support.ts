/**
 * SIP clients that are not ours, for tests/sip: `sipp` (Debian's sip-tester) running a scenario of
 * tests/sip/scenarios, and sip.js in Node over a websocket (it needs `globalThis.WebSocket`, given it from `ws`).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import type { SessionState } from 'sip.js';
import { Inviter, Registerer, UserAgent, type Invitation, type Session } from 'sip.js';
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
  opts: { waitMs: number; extra?: string[]; localIp?: string },
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
    opts.localIp ?? '127.0.0.1',
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
  /** `from`: the loopback address sipp sends from; `waitMs`: how long it waits for an answer */
  opts: { from?: string; waitMs?: number } = {},
): Promise<{ ok: boolean; output: string }> {
  return runSipp(sip, scenario, [number, credentials(number, password)], {
    waitMs: opts.waitMs ?? 15_000,
    localIp: opts.from,
  });
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

/** A stand-in for media: signalling-only calls offer and accept a fixed SDP. */
const SDP = (port: number) =>
  [
    'v=0',
    `o=- ${port} 1 IN IP4 127.0.0.1`,
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${port} RTP/AVP 0`,
    'a=rtpmap:0 PCMU/8000',
    '',
  ].join('\r\n');
const stubMedia = () => {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  return {
    close: () => undefined,
    getDescription: () => Promise.resolve({ body: SDP(port), contentType: 'application/sdp' }),
    hasDescription: (ct: string) => ct === 'application/sdp',
    setDescription: () => Promise.resolve(),
    sendDtmf: () => false,
  };
};

/**
 * A sip.js phone (signalling only) registered with `number` over the websocket. `answer`: what it does with
 * an incoming call — accept it, reject it with a status (486 busy), or let it ring (`ring`: the test decides).
 */
export class SipPhone {
  readonly incoming: Invitation[] = [];
  answer: 'accept' | 'ring' | number = 'accept';
  private constructor(
    readonly number: string,
    readonly ua: UserAgent,
    private readonly registerer: Registerer,
  ) {}

  static async register(sip: SipConfig, number: string, password: string): Promise<SipPhone> {
    let phone: SipPhone | null = null;
    const ua = new UserAgent({
      uri: UserAgent.makeURI(`sip:${number}@127.0.0.1`)!,
      transportOptions: { server: `ws://127.0.0.1:${sip.wsPort}`, connectionTimeout: 15 },
      authorizationUsername: number,
      authorizationPassword: password,
      logLevel: 'error',
      logBuiltinEnabled: false,
      sessionDescriptionHandlerFactory: stubMedia as never,
      delegate: {
        onInvite: (invitation) => {
          phone!.incoming.push(invitation);
          const a = phone!.answer;
          if (a === 'accept') void invitation.accept().catch(() => undefined);
          else if (typeof a === 'number') void invitation.reject({ statusCode: a }).catch(() => undefined);
          else void invitation.progress().catch(() => undefined);
        },
      },
    });
    await ua.start();
    const registerer = new Registerer(ua, { expires: 300 });
    phone = new SipPhone(number, ua, registerer);
    const outcome = await new Promise<string>((resolve, reject) => {
      registerer
        .register({
          requestDelegate: {
            onAccept: () => resolve('registered'),
            onReject: (r) => resolve(`rejected ${r.message.statusCode}`),
          },
        })
        .catch(reject);
    });
    if (outcome !== 'registered') {
      await ua.stop().catch(() => undefined);
      throw new Error(`${number} did not register: ${outcome}`);
    }
    return phone;
  }

  /** Calls `number`; resolves the session once sent (its state tells how it goes). */
  call(number: string, headers: string[] = []): Inviter {
    const inviter = new Inviter(this.ua, UserAgent.makeURI(`sip:${number}@127.0.0.1`)!, {
      extraHeaders: headers,
    });
    void inviter.invite().catch(() => undefined);
    return inviter;
  }

  async stop(): Promise<void> {
    await this.registerer.unregister().catch(() => undefined);
    await this.ua.stop().catch(() => undefined);
  }
}

/**
 * Holds every send of the SIP server for `us` microseconds after the process made it, until the function
 * returned is called: strace's delay injection on `sendto`, which Kamailio's UDP and TCP (websocket) writes go
 * through, on each of its processes (its process group). The order in which its processes then act is forced
 * rather than left to the machine's load: a process that has just sent waits, while the others go on.
 */
export async function holdingSends(kamailioPid: number, us: number): Promise<() => Promise<void>> {
  const pids = execFileSync('pgrep', ['-g', String(kamailioPid)])
    .toString()
    .trim()
    .split(/\s+/);
  const strace = spawn(
    'strace',
    [
      '-e',
      'trace=sendto',
      '-e',
      `inject=sendto:delay_exit=${us}`,
      '-o',
      '/dev/null',
      ...pids.flatMap((p) => ['-p', p]),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => strace.once('exit', () => resolve()));
  let said = '';
  // attached to every process, or strace gone (it says why)
  await new Promise<void>((resolve, reject) => {
    strace.stderr!.on('data', (d: Buffer) => {
      said += d.toString();
      if ((said.match(/ attached/g) ?? []).length >= pids.length) resolve();
    });
    void exited.then(() => reject(new Error(`strace did not attach to the SIP server: ${said}`)));
  });
  return async () => {
    strace.kill('SIGINT');
    await exited;
  };
}

/** Waits until a session reaches one of these states (generous bound: the machine is shared). */
export async function sessionIn(
  session: Session,
  states: SessionState[],
  ms = 30_000,
): Promise<SessionState> {
  const end = Date.now() + ms;
  while (!states.includes(session.state)) {
    if (Date.now() > end) throw new Error(`session stayed ${session.state}, awaited ${states.join('|')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return session.state;
}

/**
 * A provider behind a SIP trunk (tests/sip/scenarios/provider.xml), as sipp on a free port: resolves once the
 * one call it expects ran as written (challenge answered with the trunk's credentials, the outgoing number
 * asserted, answered, ended by BYE).
 */
export async function sippProvider(): Promise<{
  port: number;
  done: Promise<{ ok: boolean; output: string }>;
}> {
  return sippServer('provider.xml', 60);
}

/**
 * A provider's registrar (tests/sip/scenarios/provider-registrar.xml) at `ip` (a loopback address that is not
 * the host's own: the trunk's provider) on a free port: resolves once Lintel's SIP server registered with it
 * with the trunk's credentials, after a challenge.
 */
export async function sippRegistrar(
  ip: string,
): Promise<{ port: number; done: Promise<{ ok: boolean; output: string }> }> {
  return sippServer('provider-registrar.xml', 60, ip);
}

/** sipp on a free port of its own running one call of a scenario that answers (until `timeoutS`). */
async function sippServer(
  scenario: string,
  timeoutS: number,
  ip = '127.0.0.1',
): Promise<{ port: number; done: Promise<{ ok: boolean; output: string }> }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-sipp-'));
  const args = [
    '-sf',
    path.join(scenarios, scenario),
    '-i',
    ip,
    '-p',
    String(port),
    '-m',
    '1',
    '-nostdin',
    '-timeout',
    `${timeoutS}s`,
    '-mp',
    String(await freePort()),
  ];
  const done = new Promise<{ ok: boolean; output: string }>((resolve) => {
    execFile('sipp', args, { cwd: dir, timeout: (timeoutS + 30) * 1000 }, (err, stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true });
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ ok: code === 0, output: `${stdout}\n${stderr}`.slice(-3000) });
    });
  });
  return { port, done };
}

/**
 * One call of a sipp scenario of tests/sip/scenarios against the SIP server, from `from` (a loopback address:
 * a provider's, or one that is no trunk's), with one line of injected fields. Resolves whether it ran as
 * written. `provider-call`: fields DID;caller, answered then hung up; `provider-not-found`: refused 404;
 * `invite-challenged`: challenged 407; `call-not-found`: number;[authentication];callee, refused 404;
 * `panel-call`: number;[authentication];callee, rings (as long as it is not answered), answered, hung up by the
 * far end.
 */
export async function sippCall(
  sip: SipConfig,
  scenario:
    | 'provider-call'
    | 'provider-call-contact'
    | 'provider-not-found'
    | 'invite-challenged'
    | 'call-not-found'
    | 'panel-call',
  fields: string[],
  opts: { from?: string; waitMs?: number } = {},
): Promise<{ ok: boolean; output: string }> {
  return runSipp(sip, scenario, fields, {
    waitMs: opts.waitMs ?? 30_000,
    localIp: opts.from,
    extra: ['-mp', String(await freePort())],
  });
}

/** `[authentication …]` of sipp's injection file for a number and its password. */
export const sippCredentials = credentials;

/**
 * A phone that is not ours: sipp taking one call to `number` (answer.xml: rings, answers, waits for the BYE)
 * on a free port, registered with that port as its contact by a second sipp (register-contact.xml). Resolves
 * once registered; `done` once the call ran as written (a run that never gets its call ends by its timeout).
 */
export async function sippPhone(
  sip: SipConfig,
  number: string,
  password: string,
): Promise<{ port: number; done: Promise<{ ok: boolean; output: string }> }> {
  const { port, done } = await sippServer('answer.xml', 90);
  // a number made a moment ago reaches the SIP server once its change commits: tried again until then
  const end = Date.now() + 20_000;
  for (;;) {
    const registered = await runSipp(
      sip,
      'register-contact',
      [number, credentials(number, password), String(port)],
      { waitMs: 15_000 },
    );
    if (registered.ok) return { port, done };
    if (Date.now() > end) throw new Error(`${number} did not register: ${registered.output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A phone registered with a number just made in Lintel: the number reaches Kamailio on its own time, so the
 * REGISTER is tried again until accepted, within a generous bound in time (not a count of tries).
 */
export async function registerWhenKnown(sip: SipConfig, number: string, password: string): Promise<SipPhone> {
  const end = Date.now() + 20_000;
  for (;;) {
    try {
      return await SipPhone.register(sip, number, password);
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
