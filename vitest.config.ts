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
/**
 * Files under those paths that check the HTTP layer itself (headers, the API document, closing, the image
 * decoders): what they store is incidental, so the second pass would repeat them for nothing.
 */
export const httpOnlyTests = [
  'tests/api/openapi.test.ts',
  'tests/api/security-headers.test.ts',
  'tests/api/http-close.test.ts',
  'tests/api/image-bombs.test.ts',
  'tests/api/request-timeout.test.ts',
];
const storagePass = process.env.LINTEL_TEST_PASS === 'storage';

/**
 * The files that drive a real program of their own against the clock — Chromium, a pseudo-terminal read
 * against the clock of keystrokes — run after the others (`npm test` runs three phases, scripts/test.mjs), two
 * at a time: each spends half its time waiting on Chromium's or the terminal's answers (keyboard-journeys:
 * 95 s of CPU in 188 s alone), so one at a time left a core idle for a third of CI.
 */
export const browserTests = [
  'tests/e2e/**/*.test.ts',
  'tests/cli/context.test.ts',
  'tests/cli/device-commands.test.ts',
  'tests/cli/families.test.ts',
  'tests/cli/first-start.test.ts',
  'tests/cli/interactive.test.ts',
  'tests/cli/keyboard.test.ts',
  'tests/cli/licences-script.test.ts',
  'tests/cli/palette-keys.test.ts',
  'tests/cli/session.test.ts',
];
/**
 * The files that drive Kamailio (with sipp, sip.js, baresip or a browser's dialer) run last, one at a time:
 * a second file's load on a 2-core machine delayed their calls past their tests' bounds (a SIP call still
 * "Establishing" at 30 s). They are also browser files when they drive Chromium; this list wins.
 */
export const sipTests = ['tests/sip/**/*.test.ts', 'tests/e2e/dialer*.test.ts', 'tests/e2e/sip-*.test.ts'];
/** the files of every phase but the first (the parallel one) */
export const serialTests = [...browserTests, ...sipTests];
/** `parallel`, `browser`, `sip`, or unset (a file or two run by hand: one phase, as before) */
const phase = process.env.LINTEL_TEST_PHASE;
const cores = os.availableParallelism();
const forks =
  Number(process.env.LINTEL_TEST_FORKS) ||
  (phase === 'sip' ? 1 : phase === 'browser' ? Math.min(2, cores) : phase === 'parallel' ? cores : 0) ||
  Math.max(1, cores - 1);
const phaseFiles = phase === 'browser' ? browserTests : phase === 'sip' ? sipTests : null;

export default defineConfig({
  test: {
    include: phaseFiles
      ? storagePass
        ? phaseFiles.filter((f) => storageTests.includes(f))
        : phaseFiles
      : storagePass
        ? storageTests
        : ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.{ts,tsx}', 'tests/**/*.test.ts'],
    // tests/postgres: what only PostgreSQL has, run in the pass with DATABASE_URL set
    exclude: [
      '**/node_modules/**',
      '**/dist/**',
      ...(process.env.DATABASE_URL ? [] : ['tests/postgres/**']),
      ...(storagePass ? [...pgliteOnlyTests, ...httpOnlyTests] : []),
      ...(phase === 'parallel' ? serialTests : phase === 'browser' ? sipTests : []),
    ],
    // the browser and SIP files: above their own waits (tests/support/web.ts WAIT, 30 s), so a step that waits
    // in vain fails with its own message (the locator, a screenshot) rather than as the whole test's timeout
    testTimeout: phase === 'browser' || phase === 'sip' ? 45_000 : 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // `npm test`'s parallel phase: a fork per core (servers on free ports, databases of their own); its
    // browser phase: two; its SIP phase: one. Run by hand without a phase: one core is left to vitest's own process (a fork's
    // progress reports must be answered within vitest's fixed 60 s). LINTEL_TEST_FORKS overrides either.
    // docs/decisions.md, "The suite's own time".
    poolOptions: { forks: { maxForks: forks, minForks: 1 } },
    // in `npm test`'s phases a fork runs file after file without a new process each (a light API file costs
    // about 3 s of CPU less: the fork's start, the server's modules loaded and transformed, PGlite's WASM
    // compiled once a fork); the files take out what they add to shared tables. Run by hand: isolated.
    // docs/decisions.md, "The suite's own time".
    isolate: !phase,
    fileParallelism: true,
    // each file's CPU (its fork and the children it waited for), printed by scripts/test.mjs
    setupFiles: ['tests/support/cpu-per-file.ts'],
  },
});
