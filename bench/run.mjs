#!/usr/bin/env node
// `npm run bench [-- name …]`: builds, then runs each benchmark folder's run.mjs (all when none is named).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { root } from './lib.mjs';

const names = process.argv.slice(2);
const all = fs
  .readdirSync(path.join(root, 'bench'))
  .filter((d) => fs.existsSync(path.join(root, 'bench', d, 'run.mjs')));
const chosen = names.length ? names : all;
if (
  spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), 'server', 'web', 'cli'], {
    stdio: 'inherit',
  }).status !== 0
)
  process.exit(1);
for (const name of chosen) {
  if (!all.includes(name)) {
    console.error(`no benchmark ${name}; there are: ${all.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n== bench/${name}`);
  const r = spawnSync(process.execPath, [path.join(root, 'bench', name, 'run.mjs')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
