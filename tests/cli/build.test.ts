/**
 * Issue 25, item 10: `npm start` and `npm test` build only what changed. After a build, building the same
 * target again builds nothing (its inputs hash as at the last build). The device simulator is the target
 * used; `--force` (build anyway) is not tried here: other files' tests run the simulator from its bundle.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { root } from './support';

const build = (...args: string[]) => {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
};

it('a second build of an unchanged target builds nothing', () => {
  build('device-sim');
  expect(build('device-sim')).toMatch(/^nothing to build \(up to date: device-sim\)$/m);
}, 120_000);
