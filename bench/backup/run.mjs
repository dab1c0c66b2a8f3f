// bench/backup: Lintel's backup make and apply against pg_dump -Fc and pg_restore of the same PostgreSQL
// database in the same run, rows per second, and the peak memory (RSS) of each at every size (flat in the
// rows: the tables stream). Each size runs in a process of its own (measure.ts). BENCH_ROWS: the users of
// each size (default 10,000 and 1,000,000); BENCH_POSTGRES: the server.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, root, writeResults } from '../lib.mjs';

const SIZES = (process.env.BENCH_ROWS ?? '10000,1000000').split(',').map(Number);
const results = [];
// BENCH_MEASURED: a file of measure.ts's JSON lines (sizes measured one by one) written up without running again
if (process.env.BENCH_MEASURED)
  for (const line of fs.readFileSync(process.env.BENCH_MEASURED, 'utf8').split('\n').filter(Boolean))
    results.push(JSON.parse(line));
for (const users of process.env.BENCH_MEASURED ? [] : SIZES) {
  console.log(`backup: ${users.toLocaleString('en')} users`);
  const r = spawnSync(
    path.join(root, 'node_modules/.bin/vite-node'),
    [path.join(root, 'bench/backup/measure.ts')],
    {
      cwd: root,
      env: { ...process.env, BENCH_ROWS: String(users) },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
  const line = r.stdout.trim().split('\n').pop();
  results.push(JSON.parse(line));
  console.log(line);
}
const n = (x) => Math.round(x).toLocaleString('en');
const rows = results
  .map(
    (r) =>
      `| ${n(r.users)} | ${n(r.rows)} | ${n(r.make.rowsPerS)} | ${n(r.pgDump.rowsPerS)} | **${(r.make.rowsPerS / r.pgDump.rowsPerS).toFixed(2)}** | ${n(r.apply.rowsPerS)} | ${n(r.pgRestore.rowsPerS)} | **${(r.apply.rowsPerS / r.pgRestore.rowsPerS).toFixed(2)}** | ${r.baselineMiB} / ${r.make.peakMiB} / ${r.apply.peakMiB} | ${(r.zipBytes / 1048576).toFixed(1)} / ${(r.dumpBytes / 1048576).toFixed(1)} |`,
  )
  .join('\n');
writeResults(
  'backup',
  `## backup — make and apply against pg_dump and pg_restore

${new Date().toISOString().slice(0, 10)} · ${machine()} · load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')}.
A project of N users (each with an account, a group and every third a marker: rows = accounts + users + links + the rest) on PostgreSQL, seeded, vacuumed and checkpointed. **make**: every entity set into the zip (format 4: one REPEATABLE READ snapshot; each table one \`COPY (select …) TO STDOUT\` in the text format — pg_dump's statement, scoped to the project; on a server of one project the link tables read whole — on a connection in that snapshot, its bytes streamed as they come into the entry, deflate level 1, the zip written by \`backup/zip.ts\` with zlib's CRC-32); **apply**: that zip over the same project (one transaction on a connection of its own: each entry COPY'd as it is into a typed staging table, delete the missing, upsert). Against \`pg_dump -Fc\` of the whole database and \`pg_restore\` into a new empty one (schema, data and indexes), timed in the same run. Memory: the RSS of the process doing make and apply (the server's code in process), before / peak during make / peak during apply.

| users | rows | make rows/s | pg_dump rows/s | ratio | apply rows/s | pg_restore rows/s | ratio | RSS MiB before / make / apply | zip / dump MiB |
|---|---|---|---|---|---|---|---|---|---|
${rows}

Run: \`npm run bench -- backup\` (\`BENCH_ROWS=10000,1000000\`).`,
);
