#!/usr/bin/env node
// Builds what `npm start` runs: the server, the CLI and the device simulator as single ES modules (esbuild),
// the console (Vite).
// Workspace packages (@lintel/*) are bundled in; everything from npm stays an import of node_modules.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.slice(2);
const want = (name) => only.length === 0 || only.includes(name);

const externalNpm = {
  name: 'external-npm',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@lintel/') || args.path.startsWith('node:')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

async function bundle(entry, outfile) {
  await build({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(root, outfile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    plugins: [externalNpm],
    logLevel: 'warning',
  });
}

const t0 = Date.now();
if (want('server')) await bundle('apps/server/src/main.ts', 'apps/server/dist/main.js');
if (want('cli')) await bundle('apps/cli/src/main.ts', 'apps/cli/dist/lintel.js');
if (want('device-sim')) await bundle('apps/device-sim/src/main.ts', 'apps/device-sim/dist/device-sim.js');
if (want('web')) {
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
    {
      cwd: path.join(root, 'apps/web'),
      stdio: 'inherit',
    },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}
console.log(
  `built ${only.length ? only.join(', ') : 'server, cli, device-sim, web'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
