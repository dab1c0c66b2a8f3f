#!/usr/bin/env node
// Writes the terminal captures of docs/screenshots/cli-*.txt: the built CLI run in an 80×24 tmux pane against
// a fresh server with the demo data, read back with `tmux capture-pane`. Needs tmux and a build
// (`npm run build`). Usage: node scripts/capture-cli.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root, startServer } from '../bench/lib.mjs';

if (spawnSync('tmux', ['-V']).status !== 0) {
  console.error('tmux is needed: apt-get install -y tmux');
  process.exit(2);
}
const PORT = '18099';
const PASSWORD = 'Capture-password-1';
const SESSION = `lintel-capture-${process.pid}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-capture-'));
const bin = path.join(work, 'bin');
const configDir = path.join(work, 'config');
const out = path.join(root, 'docs/screenshots');
fs.mkdirSync(bin);
fs.symlinkSync(path.join(root, 'apps/cli/bin/lintel.js'), path.join(bin, 'lintel'));

const env = {
  ...process.env,
  PATH: `${bin}:${process.env.PATH}`,
  LINTEL_CONFIG_DIR: configDir,
  LINTEL_LANG: 'en',
  TERM: 'xterm-256color',
};
for (const key of ['CI', 'LINTEL_TOKEN', 'LINTEL_SERVER', 'NO_COLOR']) delete env[key];

const lintel = (args, input) =>
  execFileSync('lintel', args, { env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'inherit'] });
const tmux = (...args) => execFileSync('tmux', args, { env, encoding: 'utf8' });
const keys = (...k) => tmux('send-keys', '-t', SESSION, ...k);
const text = (s) => tmux('send-keys', '-t', SESSION, '-l', s);
const screen = () =>
  tmux('capture-pane', '-p', '-t', SESSION)
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n+$/, '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(test, what, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    const s = screen();
    if (test(s)) return s;
    if (Date.now() > end) throw new Error(`no ${what} on the screen:\n${s}`);
    await sleep(50);
  }
}
/** Ctrl+C out of the palette, then a clear screen with the prompt alone. */
async function quitToCleanPrompt() {
  keys('C-c');
  await until((s) => s.trimEnd().endsWith('$'), 'prompt');
  keys('clear', 'Enter');
  await until((s) => s.trim() === '$', 'prompt');
}
async function openPalette() {
  keys('lintel', 'Enter');
  await until((s) => / of \d+ · /.test(s), 'palette');
}
const save = (name, s) => {
  fs.writeFileSync(path.join(out, name), s);
  console.log(`wrote docs/screenshots/${name}`);
};

function arrivalsCsv(file, rows) {
  // a day's arrivals, with the mistakes people make: a mistyped e-mail, a role that does not exist, no name
  const lines = ['login,name,email,role,domains'];
  for (let i = 1; i <= rows; i++) {
    const n = String(i).padStart(4, '0');
    const email = i % 750 === 1 && i > 1 ? `arrival.${n}.example` : `arrival.${n}@riverside.example`;
    const role = i % 1499 === 1 && i > 1 ? 'Tenant' : 'Resident';
    const name = i % 2999 === 0 ? '' : `Arrival ${n}`;
    lines.push(`arrival.${n},${name},${email},${role},Building ${1 + (i % 3)}`);
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

const server = await startServer({
  PORT,
  LINTEL_DATA_DIR: path.join(work, 'data'),
  LINTEL_ADMIN_PASSWORD: PASSWORD,
});
try {
  lintel(['login', '--server', server.url, '--login', 'admin', '--password-stdin'], `${PASSWORD}\n`);
  lintel(['seed', 'demo', '--json']);
  lintel(
    ['login', '--server', server.url, '--login', 'admin', '--password-stdin', '--context', 'riverside-ops'],
    `${PASSWORD}\n`,
  );
  lintel(['context', 'use', `default@127.0.0.1:${PORT}`]);
  arrivalsCsv(path.join(work, 'arrivals.csv'), 6000);

  tmux('new-session', '-d', '-s', SESSION, '-x', '80', '-y', '24', '-c', work, 'bash --norc --noprofile');
  keys("PS1='$ '", 'Enter', 'clear', 'Enter');
  await until((s) => s.trim() === '$', 'prompt');

  // the palette, filtered to the user commands, on "Create user"
  await openPalette();
  text('user');
  await until((s) => s.includes('› user') && s.includes('Create user'), 'filtered palette');
  keys('Down', 'Down');
  save('cli-palette.txt', await until((s) => /❯ Create user/.test(s), 'Create user chosen'));

  // its arguments, asked one by one, with the command line it will run
  keys('Enter');
  await until((s) => s.includes('Login'), 'the login prompt');
  text('ann.lee');
  keys('Enter');
  await until((s) => s.includes('Login: ann.lee'), 'the name prompt');
  text('Ann Lee');
  keys('Enter');
  await until((s) => /Role \(/.test(s) && /#\d+/.test(s), 'the roles');
  text('conc');
  await until((s) => /❯ +Concierge/.test(s) && /--role \d+/.test(s), 'Concierge found');
  keys('Enter');
  // the groups by name: two entrances picked with Tab
  await until((s) => s.includes('Role: Concierge') && /#\d+/.test(s), 'the groups');
  text('entrance 1');
  await until((s) => /❯ +Entrance 1 +Building 1/.test(s), 'entrances found');
  keys('Tab');
  await until((s) => s.includes('Picked: Entrance 1 (Building 1)'), 'one entrance picked');
  keys('Tab');
  save('cli-palette-args.txt', await until((s) => /Picked: .*Building 2/.test(s), 'two entrances picked'));

  // then the optional arguments: an e-mail added, Run first
  keys('Enter');
  await until((s) => s.includes('Optional arguments') && /❯ Run/.test(s), 'the optional arguments');
  text('mail');
  await until((s) => /❯ E-mail/.test(s), 'E-mail found');
  keys('Enter');
  await until((s) => s.includes('E-mail (optional)'), 'the e-mail prompt');
  text('ann.lee@riverside.example');
  keys('Enter');
  save(
    'cli-palette-options.txt',
    await until((s) => s.includes('E-mail: ann.lee@') && /❯ Run/.test(s), 'the e-mail added'),
  );
  await quitToCleanPrompt();

  // a choice: the saved contexts
  await openPalette();
  text('context use');
  await until((s) => /❯ Make a saved context the current one/.test(s), 'context use chosen');
  keys('Enter');
  await until((s) => s.includes('riverside-ops'), 'the contexts');
  keys('Down');
  save('cli-palette-choice.txt', await until((s) => s.includes('❯ riverside-ops'), 'riverside-ops chosen'));
  await quitToCleanPrompt();

  // a list's search, filter, sort and paging: a search typed and a sort chosen
  await openPalette();
  text('list users');
  await until((s) => /❯ List users/.test(s), 'List users chosen');
  keys('Enter');
  await until((s) => s.includes('Optional arguments') && /❯ Run/.test(s), 'the list options');
  text('search');
  await until((s) => /❯ Search/.test(s), 'Search found');
  keys('Enter');
  await until((s) => s.includes('Search (optional)'), 'the search prompt');
  text('lee');
  keys('Enter');
  await until((s) => s.includes('Search: lee') && /❯ Run/.test(s), 'the search added');
  text('sort');
  await until((s) => /❯ Sort by a field/.test(s), 'Sort found');
  keys('Enter');
  await until((s) => /❯ id\b/.test(s), 'the sortable fields');
  keys('Down', 'Down');
  await until((s) => /❯ name\b/.test(s), 'name chosen');
  keys('Enter');
  save(
    'cli-palette-list.txt',
    await until((s) => s.includes('Sort by a field: name') && /❯ Run/.test(s), 'the sort added'),
  );
  await quitToCleanPrompt();

  // an import under way, then its report
  keys('lintel users import arrivals.csv --continue-on-error', 'Enter');
  save(
    'cli-import-progress.txt',
    await until(
      (s) => /\d% *\n.*rows\/s/.test(s) && !s.includes('100%') && /[1-9]\d?%/.test(s),
      'progress',
      60_000,
    ),
  );
  save('cli-import-report.txt', await until((s) => /\n\$$/.test(s.trimEnd()), 'the report', 120_000));
} finally {
  spawnSync('tmux', ['kill-session', '-t', SESSION]);
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
