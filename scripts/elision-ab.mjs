#!/usr/bin/env node
/**
 * findElisions' CPU time per call (the cost the placeholder rule adds to every write), two builds
 * loaded in one process and alternated call by call, so a shared machine's load falls on both:
 *
 *   ELISION_BEFORE=/other/checkout/dist node scripts/elision-ab.mjs [rounds]
 *
 * compares that build (another checkout's `npm run build`; its node_modules must resolve `diff`) with
 * this checkout's dist/. Workloads: --timing's (a 15 MB file, a typical edit, a typical truncation),
 * this checkout's built dist/cli/guard.js and src/core/elision.ts with 3 lines rewritten.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { timingInputs } from './elision-inputs.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!process.env.ELISION_BEFORE) {
  console.error('ELISION_BEFORE=/path/to/another/dist is needed');
  process.exit(2);
}
const load = async (dist) =>
  (await import(pathToFileURL(path.join(dist, 'core', 'elision.js')).href)).findElisions;
const A = await load(process.env.ELISION_BEFORE);
const B = await load(path.join(ROOT, 'dist'));
const { big, bigNew, small, smallNew, trunc } = timingInputs();
const real = readFileSync(path.join(ROOT, 'dist', 'cli', 'guard.js'), 'utf8');
const rl = real.split('\n');
const realNew = rl.map((l, i) => (i === 100 || i === 5000 || i === 9000 ? l + ' ' : l)).join('\n');
// a file of real code with comments: guard's own elision.ts (2,900 lines, many comments, quotes, dots), 3 lines rewritten
const src = readFileSync(path.join(ROOT, 'src', 'core', 'elision.ts'), 'utf8');
const sl = src.split('\n');
const srcNew = sl.map((l, i) => (i === 200 || i === 1200 || i === 2200 ? l + ' ' : l)).join('\n');
const loads = [
  ['15 MB file, 1% changed', bigNew.join('\n'), big.join('\n'), 1],
  ['typical edit (300 lines, 3 rewritten)', smallNew.join('\n'), small.join('\n'), 400],
  ['typical truncation (300 lines, 20 -> 1)', trunc.join('\n'), small.join('\n'), 200],
  [`real file dist/cli/guard.js (${rl.length} lines, 3 rewritten)`, realNew, real, 5],
  [`commented source src/core/elision.ts (${sl.length} lines, 3 rewritten)`, srcNew, src, 20],
];
const rounds = Number(process.argv[2] ?? 15);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (const [label, neu, old, n] of loads) {
  const ta = [],
    tb = [];
  for (const f of [A, B]) f(neu, old);
  for (let r = 0; r < rounds; r++) {
    for (const [f, t] of r % 2
      ? [
          [A, ta],
          [B, tb],
        ]
      : [
          [B, tb],
          [A, ta],
        ]) {
      const c0 = cpu();
      for (let i = 0; i < n; i++) f(neu, old);
      t.push((cpu() - c0) / n);
    }
  }
  const med = (x) => [...x].sort((a, b) => a - b)[x.length >> 1];
  const min = (x) => Math.min(...x);
  console.log(
    `${label}: before median ${med(ta).toFixed(3)} ms (min ${min(ta).toFixed(3)}), this build ${med(tb).toFixed(3)} ms (min ${min(tb).toFixed(3)}); ratio median ${(med(tb) / med(ta)).toFixed(2)}x, min ${(min(tb) / min(ta)).toFixed(2)}x`,
  );
}
