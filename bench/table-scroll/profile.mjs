/* global document */
// bench/table-scroll/profile.mjs: where a frame of the reading scroll goes. The same console page and scroll
// as run.mjs, under a Chromium trace with the timeline and the V8 sampler; prints the main thread's time by
// trace event (self time) and by JavaScript function (samples), per frame.
//
//   BENCH_USERS=100000 node bench/table-scroll/profile.mjs [trace.json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startServer } from '../lib.mjs';
import { launchChromium, login, measureFrames, signedInPage } from './browser.mjs';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const ROWS = Number(process.env.BENCH_TRACED_ROWS ?? 2_400);
const ROW = 30;
const PASSWORD = 'Bench-password-1';
const out = process.argv[2];

function scrollDriver(done, state, { step, untilRow, rowHeight }) {
  const el = document.querySelector('[data-testid="resource-grid"]');
  if (state.stop === undefined) {
    state.stop = Math.min(el.scrollHeight - el.clientHeight, untilRow * rowHeight);
    state.at = el.scrollTop;
  }
  if (state.at >= state.stop - 1) return done();
  state.at = Math.min(state.stop, state.at + step);
  el.scrollTop = state.at;
}

/** Self time (thread time) of every trace event on the renderer main thread, by name. */
export function summariseTrace(events) {
  const main = new Set(
    events
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  );
  const ev = events
    .filter((e) => e.ph === 'X' && main.has(`${e.pid}:${e.tid}`) && e.tdur !== undefined)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const frames = ev.filter((e) => e.name === 'ProxyMain::BeginMainFrame').length;
  const self = new Map();
  const stack = [];
  for (const e of ev) {
    while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.tdur);
    self.set(e.name, (self.get(e.name) ?? 0) + e.tdur);
    stack.push(e);
  }
  // the V8 sampler: self samples by function
  const nodes = new Map();
  const samples = new Map();
  let interval = 0;
  for (const e of events) {
    if (e.name !== 'ProfileChunk' || (!main.has(`${e.pid}:${e.tid}`) && !e.args?.data?.cpuProfile)) continue;
    const p = e.args.data.cpuProfile ?? {};
    for (const n of p.nodes ?? []) nodes.set(`${e.id}:${n.id}`, n.callFrame);
    (p.samples ?? []).forEach((s) => samples.set(`${e.id}:${s}`, (samples.get(`${e.id}:${s}`) ?? 0) + 1));
    for (const d of e.args.data.timeDeltas ?? []) interval += d;
  }
  const fn = new Map();
  for (const [k, n] of samples) {
    const cf = nodes.get(k);
    const name = cf
      ? `${cf.functionName || '(anon)'} ${cf.url?.split('/').pop() ?? ''}:${cf.lineNumber}:${cf.columnNumber}`
      : k;
    fn.set(name, (fn.get(name) ?? 0) + n);
  }
  const totalSamples = [...samples.values()].reduce((a, b) => a + b, 0);
  return { frames, self, fn, totalSamples, interval };
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-prof-'));
  const server = await startServer({
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    MQTT_PORT: '0',
    LINTEL_SIP: 'off',
    LINTEL_ADMIN_PASSWORD: PASSWORD,
    LINTEL_DATA_DIR: dataDir,
  });
  let browser;
  try {
    const session = await login(server.url, 'admin', PASSWORD);
    const r = await fetch(`${server.url}/api/v0/seed/scale`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session.token}` },
      body: JSON.stringify({ users: USERS }),
    });
    if (!r.ok) throw new Error(await r.text());
    browser = await launchChromium();
    const { page } = await signedInPage(browser, session);
    await page.goto(`${server.url}/users`);
    await page.waitForSelector(
      '[data-testid="resource-grid"] [role="row"][aria-rowindex="2"][aria-selected]',
    );
    await page.waitForTimeout(1000);
    // a first pass warms the JIT and the pages' cache, as the bench's earlier measures do
    await measureFrames(page, {
      drive: scrollDriver,
      args: { step: 4 * ROW, untilRow: ROWS, rowHeight: ROW },
    });
    await page.evaluate(() => (document.querySelector('[data-testid="resource-grid"]').scrollTop = 0));
    await page.waitForTimeout(1000);
    await browser.startTracing(page, {
      categories: [
        'toplevel',
        'cc',
        'blink',
        'devtools.timeline',
        'disabled-by-default-devtools.timeline',
        'v8.execute',
        'disabled-by-default-v8.cpu_profiler',
      ],
    });
    const m = await measureFrames(page, {
      drive: scrollDriver,
      args: { step: 4 * ROW, untilRow: ROWS, rowHeight: ROW },
    });
    const buf = await browser.stopTracing();
    if (out) fs.writeFileSync(out, buf);
    const data = JSON.parse(buf.toString('utf8'));
    const s = summariseTrace(Array.isArray(data) ? data : data.traceEvents);
    const frames = m.intervals.length;
    console.log(`${frames} frames; ThreadTime ${m.cpuPerFrameMs.toFixed(2)} ms a frame (traced)`);
    console.log('\nself thread time per frame, by trace event:');
    for (const [name, us] of [...s.self].sort((a, b) => b[1] - a[1]).slice(0, 40))
      console.log(`${(us / 1000 / frames).toFixed(3).padStart(8)} ms  ${name}`);
    console.log(`\nJS samples: ${s.totalSamples}; top functions by self samples (% of samples):`);
    for (const [name, n] of [...s.fn].sort((a, b) => b[1] - a[1]).slice(0, 50))
      console.log(`${((100 * n) / s.totalSamples).toFixed(1).padStart(6)} %  ${name}`);
  } finally {
    await browser?.close();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
