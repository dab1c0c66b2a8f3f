/**
 * Lintel killed under a call (issue 22, "Done when"): its Kamailio goes on — the call in progress keeps
 * talking, the next call is routed by Kamailio's fallback — and keeps the call events it could not give;
 * Lintel started again on the same data folder takes that Kamailio over (no restart: the phones stay
 * registered) and catches up: the call that ended meanwhile is in the history with its talk time, and so is
 * the call the fallback routed. Lintel runs in a process of its own (tests/support/sip-child.ts) so it can be
 * killed with SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionState } from 'sip.js';
import { getCommand } from '@lintel/commands';
import { ApiClient, MemorySessionStore } from '@lintel/core';
import type { SipConfig } from '@lintel/server';
import { keptBatches } from '../../apps/server/src/sip/catch-up';
import type { CallEventArgs } from '../../apps/server/src/sip/calls';
import { freePort, registerWhenKnown, sessionIn, sipTestConfig, type SipPhone } from './sip-support';

const repo = path.resolve(import.meta.dirname, '../..');

interface Child {
  proc: ChildProcess;
  url: string;
  log: () => string;
}

let sip: SipConfig;
let dataDir: string;
let httpPort: number;
const children = new Set<ChildProcess>();
const phones: SipPhone[] = [];

async function startLintel(first: boolean): Promise<Child> {
  const proc = spawn(
    path.join(repo, 'node_modules/.bin/vite-node'),
    [path.join(repo, 'tests/support/sip-child.ts')],
    {
      cwd: repo,
      env: {
        ...process.env,
        DATABASE_URL: '',
        CHILD_DATA_DIR: dataDir,
        CHILD_PORT: String(httpPort),
        CHILD_SIP: JSON.stringify(sip),
        ...(first ? { CHILD_LICENCE: '1' } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /^ready (\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => reject(new Error(`Lintel exited (${code}) before it was ready:\n${out}`)));
  });
  return { proc, url, log: () => out };
}

async function kill(c: Child): Promise<void> {
  const gone = new Promise((r) => c.proc.once('exit', r));
  c.proc.kill('SIGKILL');
  await gone;
  children.delete(c.proc);
}

async function signIn(url: string): Promise<ApiClient> {
  const reply = await getCommand('session.login').run(
    { api: new ApiClient({ baseUrl: url, store: new MemorySessionStore(null) }) },
    { login: 'admin', password: 'Child-instance-password-1' },
  );
  return new ApiClient({ baseUrl: url, store: new MemorySessionStore({ ...reply.sessions[0]! }) });
}

/** The call events Kamailio keeps for Lintel (htable `missed`), read over its JSON-RPC. */
async function keptEvents(): Promise<CallEventArgs[]> {
  const res = await fetch(`http://127.0.0.1:${sip.rpcPort}/RPC`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'htable.dump', params: ['missed'], id: 1 }),
  });
  const { result } = (await res.json()) as { result?: unknown };
  return keptBatches(result).flatMap((b) => JSON.parse(`[${b.text}]`) as CallEventArgs[]);
}

async function until<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: () => string,
  ms = 30_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`not reached: ${JSON.stringify(v)}\n${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  sip = {
    ...(await sipTestConfig()),
    runtimeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-sip-catch-up-')),
  };
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-catch-up-'));
  httpPort = await freePort();
});

afterAll(async () => {
  for (const p of phones) await p.stop();
  for (const c of children) c.kill('SIGKILL');
  // the Kamailio the last Lintel ran (its process group), when a failure left it
  try {
    const pid = Number(fs.readFileSync(path.join(sip.runtimeDir!, 'kamailio.pid'), 'utf8'));
    if (pid) process.kill(-pid, 'SIGKILL');
  } catch {
    // gone with its Lintel
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(sip.runtimeDir!, { recursive: true, force: true });
});

it(
  'Lintel killed under a call: the call goes on, the fallback routes the next, and Lintel catches up on restart',
  { timeout: 240_000 },
  async () => {
    let lintel = await startLintel(true);
    let api = await signIn(lintel.url);
    const group = (await getCommand('group.list').run({ api }, { limit: 1 })).data[0]!.id;
    const numbers = ['7101', '7102', '7103', '7104'];
    for (const n of numbers)
      await getCommand('sip_number.create').run(
        { api },
        { number: n, name: `Flat ${n}`, domain_id: group, password: `Pass${n}x` },
      );
    const [a, b, c, d] = await Promise.all(numbers.map((n) => registerWhenKnown(sip, n, `Pass${n}x`)));
    phones.push(a!, b!, c!, d!);
    const kamailioPid = (await getCommand('sip.status').run({ api }, {})).instances[0]!.pid;
    expect(kamailioPid).toBeGreaterThan(0);

    // a call Lintel routed, answered
    const first = a!.call(b!.number);
    await sessionIn(first, [SessionState.Established]);
    const answeredAt = Date.now();
    await until(
      () => getCommand('call.list').run({ api }, {}),
      (l) => l.data.some((x) => x.caller === a!.number && x.status === 'answered'),
      lintel.log,
    );

    await kill(lintel);
    // the call goes on without Lintel, and ends: Kamailio keeps its end for Lintel
    expect(first.state).toBe(SessionState.Established);
    const hungUpAt = Date.now();
    await first.bye();
    await sessionIn(first, [SessionState.Terminated]);
    // the next call: Lintel does not answer the route (nothing listens), Kamailio's fallback rings the number
    const second = c!.call(d!.number);
    await sessionIn(second, [SessionState.Established]);
    await second.bye();
    await sessionIn(second, [SessionState.Terminated]);
    // Kamailio kept what it could not tell: the first call's end with when it happened, the second call's
    // events with who called whom
    const kept = await until(
      keptEvents,
      (events) =>
        events.some((e) => e.call_id === first.request.callId && e.event === 'ended') &&
        events.some((e) => e.call_id === second.request.callId && e.event === 'ended'),
      () => 'Kamailio kept no such events',
    );
    const ended = kept.find((e) => e.call_id === first.request.callId && e.event === 'ended')!;
    expect(ended.at! * 1000).toBeGreaterThanOrEqual(hungUpAt - 1000);
    expect(ended.at! * 1000).toBeLessThanOrEqual(Date.now() + 1000);
    expect(kept.find((e) => e.call_id === second.request.callId && e.event === 'answered')).toMatchObject({
      caller: c!.number,
      callee: d!.number,
    });

    lintel = await startLintel(false);
    api = await signIn(lintel.url);
    // the same Kamailio, taken over: the phones did not register again to be reached
    const status = await getCommand('sip.status').run({ api }, {});
    expect(status).toMatchObject({ state: 'up' });
    expect(status.instances[0]!.pid).toBe(kamailioPid);
    expect(lintel.log()).toContain('is taken over');

    const history = await until(
      () => getCommand('call_history.list').run({ api }, {}),
      (h) => h.data.length >= 2,
      lintel.log,
    );
    const one = history.data.find((r) => r.from_number === a!.number)!;
    expect(one).toMatchObject({ to_number: b!.number, status: 'answered', answered_by: b!.number });
    // it ended when the phone hung up (the kept event's time), not when Lintel read of it after its restart
    expect(one.duration).toBeLessThanOrEqual(Math.ceil((hungUpAt - answeredAt) / 1000) + 1);
    expect(history.data.find((r) => r.from_number === c!.number)).toMatchObject({
      to_number: d!.number,
      status: 'answered',
      answered_by: d!.number,
    });
    expect((await getCommand('call.list').run({ api }, {})).data).toEqual([]);

    // and Lintel routes again: a new call is in the list, answered, on the phones registered before the kill
    const third = b!.call(a!.number);
    await sessionIn(third, [SessionState.Established]);
    await until(
      () => getCommand('call.list').run({ api }, {}),
      (l) => l.data.some((x) => x.caller === b!.number && x.status === 'answered'),
      lintel.log,
    );
    await third.bye();
    await kill(lintel);
  },
);
