#!/usr/bin/env node
// Builds what `npm start` runs: the server, the CLI and the device simulator as single ES modules (esbuild),
// the console (Vite).
// Workspace packages (@lintel/*) are bundled in; everything from npm stays an import of node_modules, but for
// the few the CLI loads at every start (`cliInlined`).
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const want = (name) => only.length === 0 || only.includes(name);

/** npm packages bundled in rather than imported from node_modules (their names, as imported). */
const externalNpm = (inlined = []) => ({
  name: 'external-npm',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@lintel/') || args.path.startsWith('node:')) return undefined;
      const pkg = args.path
        .split('/')
        .slice(0, args.path.startsWith('@') ? 2 : 1)
        .join('/');
      if (inlined.includes(pkg)) return undefined;
      return { path: args.path, external: true };
    });
  },
});

/**
 * What the CLI imports at every start, bundled in: a start is a process of its own (a script's every line, and
 * several hundred in the tests), and loading these from node_modules — each file found, read and compiled
 * apart, ws's CommonJS read by the ES module loader — cost more than their code. `lintel users list` (no
 * server): 0.41 s of CPU with them imported, 0.29 bundled (docs/decisions.md, "The suite's own time"). What
 * the CLI loads only for a command that needs it (ink and react for the interactive screens, exceljs, undici)
 * stays an import; react must, since ink imports it too.
 */
const cliInlined = ['zod', 'i18next', 'commander', 'ws'];

async function bundle(entry, outfile, inlined = []) {
  await build({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(root, outfile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    plugins: [externalNpm(inlined)],
    // a CommonJS package bundled into an ES module (ws) calls `require` for Node's own modules
    ...(inlined.length
      ? {
          banner: {
            js: "import { createRequire as __lintelRequire } from 'node:module'; const require = __lintelRequire(import.meta.url);",
          },
        }
      : {}),
    logLevel: 'warning',
  });
}

// The embedded database's initdb'ed data folder beside the server's bundle (apps/server/src/db/database.ts
// unpacks it at a first start instead of running initdb, which peaks at ~800 MiB): made by PGlite in a child
// process, so its memory goes with it.
function initdbSeed() {
  const out = path.join(root, 'apps/server/dist/pglite-initdb.tgz');
  const script = `
    import fs from 'node:fs';
    import os from 'node:os';
    import path from 'node:path';
    import { PGlite } from '@electric-sql/pglite';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-initdb-'));
    const db = await PGlite.create(path.join(dir, 'pglite'));
    const dump = await db.dumpDataDir('gzip');
    await db.close();
    fs.writeFileSync(${JSON.stringify(out)}, Buffer.from(await dump.arrayBuffer()));
    fs.rmSync(dir, { recursive: true, force: true });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.join(root, 'apps/server'),
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// Build only what changed: each target's inputs (its own sources, the shared packages, the locales, the lock
// file and this script) are hashed by content; a target whose output exists and whose inputs hash as at its
// last build is not built again (`--force` builds anyway). A fresh clone, or any change, builds as before.
const force = process.argv.includes('--force');
const shared = [
  'packages/core/src',
  'packages/commands/src',
  'locales',
  'package-lock.json',
  'scripts/build.mjs',
];
const targets = {
  server: { inputs: ['apps/server/src', 'apps/server/package.json'], output: 'apps/server/dist/main.js' },
  cli: { inputs: ['apps/cli/src', 'apps/cli/package.json'], output: 'apps/cli/dist/lintel.js' },
  'device-sim': {
    inputs: ['apps/device-sim/src', 'apps/device-sim/package.json'],
    output: 'apps/device-sim/dist/device-sim.js',
  },
  web: {
    inputs: ['apps/web/src', 'apps/web/index.html', 'apps/web/vite.config.ts', 'apps/web/package.json'],
    output: 'apps/web/dist/index.html',
  },
};

function fingerprint(inputs) {
  const hash = createHash('sha256');
  const walk = (rel) => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) return;
    const stat = fs.statSync(abs);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) {
        if (name === 'node_modules' || name === 'dist') continue;
        walk(path.join(rel, name));
      }
    } else {
      hash.update(rel).update('\0').update(fs.readFileSync(abs)).update('\0');
    }
  };
  for (const rel of inputs) walk(rel);
  return hash.digest('hex');
}

// the stamps live outside the outputs (the console's dist/ is served as it is)
const stampOf = (target) => path.join(root, 'node_modules', '.cache', 'lintel-build', `${target}.sha256`);
const upToDate = (target, print) =>
  !force &&
  fs.existsSync(path.join(root, targets[target].output)) &&
  fs.existsSync(stampOf(target)) &&
  fs.readFileSync(stampOf(target), 'utf8') === print;

const t0 = Date.now();
const built = [];
const skipped = [];
for (const target of Object.keys(targets)) {
  if (!want(target)) continue;
  const print = fingerprint([...targets[target].inputs, ...shared]);
  if (upToDate(target, print)) {
    skipped.push(target);
    continue;
  }
  fs.rmSync(stampOf(target), { force: true });
  if (target === 'server') {
    await bundle('apps/server/src/main.ts', targets.server.output);
    initdbSeed();
  }
  if (target === 'cli') await bundle('apps/cli/src/main.ts', targets.cli.output, cliInlined);
  if (target === 'device-sim') await bundle('apps/device-sim/src/main.ts', targets['device-sim'].output);
  if (target === 'web') {
    const r = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
      { cwd: path.join(root, 'apps/web'), stdio: 'inherit' },
    );
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  fs.mkdirSync(path.dirname(stampOf(target)), { recursive: true });
  fs.writeFileSync(stampOf(target), print);
  built.push(target);
}
console.log(
  (built.length
    ? `built ${built.join(', ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`
    : 'nothing to build') + (skipped.length ? ` (up to date: ${skipped.join(', ')})` : ''),
);
