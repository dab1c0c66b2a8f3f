// bench/access-decision: the one access decision (`AccessIndex.decide`, packages/core/src/access/decide.ts)
// over 10,000 rules and 100,000 identifiers, on one core: decisions per second and CPU per decision, against
// two references measured in the same run and alternated A, B, C, A, B, C…: the raw index lookup (the
// identifier found by its type and number, the rules of the device — the floor any decision pays) and the
// plain scan of every rule (`decideByScan`, the reference the index must equal). Each decision is preceded by
// the identifier's lookup by (type, number), as at the door.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { machine, root, writeResults } from '../lib.mjs';

const RULES = Number(process.env.BENCH_RULES ?? 10_000);
const IDENTIFIERS = Number(process.env.BENCH_IDENTIFIERS ?? 100_000);
const DEVICES = 500;
const USERS = 20_000;
const GROUPS = 200;
const SCHEDULES = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1000);
const TZ = 'Europe/Moscow';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

// the core's TypeScript, bundled for this process
const out = path.join(os.tmpdir(), `lintel-bench-access-${process.pid}.mjs`);
await build({
  entryPoints: [path.join(root, 'packages/core/src/access/index.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: out,
  logLevel: 'warning',
});
const core = await import(out);
fs.rmSync(out, { force: true });

// ----- data: a deterministic pseudo-random project ----------------------------------------------------------
let seed = 21;
const rnd = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
const int = (n) => Math.floor(rnd() * n);
const pick = (n, k, base = 1) => [...new Set(Array.from({ length: k }, () => base + int(n)))];

const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const schedules = new Map();
for (let s = 1; s <= SCHEDULES; s++) {
  const modes = ['weekly', 'weekly', 'daily', 'every_2_weeks', 'monthly'];
  schedules.set(
    s,
    core.ScheduleCreate.parse({
      name: `schedule ${s}`,
      valid_from: '2026-01-05',
      repeat_mode: modes[s % modes.length],
      repeat_days: weekdays.filter(() => rnd() < 0.6),
      time_from: 3600 * (6 + int(6)),
      time_to: 3600 * (14 + int(10)),
    }),
  );
}
const rules = [];
for (let id = 1; id <= RULES; id++)
  rules.push({
    id,
    devices: pick(DEVICES, 1 + int(5)),
    time_rules: rnd() < 0.3 ? [] : pick(SCHEDULES, 1 + int(2)),
    users: pick(USERS, int(10)),
    identifiers: pick(IDENTIFIERS, int(20)),
    domains: rnd() < 0.3 ? pick(GROUPS, 1) : [],
    prohibition: rnd() < 0.02,
  });
const groupsOfUser = Array.from({ length: USERS + 1 }, () => pick(GROUPS, 1 + int(2)));
const identifiers = [];
const byNumber = new Map();
for (let id = 1; id <= IDENTIFIERS; id++) {
  const limited = rnd() < 0.1;
  const i = {
    id,
    type: 'card',
    value: String(1_000_000 + id * 7),
    is_active: rnd() > 0.02,
    owner: rnd() < 0.9 ? 1 + int(USERS) : null,
    period_restrict_active: rnd() < 0.1,
    period_restrict_from_u: '2026-01-01T00:00:00Z',
    period_restrict_to_u: '2026-12-31T00:00:00Z',
    passes_restrict_active: limited,
    passes_restrict_max_count: limited ? 10 : 0,
    passes_count: limited ? int(12) : 0,
  };
  identifiers.push(i);
  byNumber.set(`card:${i.value}`, i);
}
const areas = Array.from({ length: 20 }, (_, k) => ({ id: k + 1, entry: [k * 2 + 1], exit: [k * 2 + 2] }));
const data = { rules, schedules, areas };
let t = performance.now();
const index = new core.AccessIndex(data);
const indexMs = performance.now() - t;
const holidays = core.holidayDays(['2026-11-04', '2026-12-31']);

// the presentations: a card number at a device, at an instant within a week (a door's "now"); half of them
// at a device of a rule naming the card, its owner or his group (people go to their doors), half anywhere
const CASES = 100_000;
const weekStart = Date.parse('2026-11-23T00:00:00Z');
const devicesFor = new Map();
const note = (key, r) => {
  const l = devicesFor.get(key);
  if (l) l.push(...r.devices);
  else devicesFor.set(key, [...r.devices]);
};
for (const r of rules) {
  for (const i of r.identifiers) note(`i${i}`, r);
  for (const u of r.users) note(`u${u}`, r);
  for (const g of r.domains) note(`g${g}`, r);
}
const cases = Array.from({ length: CASES }, () => {
  const i = identifiers[int(IDENTIFIERS)];
  const theirs = [
    ...(devicesFor.get(`i${i.id}`) ?? []),
    ...(i.owner === null ? [] : (devicesFor.get(`u${i.owner}`) ?? [])),
    ...(i.owner === null ? [] : groupsOfUser[i.owner].flatMap((g) => devicesFor.get(`g${g}`) ?? [])),
  ];
  return {
    number: `card:${i.value}`,
    device: theirs.length && rnd() < 0.5 ? theirs[int(theirs.length)] : 1 + int(DEVICES),
    instant: weekStart + int(7 * 86_400_000),
    ctx: {
      tz: TZ,
      holidays,
      groups: i.owner === null ? [] : groupsOfUser[i.owner],
      lastPassages: new Map(),
    },
  };
});

// the index equals the scan on these cases (a sample: the scan is slow)
const outcomes = new Map();
for (const c of cases.slice(0, 2000)) {
  const i = byNumber.get(c.number);
  const a = index.decide(i, c.device, c.instant, c.ctx);
  const b = core.decideByScan(i, c.device, c.instant, data, c.ctx);
  if (JSON.stringify(a) !== JSON.stringify(b))
    throw new Error(`index and scan differ: ${JSON.stringify({ c, a, b })}`);
  const k = a.reason ?? 'allowed';
  outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
}

// ----- the measure --------------------------------------------------------------------------------------------
let sink = 0;
const runners = {
  decide: (c) => {
    const d = index.decide(byNumber.get(c.number), c.device, c.instant, c.ctx);
    if (d.allowed) sink++;
  },
  lookup: (c) => {
    const i = byNumber.get(c.number);
    sink += index.rulesOfDevice(c.device).length + i.id;
  },
  scan: (c) => {
    const d = core.decideByScan(byNumber.get(c.number), c.device, c.instant, data, c.ctx);
    if (d.allowed) sink++;
  },
};
/** One round: as many calls as fit in ROUND_MS; wall and CPU (user + system) time. */
function round(name) {
  const run = runners[name];
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let k = int(CASES);
  for (;;) {
    for (let j = 0; j < 256; j++) {
      run(cases[k]);
      k = k + 1 === CASES ? 0 : k + 1;
    }
    n += 256;
    if (performance.now() - t0 >= ROUND_MS) break;
  }
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { perS: (n / wall) * 1000, cpuUs: (cpu.user + cpu.system) / n };
}
const load1 = os
  .loadavg()
  .map((x) => x.toFixed(1))
  .join(', ');
for (const name of Object.keys(runners)) round(name); // warm-up
const results = { decide: [], lookup: [], scan: [] };
for (let r = 0; r < ROUNDS; r++)
  for (const name of ['decide', 'lookup', 'scan']) {
    const res = round(name);
    results[name].push(res);
    log(
      `round ${r + 1} ${name}: ${Math.round(res.perS).toLocaleString('en')}/s, ${res.cpuUs.toFixed(2)} µs CPU`,
    );
  }
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fig = (name) => ({
  perS: median(results[name].map((r) => r.perS)),
  cpuUs: median(results[name].map((r) => r.cpuUs)),
});
const d = fig('decide');
const l = fig('lookup');
const s = fig('scan');
const fmt = (x) => Math.round(x).toLocaleString('en');
const load2 = os
  .loadavg()
  .map((x) => x.toFixed(1))
  .join(', ');
const perDevice = rules.reduce((n, r) => n + r.devices.length, 0) / DEVICES;

// the previous runs' lines are kept (the last four)
const file = path.join(root, 'bench', 'RESULTS.md');
const previous = fs.existsSync(file)
  ? [...fs.readFileSync(file, 'utf8').matchAll(/^- run .*$/gm)]
      .map((m) => m[0])
      .filter((x) => x.includes('access-decision'))
      .slice(-4)
  : [];
const today = new Date().toISOString().slice(0, 16).replace('T', ' ');
const line = `- run ${today} UTC (access-decision): decide ${fmt(d.perS)}/s wall, ${d.cpuUs.toFixed(2)} µs CPU (${fmt(1e6 / d.cpuUs)} per CPU second); lookup ${fmt(l.perS)}/s, ${l.cpuUs.toFixed(2)} µs; scan ${fmt(s.perS)}/s, ${s.cpuUs.toFixed(1)} µs; load ${load1}`;
const md = `## access-decision — the access decision over ${fmt(RULES)} rules and ${fmt(IDENTIFIERS)} identifiers, one core

${today.slice(0, 10)} · ${machine()} · load average before ${load1}, after ${load2}.
${fmt(RULES)} rules on ${DEVICES} devices (${perDevice.toFixed(0)} rules a device on average; 1–5 devices, 0–9 users, 0–19 identifiers, a group in 3 of 10, schedules in 7 of 10, 2% prohibitions), ${fmt(IDENTIFIERS)} cards (90% owned by one of ${fmt(USERS)} users in 1–2 of ${GROUPS} groups; 10% with a pass limit, 10% with a period, 2% revoked), ${SCHEDULES} schedules in ${TZ} with 2 holidays, 20 anti-passback areas. ${fmt(CASES)} presentations (a card number; a device of a rule naming the card, its owner or his group for half of them, any device for the rest; an instant within one week) replayed in a loop; each call looks the card up by type and number first. Rounds of ${ROUND_MS} ms alternated decide, lookup, scan × ${ROUNDS}; medians. The index is built in ${indexMs.toFixed(0)} ms; it equals the scan on the first 2,000 presentations (outcomes: ${[...outcomes].map(([k, v]) => `${k} ${v}`).join(', ')}).

| what | calls/s (wall) | CPU µs a call | calls per CPU second | against decide (CPU) |
|---|---|---|---|---|
| \`AccessIndex.decide\` (aim ≥ 200,000/s) | ${fmt(d.perS)} | ${d.cpuUs.toFixed(2)} | ${fmt(1e6 / d.cpuUs)} | 1 |
| raw index lookup (card by number, rules of the device) | ${fmt(l.perS)} | ${l.cpuUs.toFixed(2)} | ${fmt(1e6 / l.cpuUs)} | ${(d.cpuUs / l.cpuUs).toFixed(2)}× less CPU |
| \`decideByScan\` (every rule read) | ${fmt(s.perS)} | ${s.cpuUs.toFixed(2)} | ${fmt(1e6 / s.cpuUs)} | ${(s.cpuUs / d.cpuUs).toFixed(0)}× more CPU |

Calls per second are wall-clock, so they fall with the machine's load (the load average above: the machine is shared); CPU per call is this process's own.

${[...previous, line].join('\n')}
`;
writeResults('access-decision', md);
log(md);
if (sink === -1) console.log('');
