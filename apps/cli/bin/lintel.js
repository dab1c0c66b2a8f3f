#!/usr/bin/env node
// The `lintel` command: runs the bundle that `npm run build` writes.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/lintel.js', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write(
    'lintel: the CLI is not built yet. Run `npm run build` (or `node scripts/build.mjs cli`) in the repository.\n',
  );
  process.exit(1);
}
await import(bundle.href);
