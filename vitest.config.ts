import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Four projects, one per folder, so a new test file lands in one by where it
 * is put: `npm run test:unit` (pure core, milliseconds), `test:integration`
 * (real git, no CLI), `test:e2e` (the built CLI, real git), `test:clients`
 * (real third-party programs: package managers, the pre-commit framework,
 * the harness binaries; minutes, downloads on first use).
 * `npm test` runs the first three at once; CI (.ci/run) runs both commands.
 *
 * One file per core at once (vitest's own default is cores - 1: one at a time
 * on two cores). More than that was tried: 4 workers on this 2-core machine,
 * already loaded, pushed slow e2e tests past their 60 s timeout.
 * GUARD_TEST_WORKERS overrides. Vitest wants one worker count for projects
 * that run together, so all share it.
 * Soak-sized loops are in `npm run soak`, not here (docs/development.md).
 */
const workers = Number(process.env.GUARD_TEST_WORKERS) || availableParallelism();

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
      { extends: true, test: { name: 'clients', include: ['test/clients/**/*.test.ts'] } },
    ],
  },
});
