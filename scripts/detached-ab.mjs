#!/usr/bin/env node
// The detached-command reader's CPU per call (src/flows/hook/detached.ts `detaches`), two builds
// alternated round by round in one process: typical agent commands, and commands built to be slow.
//   node scripts/detached-ab.mjs base=/tmp/base/dist new=dist [rounds=8]
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.split('=')));
const load = async (dist) =>
  (await import(pathToFileURL(path.resolve(dist, 'flows/hook/detached.js')).href)).detaches;
const builds = { base: await load(args.base), new: await load(args.new ?? 'dist') };
const rounds = Number(args.rounds ?? 8);
const typical = [
  'npm test',
  'git status',
  'ls -la src',
  "grep -rn 'foo' src | head -20",
  'cd app && npm run build 2>&1 | tail -5',
  'git commit -m "$(cat <<\'EOF\'\nFix a & b\n\nCo-Authored-By: x\nEOF\n)"',
  'python3 -m pytest -x -q',
  'npm run dev > /tmp/log 2>&1 &',
  "find . -name '*.py' -exec grep -l x {} \\;",
  'docker compose up -d',
  'for f in *.py; do python -m black "$f"; done',
];
const slow = {
  '20,000 a | b': Array(20000).fill('a | b').join('; '),
  '20,000 glob options': 'timeout ' + Array(20000).fill('-*?').join(' '),
  '5,000 jobs and a wait': Array(5000).fill('a &').join(' ') + ' wait',
};
const cpu = (f, xs, n) => {
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) for (const x of xs) f(x);
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
};
const per = { base: [], new: [] };
const big = { base: {}, new: {} };
for (let k = 0; k < rounds; k++)
  for (const name of k % 2 ? ['base', 'new'] : ['new', 'base']) {
    per[name].push((cpu(builds[name], typical, 500) / (500 * typical.length)) * 1000);
    for (const [s, c] of Object.entries(slow))
      (big[name][s] ??= []).push(cpu(builds[name], [c], 1));
  }
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(
  `typical command, us per call (median of ${rounds}): base ${med(per.base).toFixed(1)}, new ${med(per.new).toFixed(1)}`,
);
for (const s of Object.keys(slow))
  console.log(`${s}, ms: base ${med(big.base[s]).toFixed(0)}, new ${med(big.new[s]).toFixed(0)}`);
