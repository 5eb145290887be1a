import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests spawn real git and the built CLI; two cores here.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
