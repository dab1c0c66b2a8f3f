#!/usr/bin/env node
// `npm start`: install what is missing, build, and run the server with the console on the embedded database.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ensureInstalled, fail, root, run } from './ensure.mjs';

ensureInstalled();
if (run(process.execPath, [path.join(root, 'scripts/build.mjs')]) !== 0)
  fail('The build failed (see above).');

const server = spawn(
  process.execPath,
  ['--enable-source-maps', path.join(root, 'apps/server/dist/main.js')],
  {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
