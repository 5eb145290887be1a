#!/usr/bin/env node
// S2 of two builds at once (docs/performance.md, "One hook process"): the same scripted
// session (scripts/session-sim.mjs) in three repositories, with no hooks, with build A's
// hooks and with build B's, each call of the three in turn so that all three share the
// machine's load. Prints each build's extra wall time over no hooks.
//
//   node scripts/s2-ab.mjs NODE A/cli/main.js B/cli/main.js [calls=423]
//
// A build written `resident:B/cli/main.js` runs its hooks through the resident server
// (GUARD_RESIDENT=1, its socket in a folder of this run's, the server ended at the end):
// `node scripts/s2-ab.mjs NODE dist/cli/main.js resident:dist/cli/main.js` is S2 of the
// two paths of one build. The server's CPU is printed beside it (it is not in the wall
// time of the hook processes alone, but it is in the session's).
//
// A build other than dist/ must sit where node_modules is found above it (e.g. a copy of
// dist/ in node_modules/.base), as for scripts/cpu-ab.mjs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanEnv } from './lib.mjs';
import * as sim from './session-sim.mjs';

const [node, a, b, n] = process.argv.slice(2);
if (!node || !a || !b) {
  console.error('usage: node scripts/s2-ab.mjs NODE A/cli/main.js B/cli/main.js [calls]');
  process.exit(2);
}
const CALLS = Number(n) || 423;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-s2ab-'));
const env = cleanEnv();
const resident = (x) => x.startsWith('resident:');
const sockDir = path.join(tmp, 'resident');
const envOf = { none: env, A: env, B: env };
for (const [k, x] of [
  ['A', a],
  ['B', b],
])
  if (resident(x)) envOf[k] = { ...env, GUARD_RESIDENT: '1', GUARD_RESIDENT_DIR: sockDir };
const sides = {
  none: null,
  A: path.resolve(a.replace(/^resident:/, '')),
  B: path.resolve(b.replace(/^resident:/, '')),
};
const repos = {};
const ms = { none: 0, A: 0, B: 0 };
for (const k of Object.keys(sides)) repos[k] = sim.makeSessionRepo(path.join(tmp, k), env);
const nodeMs = [];
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const load0 = load();
for (let i = 0; i < CALLS; i++) {
  if (i % 20 === 0) {
    const t = process.hrtime.bigint();
    spawnSync(node, ['-e', '0']);
    nodeMs.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  for (const k of i % 2 ? ['none', 'A', 'B'] : ['B', 'A', 'none']) {
    const c = sim.sessionCall(repos[k], i, 's2');
    const t = process.hrtime.bigint();
    if (sides[k]) sim.hookOnce(node, sides[k], repos[k], c.pre, envOf[k]);
    c.run(env);
    if (sides[k]) sim.hookOnce(node, sides[k], repos[k], c.post, envOf[k]);
    ms[k] += Number(process.hrtime.bigint() - t) / 1e6;
  }
}
const median = (x) => [...x].sort((p, q) => p - q)[x.length >> 1];
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(
  `S2, ${CALLS} calls, Node ${version}, load ${load0} -> ${load()}, node -e 0 ${median(nodeMs).toFixed(1)} ms`,
);
console.log(`no hooks: ${(ms.none / 1000).toFixed(1)} s`);
const servers = sim.residentServers(sockDir);
for (const k of ['A', 'B'])
  console.log(
    `${k} (${sides[k]}): +${((ms[k] - ms.none) / 1000).toFixed(1)} s, ${((ms[k] - ms.none) / (2 * CALLS)).toFixed(1)} ms per hook process`,
  );
if (servers.length > 0)
  console.log(
    `resident servers: ${servers.filter((x) => x.server).length}, their CPU and their git processes' ${servers.reduce((t, x) => t + x.cpuMs, 0).toFixed(0)} ms`,
  );
for (const x of servers) process.kill(x.pid);
fs.rmSync(tmp, { recursive: true, force: true });
