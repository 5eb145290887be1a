import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Three projects, one per folder, so a new test file lands in one by where it
 * is put: `npm run test:unit` (pure core, milliseconds), `test:integration`
 * (real git, no CLI), `test:e2e` (the built CLI, real git, harnesses).
 * `npm test` runs all three at once.
 *
 * The integration and end-to-end files mostly wait on the git and node
 * processes they start, so more files run at once than there are cores: one
 * worker per core plus two (GUARD_TEST_WORKERS overrides). Vitest wants one
 * worker count for projects that run together, so all three share it.
 * Soak-sized loops are in `npm run soak`, not here (docs/development.md).
 */
const workers = Number(process.env.GUARD_TEST_WORKERS) || availableParallelism() + 2;

export default defineConfig({
  test: {
    // Integration tests spawn real git and the built CLI; two cores here.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: workers,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
