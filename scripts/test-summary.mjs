#!/usr/bin/env node
// Prints vitest's totals as one plain line ("N passed, N failed, N skipped")
// from the JSON report `npm test` writes, so any CI log shows the count.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.vitest-results.json';
const r = JSON.parse(readFileSync(file, 'utf8'));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(
  `tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`,
);
process.exit(r.numFailedTests > 0 || r.numTotalTests === 0 ? 1 : 0);
