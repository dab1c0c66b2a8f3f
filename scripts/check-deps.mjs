#!/usr/bin/env node
// Each workspace declares the packages its sources import: a bare import in a workspace's sources must be
// one of its package.json dependencies (devDependencies count for test files and build configs; root
// devDependencies, such as vitest, count for test files only). Node's own modules and relative imports
// need nothing. Exit 1 with one line per missing declaration, and per declared @lintel/* never imported.
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rootPkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const builtins = new Set(builtinModules);
const SOURCE = /\.(m?[jt]sx?|cts|mts)$/;
const TEST = /\.test\.[jt]sx?$|\/test-support\//;
// static imports and re-exports (`import x from 'p'`, `import type {X} from 'p'`, `export * from 'p'`),
// bare `import 'p'`, dynamic `import('p')`
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

const packageOf = (spec) => {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return null;
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtins.has(name) ? null : name;
};

function* files(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (SOURCE.test(e.name) && !e.name.endsWith('.d.ts')) yield p;
  }
}

const problems = [];
for (const ws of rootPkg.workspaces) {
  const dir = path.join(root, ws);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const deps = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  const devDeps = new Set(Object.keys(pkg.devDependencies ?? {}));
  const rootDev = new Set(Object.keys(rootPkg.devDependencies ?? {}));
  const used = new Set();
  // the sources: src/ and any top-level source file (locales/index.ts, apps/web/vite.config.ts)
  const sources = [
    ...files(path.join(dir, 'src')),
    ...fs
      .readdirSync(dir)
      .filter((f) => SOURCE.test(f))
      .map((f) => path.join(dir, f)),
  ];
  for (const file of sources) {
    const rel = path.relative(root, file);
    // comments out first: prose such as "the file imports back (`lintel users import`)" is no import
    const text = fs
      .readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
    const test = TEST.test(rel);
    const config = /\.config\.[cm]?[jt]s$/.test(rel);
    for (const m of text.matchAll(IMPORT)) {
      const name = packageOf(m[1] ?? m[2] ?? m[3]);
      if (!name || name === pkg.name) continue;
      used.add(name);
      if (deps.has(name)) continue;
      if ((test || config) && devDeps.has(name)) continue;
      if (test && rootDev.has(name)) continue;
      problems.push(`${rel}: imports ${name}, which ${ws}/package.json does not declare`);
    }
  }
  for (const d of deps)
    if (d.startsWith('@lintel/') && !used.has(d))
      problems.push(`${ws}/package.json: declares ${d}, which no source of ${ws} imports`);
}

if (problems.length) {
  console.error([...new Set(problems)].join('\n'));
  console.error(`\n${problems.length} undeclared or unused workspace dependencies.`);
  process.exit(1);
}
console.log(`dependencies: every import of the ${rootPkg.workspaces.length} workspaces is declared.`);
