import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.{ts,tsx}', 'tests/**/*.test.ts'],
    // tests/postgres: what only PostgreSQL has, run in the pass with DATABASE_URL set
    exclude: ['**/node_modules/**', '**/dist/**', ...(process.env.DATABASE_URL ? [] : ['tests/postgres/**'])],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    fileParallelism: true,
  },
});
