import os from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The tests whose outcome may differ between PGlite and PostgreSQL: the server's API against its storage
 * (tests/api), the device gateway's (tests/devices), what only PostgreSQL has (tests/postgres), the server's
 * own unit tests, and the CLI files that stream bulk data through COPY and staging tables. CI's second pass
 * (`npm test -- --storage` with DATABASE_URL, see .ci/run) runs only these; the browser and the other CLI
 * files drive the same HTTP API and run once, on PGlite. A new file that touches storage in a way of its own
 * belongs in tests/api, tests/devices or tests/postgres, or in this list.
 */
export const storageTests = [
  'tests/api/**/*.test.ts',
  'tests/devices/**/*.test.ts',
  'tests/postgres/**/*.test.ts',
  'apps/server/src/**/*.test.ts',
  'tests/cli/bulk.test.ts',
  'tests/cli/journal.test.ts',
];
/**
 * Files under those paths that always run on PGlite whatever DATABASE_URL says (they start embedded servers
 * of their own): the second pass would run them again unchanged, so it leaves them out.
 */
export const pgliteOnlyTests = ['tests/api/pglite-saturation.test.ts', 'tests/api/slow-bodies.test.ts'];
const storagePass = process.env.LINTEL_TEST_PASS === 'storage';

export default defineConfig({
  test: {
    include: storagePass
      ? storageTests
      : ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.{ts,tsx}', 'tests/**/*.test.ts'],
    // tests/postgres: what only PostgreSQL has, run in the pass with DATABASE_URL set
    exclude: [
      '**/node_modules/**',
      '**/dist/**',
      ...(process.env.DATABASE_URL ? [] : ['tests/postgres/**']),
      ...(storagePass ? pgliteOnlyTests : []),
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One core is left to vitest's own process unless LINTEL_TEST_FORKS says otherwise: a fork's progress
    // reports must be answered within vitest's fixed 60 s, and on a loaded 2-core machine two forks once
    // starved it into "Timeout calling onTaskUpdate" with every test passed. Test servers now start from a
    // migrated template (tests/support/database-template.ts), which removed the longest synchronous stretch
    // (PGlite's initdb); two forks on two cores stay a choice (LINTEL_TEST_FORKS=2) until a whole suite has
    // passed that way on a slow machine (docs/decisions.md, "The suite's own time").
    poolOptions: {
      forks: {
        maxForks: Number(process.env.LINTEL_TEST_FORKS) || Math.max(1, os.availableParallelism() - 1),
        minForks: 1,
      },
    },
    fileParallelism: true,
    // each file's CPU (its fork and the children it waited for), printed by scripts/test.mjs
    setupFiles: ['tests/support/cpu-per-file.ts'],
  },
});
