import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.{ts,tsx}', 'tests/**/*.test.ts'],
    // tests/postgres: what only PostgreSQL has, run in the pass with DATABASE_URL set
    exclude: ['**/node_modules/**', '**/dist/**', ...(process.env.DATABASE_URL ? [] : ['tests/postgres/**'])],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // one core is left to vitest's own process: a worker's progress reports wait at most 60 s for its
    // answer (a fixed timeout), and on a loaded 2-core CI machine two forks, their servers and Chromium
    // once starved it into "Timeout calling onTaskUpdate" with every test passed. On 2 cores one fork is
    // 297 s against 220 s for two.
    poolOptions: { forks: { maxForks: Math.max(1, os.availableParallelism() - 1), minForks: 1 } },
    fileParallelism: true,
  },
});
