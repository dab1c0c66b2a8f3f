#!/usr/bin/env node
// `npm test`: install what is missing (npm packages; Chromium, Mosquitto, Kamailio and sipp on Debian as root), build, type-check, lint,
// check the formatting (prettier) and each workspace's dependency declarations (scripts/check-deps.mjs),
// and run every test: unit, API against real servers, CLI as a child process, browser in Chromium.
import fs from 'node:fs';
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

ensureInstalled();
ensureChromium();
ensureMosquittoClients();
ensureMosquittoBroker();
ensureSip();

const step = (title, cmd, args) => {
  console.log(`\n== ${title}`);
  if (run(cmd, args) !== 0) fail(`${title} failed (see above).`);
};
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

step('build', process.execPath, [path.join(root, 'scripts/build.mjs')]);
step('type-check', bin('tsc'), ['-p', 'tsconfig.json']);
step('lint', bin('eslint'), ['--max-warnings=0', '.']);
step('format', bin('prettier'), ['--check', '.']);
step('dependencies', process.execPath, [path.join(root, 'scripts/check-deps.mjs')]);

console.log(`\n== tests (${process.env.DATABASE_URL ? 'PostgreSQL from DATABASE_URL' : 'embedded PGlite'})`);
const report = path.join(root, '.test-results', 'vitest.json');
fs.mkdirSync(path.dirname(report), { recursive: true });
fs.rmSync(report, { force: true });
const status = run(bin('vitest'), [
  'run',
  '--reporter=default',
  '--reporter=json',
  `--reporter=${path.join(root, 'scripts/vitest-failures.mjs')}`,
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);
let summary = '';
if (fs.existsSync(report)) {
  const r = JSON.parse(fs.readFileSync(report, 'utf8'));
  summary =
    `${r.numPassedTests} passed, ${r.numFailedTests} failed` +
    (r.numPendingTests ? `, ${r.numPendingTests} skipped` : '');
}
console.log(`\ntests: ${summary || 'no report written'}`);
process.exit(status === 0 && summary ? 0 : status || 1);
