#!/usr/bin/env node
// No runtime import cycle in the server's sources: a module that imports itself through others is loaded
// half-made (its names undefined while the loop runs), and a cycle says the layers are not layers. esbuild
// reads the sources as they run (tsconfig's verbatimModuleSyntax: `import type` is erased, a value import
// stays), so its metafile's import graph is the runtime one; type-only imports do not count. Exit 1 naming
// each cycle, file -> file. `--graph` prints every runtime import instead.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHECKED = ['apps/server/src'];
const SOURCE = /\.tsx?$/;
const SKIP = /\.test\.tsx?$|\.d\.ts$/;

function* files(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (SOURCE.test(e.name) && !SKIP.test(e.name)) yield p;
  }
}

/** The runtime imports between the checked files: file -> the files it imports (paths from the root). */
async function importGraph() {
  const entryPoints = CHECKED.flatMap((d) => [...files(path.join(root, d))]);
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: path.join(root, '.cycles-out'),
    logLevel: 'silent',
    tsconfig: path.join(root, 'tsconfig.json'),
  });
  const inside = (p) => CHECKED.some((d) => p.startsWith(`${d}/`));
  const graph = new Map();
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    if (!inside(file)) continue;
    graph.set(
      file,
      input.imports
        .filter((i) => !i.external && i.kind !== 'dynamic-import' && inside(i.path))
        .map((i) => i.path),
    );
  }
  return graph;
}

/** Tarjan's strongly connected components of more than one file (or a file importing itself). */
function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc);
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** One loop through a component, to name: the shortest way back from its first file. */
function loopOf(graph, scc) {
  const members = new Set(scc);
  const start = [...scc].sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const loop = [start];
        for (let u = v; u !== start; u = prev.get(u)) loop.splice(1, 0, u);
        return [...loop, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

const graph = await importGraph();
if (process.argv.includes('--graph')) {
  for (const [file, deps] of [...graph].sort()) for (const d of deps) console.log(`${file} -> ${d}`);
  process.exit(0);
}
const found = cycles(graph);
for (const scc of found)
  console.error(`runtime import cycle (${scc.length} files): ${loopOf(graph, scc).join(' -> ')}`);
if (found.length) process.exit(1);
console.log(`no runtime import cycle in ${CHECKED.join(', ')} (${graph.size} files)`);
