#!/usr/bin/env node
// `npm test`: install what is missing (npm packages; Chromium, Mosquitto, Kamailio and sipp on Debian as root),
// build, type-check, lint, check the formatting (prettier), each workspace's dependency declarations
// (scripts/check-deps.mjs) and that the server's sources have no runtime import cycle (scripts/check-cycles.mjs),
// and run every test: unit, API against real servers, CLI as a child process, browser in Chromium.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ensureChromium,
  ensureInstalled,
  ensureMosquittoBroker,
  ensureMosquittoClients,
  ensureSip,
  fail,
  root,
  run,
} from './ensure.mjs';

// `--storage`: the second database pass of CI (.ci/run). The static checks ran in the first pass and the
// build is skipped when nothing changed; only the tests that touch storage run (vitest.config.ts,
// `storageTests`: what behaves differently on PostgreSQL than on PGlite). Everything else is the same code
// over the same HTTP API, and runs once.
const args = process.argv.slice(2);
const storageOnly = args.includes('--storage');
const vitestArgs = args.filter((a) => a !== '--storage');

ensureInstalled();
ensureChromium();
ensureMosquittoClients();
ensureMosquittoBroker();
ensureSip();

const step = (title, cmd, args) => {
  console.log(`\n== ${title}`);
  const started = Date.now();
  const cpu = childrenCpuMs();
  if (run(cmd, args) !== 0) fail(`${title} failed (see above).`);
  console.log(
    `== ${title}: ${((Date.now() - started) / 1000).toFixed(1)} s, CPU ${((childrenCpuMs() - cpu) / 1000).toFixed(1)} s`,
  );
};
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/**
 * The static checks side by side, as many at once as the machine has cores: the type-check alone is about
 * half their CPU and one core's work, so one after another they kept a core idle for a minute of every CI
 * run. Each check's output is kept and printed whole when it ends, so two never interleave; any failure
 * fails the run once all have ended, every failed check named.
 */
async function checksAtOnce(checks) {
  console.log(`\n== static checks, ${Math.min(checks.length, os.availableParallelism())} at a time`);
  const started = Date.now();
  const cpu = childrenCpuMs();
  const failed = [];
  const queue = [...checks];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [title, cmd, args] = next;
      const t0 = Date.now();
      const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = [];
      child.stdout.on('data', (d) => out.push(d));
      child.stderr.on('data', (d) => out.push(d));
      const code = await new Promise((resolve) => {
        child.once('error', (err) => {
          out.push(Buffer.from(`${cmd} could not run: ${err.message}\n`));
          resolve(1);
        });
        child.once('close', (c) => resolve(c ?? 1));
      });
      console.log(`\n== ${title}`);
      process.stdout.write(Buffer.concat(out));
      console.log(
        `== ${title}: ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
      if (code !== 0) failed.push(title);
    }
  };
  await Promise.all(Array.from({ length: Math.min(checks.length, os.availableParallelism()) }, worker));
  console.log(
    `== static checks: ${((Date.now() - started) / 1000).toFixed(1)} s, CPU ${((childrenCpuMs() - cpu) / 1000).toFixed(1)} s`,
  );
  if (failed.length) fail(`${failed.join(', ')} failed (see above).`);
}

step('build', process.execPath, [path.join(root, 'scripts/build.mjs')]);
if (!storageOnly)
  await checksAtOnce([
    ['type-check', bin('tsc'), ['-p', 'tsconfig.json']],
    ['lint', bin('eslint'), ['--max-warnings=0', '.']],
    ['format', bin('prettier'), ['--check', '.']],
    ['dependencies', process.execPath, [path.join(root, 'scripts/check-deps.mjs')]],
    ['import cycles', process.execPath, [path.join(root, 'scripts/check-cycles.mjs')]],
  ]);

console.log(
  `\n== tests (${process.env.DATABASE_URL ? 'PostgreSQL from DATABASE_URL' : 'embedded PGlite'}` +
    `${storageOnly ? ', the storage tests only' : ''})`,
);
const reportOf = (phase) => path.join(root, '.test-results', `vitest${phase ? `-${phase}` : ''}.json`);
fs.mkdirSync(path.join(root, '.test-results'), { recursive: true });
const cpuDir = path.join(root, '.test-results', 'cpu');
fs.rmSync(cpuDir, { recursive: true, force: true });
// The whole suite runs in three phases (vitest.config.ts): the files that share nothing but the machine in a
// fork per core, then those that drive a browser or a terminal two at a time (`browserTests`), then those
// that drive the SIP server one at a time (`sipTests`). A command line naming files or options runs them
// once, as vitest would.
const phases = vitestArgs.length ? [undefined] : ['parallel', 'browser', 'sip'];
const cpuBefore = childrenCpuMs();
let status = 0;
for (const phase of phases) {
  const report = reportOf(phase);
  fs.rmSync(report, { force: true });
  if (phase) console.log(`\n== tests, ${phase} phase`);
  const phaseStarted = Date.now();
  const machine = machineTicks();
  const env = {
    ...process.env,
    ...(storageOnly ? { LINTEL_TEST_PASS: 'storage' } : {}),
    ...(phase ? { LINTEL_TEST_PHASE: phase } : {}),
  };
  const code = run(
    bin('vitest'),
    [
      'run',
      '--reporter=default',
      '--reporter=json',
      `--reporter=${path.join(root, 'scripts/vitest-failures.mjs')}`,
      `--outputFile.json=${report}`,
      // the storage pass has no browser or SIP files
      ...(phase && phase !== 'parallel' ? ['--passWithNoTests'] : []),
      ...vitestArgs,
    ],
    { env },
  );
  if (code !== 0) status = code;
  if (phase) console.log(`\n== the ${phase} phase: ${phaseReport(phaseStarted, machine)}`);
}
const vitestCpuMs = childrenCpuMs() - cpuBefore;
let summary = '';
const reports = phases
  .map(reportOf)
  .filter((f) => fs.existsSync(f))
  .map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
if (reports.length === phases.length) {
  const r = {
    startTime: Math.min(...reports.map((x) => x.startTime)),
    testResults: reports.flatMap((x) => x.testResults ?? []),
  };
  const sum = (key) => reports.reduce((n, x) => n + (x[key] ?? 0), 0);
  printSlowest(r);
  printCostliest(vitestCpuMs);
  summary =
    `${sum('numPassedTests')} passed, ${sum('numFailedTests')} failed` +
    (sum('numPendingTests') ? `, ${sum('numPendingTests')} skipped` : '');
}
console.log(`\ntests: ${summary || 'no report written'}`);
printFailed(reports);
process.exit(status === 0 && summary ? 0 : status || 1);

/**
 * The failed tests of every phase, last of all: each phase's reporter lists its own failures at its end, but a
 * later phase's output and the summaries push them out of CI's tail (a run once said "1 failed" and nothing
 * more). A line a test with its first error's first lines.
 */
function printFailed(reports) {
  const lines = [];
  for (const file of reports.flatMap((x) => x.testResults ?? [])) {
    const name = path.relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failed)
      lines.push(
        `✗ ${name} › ${[...(t.ancestorTitles ?? []), t.title].join(' › ')}\n${firstLines(t.failureMessages?.[0])}`,
      );
    if (failed.length === 0 && file.status === 'failed')
      lines.push(`✗ ${name} (the file)\n${firstLines(file.message)}`);
  }
  if (lines.length)
    console.log(
      `\n== failed, all phases\n${lines.slice(0, 10).join('\n')}` +
        (lines.length > 10 ? `\n… and ${lines.length - 10} more (above, in each phase's list)` : ''),
    );
}

function firstLines(text) {
  const kept = String(text ?? '')
    .split(/\r\n|\r|\n/)
    .filter((line) => line.trim() && !/^\s+at .*(node_modules|node:internal|\(<anonymous>\))/.test(line))
    .slice(0, 14)
    .map((line) => `    ${line.slice(0, 200)}`);
  return kept.join('\n');
}

/** The slowest test files of the run and the files' time added up, so CI shows where its time goes. */
function printSlowest(r) {
  const files = (r.testResults ?? [])
    .map((f) => ({ name: path.relative(root, f.name), ms: (f.endTime ?? 0) - (f.startTime ?? 0) }))
    .sort((a, b) => b.ms - a.ms);
  if (files.length === 0) return;
  const total = files.reduce((sum, f) => sum + f.ms, 0);
  const wall = Math.max(...r.testResults.map((f) => f.endTime ?? 0)) - r.startTime;
  console.log(
    `\n== time: ${files.length} files, ${(total / 1000).toFixed(0)} s added up, ${(wall / 1000).toFixed(0)} s from start to end; the slowest:`,
  );
  for (const f of files.slice(0, 15)) console.log(`${(f.ms / 1000).toFixed(1).padStart(8)} s  ${f.name}`);
}

/** The machine's CPU counters from /proc/stat (all cores, clock ticks): busy and all; null elsewhere. */
function machineTicks() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const n = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy
    const all = n.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: all - n[3] - n[4], all };
  } catch {
    return null;
  }
}

/**
 * A phase's wall time and how busy the whole machine was meanwhile (every process, Chromium's and
 * PostgreSQL's included): a phase near 100 % is bound by CPU, one well below waits on something.
 */
function phaseReport(started, before) {
  const after = machineTicks();
  const wall = `${((Date.now() - started) / 1000).toFixed(0)} s`;
  if (!before || !after || after.all === before.all) return wall;
  const busy = (100 * (after.busy - before.busy)) / (after.all - before.all);
  return `${wall}, the machine's ${os.availableParallelism()} cores ${busy.toFixed(0)} % busy, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ')}`;
}

/** CPU of the children this process waited for (vitest, its forks and theirs), from /proc; 0 elsewhere. */
function childrenCpuMs() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return 0;
  }
}

/**
 * The files that cost most CPU (written by tests/support/cpu-per-file.ts): wall time on a shared machine
 * says as much about the neighbours as about the file; CPU time says what the file itself costs.
 */
function printCostliest(vitestCpuMs) {
  if (!fs.existsSync(cpuDir)) return;
  const files = fs
    .readdirSync(cpuDir)
    .map((f) => JSON.parse(fs.readFileSync(path.join(cpuDir, f), 'utf8')))
    .sort((a, b) => b.cpuMs - a.cpuMs);
  if (files.length === 0) return;
  const sum = files.reduce((s, f) => s + f.cpuMs, 0);
  console.log(
    `\n== CPU: ${files.length} files, ${(sum / 1000).toFixed(0)} s of CPU in their forks and children` +
      (vitestCpuMs ? `, ${(vitestCpuMs / 1000).toFixed(0)} s for the whole vitest run` : '') +
      "; the costliest (CPU s, of it in children and Chromium's pages, wall s):",
  );
  for (const f of files.slice(0, 15))
    console.log(
      `${(f.cpuMs / 1000).toFixed(1).padStart(8)} s ${(f.childrenMs / 1000).toFixed(1).padStart(7)} s ` +
        `${(f.forkMs / 1000).toFixed(1).padStart(7)} s  ${f.file}`,
    );
}
