/**
 * Soak-sized loops: `npm test` runs a small representative case of each load
 * test; `npm run soak` (scripts/soak.mjs) runs the same test files with
 * GUARD_SOAK=1 and reads vitest's JSON report. docs/development.md lists
 * which tests scale and to what.
 */
export const SOAK = process.env.GUARD_SOAK === '1';

/** `inSuite` under `npm test`, `inSoak` under `npm run soak`. */
export function scale<T>(inSuite: T, inSoak: T): T {
  return SOAK ? inSoak : inSuite;
}

// Figures a test hands to the soak: `task.meta.NAME = value` lands in vitest's JSON report.
declare module '@vitest/runner' {
  interface TaskMeta {
    [figure: string]: unknown;
  }
}
