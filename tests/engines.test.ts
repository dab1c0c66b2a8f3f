/**
 * Issue 25, item 10: every package `npm install` puts in runs on the Node.js the README promises (the root
 * `engines.node` floor). A package whose `engines` leaves the floor out made `npm install` warn `EBADENGINE`
 * on Node 20 (`cookie@2`, under Fastify's `light-my-request` 6.8: pinned to 6.6.0 in `overrides`).
 */
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const read = (f: string) => JSON.parse(fs.readFileSync(path.join(root, f), 'utf8'));

it('every locked package accepts the lowest Node.js the README names', () => {
  const floor = semver.minVersion(read('package.json').engines.node as string)!;
  expect(floor.version).toBe('20.19.0');
  const lock = read('package-lock.json') as {
    packages: Record<
      string,
      { version?: string; optional?: boolean; engines?: Record<string, string> | string[] }
    >;
  };
  // an optional package npm cannot use here is skipped without a word (a native build for other machines)
  const refused = Object.entries(lock.packages)
    .filter(([, p]) => !p.optional)
    .filter(([, p]) => {
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      return node !== undefined && semver.validRange(node) && !semver.satisfies(floor, node);
    })
    .map(([where, p]) => `${where}@${p.version} (node ${(p.engines as Record<string, string>).node})`);
  expect(refused).toEqual([]);
});
