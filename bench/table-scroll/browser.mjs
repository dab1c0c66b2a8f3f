/* global window, document, requestAnimationFrame -- functions below run in the page */
// Browser side of the console benchmarks: Debian's Chromium through playwright-core, a signed-in page (the
// session put into sessionStorage the way the console keeps it), and frame timing measured in the page.
import { chromium } from 'playwright-core';
import { findChromium } from '../../scripts/ensure.mjs';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium() {
  return chromium.launch({ executablePath: findChromium(), headless: true, args: CHROMIUM_ARGS });
}

/** The whole login reply's first session, as the console stores it (`lintel.session`). */
export async function login(url, login, password) {
  const r = await fetch(`${url}/api/v0/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login, password }),
  });
  if (!r.ok) throw new Error(`login failed: ${r.status} ${await r.text()}`);
  const s = (await r.json()).sessions[0];
  return { token: s.token, refresh: s.refresh, project: s.project, login };
}

/** A page of a fresh context that is signed in with `session` before any script of the console runs. */
export async function signedInPage(browser, session, { width = 1440, height = 900, locale = 'en-US' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, locale });
  await context.addInitScript(
    (s) => window.sessionStorage.setItem('lintel.session', JSON.stringify(s)),
    session,
  );
  const page = await context.newPage();
  return { context, page };
}

/**
 * Runs `drive` in the page (a function, serialised, called once per animation frame with `done`, a state
 * object and `args`, until it calls `done()`) and times every frame meanwhile: the interval between
 * consecutive requestAnimationFrame timestamps (a frame that misses its vsync shows as ~33 ms), the long
 * animation frames (> 50 ms) and long tasks the browser reports, and how many frames ended with
 * placeholder rows on screen (rows whose page had not arrived). The main thread's CPU time over the run
 * comes from the DevTools metrics (ThreadTime), so CPU taken by other processes does not count in it.
 */
export async function measureFrames(page, { drive, args = {}, timeoutMs = 600_000 }) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () =>
    Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const before = await metrics();
  const result = await page.evaluate(
    async ({ driveSource, args, timeoutMs }) => {
      const drive = new Function('return ' + driveSource)();
      const intervals = [];
      let placeholderFrames = 0;
      const longFrames = [];
      const longTasks = [];
      const observers = [];
      for (const [type, sink] of [
        ['long-animation-frame', longFrames],
        ['longtask', longTasks],
      ]) {
        try {
          const po = new PerformanceObserver((list) => {
            for (const e of list.getEntries()) sink.push(e.duration);
          });
          po.observe({ type, buffered: false });
          observers.push(po);
        } catch {
          /* not supported by this browser */
        }
      }
      const grid = document.querySelector('[data-testid="resource-grid"]');
      const started = performance.now();
      await new Promise((resolve, reject) => {
        let last = null;
        let finished = false;
        const state = {};
        const done = () => {
          finished = true;
        };
        const frame = (now) => {
          if (last !== null) intervals.push(now - last);
          last = now;
          // what the previous frame left on screen
          if (grid && grid.querySelector('[role="row"][aria-busy="true"]')) placeholderFrames++;
          try {
            drive(done, state, args);
          } catch (err) {
            reject(err);
            return;
          }
          if (finished) setTimeout(resolve, 50);
          else if (performance.now() - started > timeoutMs) reject(new Error('measureFrames: timed out'));
          else requestAnimationFrame(frame);
        };
        // start on a fresh frame
        requestAnimationFrame(() => requestAnimationFrame(frame));
      });
      // let the observers deliver
      await new Promise((r) => setTimeout(r, 200));
      for (const po of observers) po.disconnect();
      return {
        intervals,
        placeholderFrames,
        longFrames,
        longTasks,
        seconds: (performance.now() - started) / 1000,
      };
    },
    { driveSource: drive.toString(), args, timeoutMs },
  );
  const after = await metrics();
  await cdp.detach();
  const frames = Math.max(1, result.intervals.length);
  return {
    ...result,
    cpuPerFrameMs: ((after.ThreadTime - before.ThreadTime) * 1000) / frames,
  };
}

/**
 * The renderer main thread's CPU time in each frame, from a Chromium trace: the thread time of every
 * top-level task, attributed to the frame (BeginMainFrame) it follows. Preemption by other processes does
 * not count; the tracing itself adds some.
 */
export function cpuPerFrame(traceBuffer) {
  const data = JSON.parse(traceBuffer.toString('utf8'));
  const events = Array.isArray(data) ? data : data.traceEvents;
  const mainThreads = new Set(
    events
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  );
  const main = events
    .filter((e) => e.ph === 'X' && mainThreads.has(`${e.pid}:${e.tid}`))
    .sort((a, b) => a.ts - b.ts);
  const frameStarts = main.filter((e) => e.name === 'ProxyMain::BeginMainFrame').map((e) => e.ts);
  const cpu = new Array(frameStarts.length).fill(0);
  let end = -1;
  let f = -1;
  for (const e of main) {
    if (e.name !== 'ThreadControllerImpl::RunTask' && e.name !== 'RunTask') continue;
    if (e.ts < end) continue; // nested
    end = e.ts + (e.dur ?? 0);
    while (f + 1 < frameStarts.length && frameStarts[f + 1] <= e.ts) f++;
    if (f >= 0) cpu[f] += (e.tdur ?? e.dur ?? 0) / 1000;
  }
  // the first and last frames hold the start and the end of the run
  return cpu.slice(2, -2);
}

export function percentile(values, p) {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** 16.7 ms is one frame at 60 Hz; rAF timestamps jitter by a few tenths, so "over" means past 17.5 ms. */
export const FRAME_BUDGET_MS = 16.7;
export const OVER_BUDGET_MS = 17.5;

export function summarise(values, over = OVER_BUDGET_MS) {
  return {
    frames: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : NaN,
    over: values.filter((v) => v > over).length,
  };
}
