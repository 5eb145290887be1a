#!/usr/bin/env node
// Two (or more) builds of guard, alternated run by run on one repository: the CPU
// time (user + system) of guard and the git processes it waited for, its wall time
// and its peak RSS, each from /usr/bin/time. On a shared machine the wall time moves
// with everyone's load; CPU time moves much less, and alternating puts both builds
// under the same load (docs/performance.md).
//
//   node scripts/cpu-ab.mjs --repo DIR [--runs 16] [--node PATH] [--stdin TEXT] [--reset FILE=TEXT] base=DIST new=DIST [-- check --json]
//
// --stdin TEXT is guard's input on each run, --reset FILE=TEXT written into the repository
// before each run (a `{n}` in either: the run's number), e.g. P4's write:
//   --reset notes/bench.txt='bench note\nshadow {n}\n' --stdin 'bench note\nguard {n}\n' ... -- write notes/bench.txt --auto --json
//
// DIST is a build's dist folder (copy one aside before rebuilding: `cp -r dist /tmp/base`;
// it must sit where node_modules is found above it, e.g. node_modules/.base). The
// arguments after `--` are guard's (default: check --json); a run that exits non-zero is
// reported. `npm run bench -- --keep` keeps the bench's repositories to run it on.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lib from './lib.mjs';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash === -1 ? argv : argv.slice(0, dash);
const guardArgs = dash === -1 ? ['check', '--json'] : argv.slice(dash + 1);
const opt = (name, dflt) => {
  const i = own.indexOf(name);
  return i === -1 ? dflt : own.splice(i, 2)[1];
};
const repo = opt('--repo', null);
const runs = Number(opt('--runs', '16'));
const node = opt('--node', process.execPath);
const unescape = (t) => (t == null ? null : t.replace(/\\n/g, '\n'));
const stdin = unescape(opt('--stdin', null));
const reset = opt('--reset', null);
const builds = own.map((s) => {
  const [label, dist] = s.split('=');
  return {
    label,
    main: path.resolve(dist, 'cli', 'main.js'),
    cpu: [],
    wall: [],
    rss: [],
    failed: 0,
  };
});
if (!repo || builds.length === 0 || builds.some((b) => !fs.existsSync(b.main))) {
  console.error(
    'usage: node scripts/cpu-ab.mjs --repo DIR [--runs N] [--node PATH] LABEL=DIST ... [-- ARGS]',
  );
  process.exit(2);
}
const env = lib.cleanEnv();
const out = path.join(os.tmpdir(), `guard-cpu-ab-${process.pid}`);
console.log(
  `${runs} rounds, node ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()}, load ${os.loadavg()[0].toFixed(1)} at the start`,
);
let n = 0;
for (let i = 0; i < runs; i++) {
  // alternate the order too: whichever runs first in a round meets a colder cache
  for (const b of i % 2 ? [...builds].reverse() : builds) {
    n++;
    if (reset) {
      const at = reset.indexOf('=');
      fs.writeFileSync(
        path.join(repo, reset.slice(0, at)),
        unescape(reset.slice(at + 1)).replaceAll('{n}', String(n)),
      );
    }
    const r = spawnSync(
      '/usr/bin/time',
      ['-f', '%U %S %M %e', '-o', out, node, b.main, ...guardArgs],
      {
        cwd: repo,
        env,
        maxBuffer: 1 << 28,
        ...(stdin !== null ? { input: stdin.replaceAll('{n}', String(n)) } : {}),
      },
    );
    if (r.status !== 0) b.failed++;
    const [u, s, kb, e] = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .pop()
      .split(' ')
      .map(Number);
    b.cpu.push((u + s) * 1000);
    b.rss.push(kb / 1024);
    b.wall.push(e * 1000);
  }
}
fs.rmSync(out, { force: true });
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)];
// /usr/bin/time counts CPU in 10 ms steps: the mean resolves what the median cannot
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
for (const b of builds)
  console.log(
    `${b.label.padEnd(8)} CPU ${median(b.cpu).toFixed(0)} ms (median), ${mean(b.cpu).toFixed(0)} (mean)  wall ${median(b.wall).toFixed(0)} ms  peak RSS ${median(b.rss).toFixed(0)} MB (max ${Math.max(...b.rss).toFixed(0)})${b.failed ? `  ${b.failed} runs failed` : ''}`,
  );
console.log(`load ${os.loadavg()[0].toFixed(1)} at the end`);
