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
// A build written `noask:B/cli/main.js` runs no after event for a write (the tools' matcher
// guard init installs for a harness that cannot ask a person: docs/harnesses/README.md), the
// pre events and the shell call's after event as before: `node scripts/s2-ab.mjs NODE
// dist/cli/main.js noask:dist/cli/main.js` is S2 of Claude Code's events against those.
//
// A build written `installed:B/cli/main.js` runs the commands `guard init --agent claude` of that
// build installs, through `sh -c` as Claude Code runs them (scripts/session-sim.mjs claudeCommands:
// since branch s2h the after event of a write starts guard only when a person was asked):
// `node scripts/s2-ab.mjs NODE installed:BASE/cli/main.js installed:dist/cli/main.js` is S2 of the
// two builds' installed events; `resident+installed:B/cli/main.js` the same through the resident
// hook (GUARD_RESIDENT=1 in the harness's environment).
//
// A build written `plugin:B/plugin/index.js` runs the session in this process through that
// build's guard-cli/plugin as Cline calls it (clineBeforeTool, clineAfterTool: the bench's S2
// in-process row), no node start: `node scripts/s2-ab.mjs - plugin:A/plugin/index.js
// plugin:B/plugin/index.js` (NODE `-`: this node) is S2 in process of two builds.
//
// A build other than dist/ must sit where node_modules is found above it (e.g. a copy of
// dist/ in node_modules/.base), as for scripts/cpu-ab.mjs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv } from './lib.mjs';
import * as sim from './session-sim.mjs';

const [nodeArg, a, b, n] = process.argv.slice(2);
const node = nodeArg === '-' ? process.execPath : nodeArg;
if (!node || !a || !b) {
  console.error(
    'usage: node scripts/s2-ab.mjs NODE|- [resident:|noask:|installed:]A/cli/main.js|plugin:A/plugin/index.js B... [calls]',
  );
  process.exit(2);
}
const CALLS = Number(n) || 423;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-s2ab-'));
const env = cleanEnv();
const resident = (x) => /^resident(\+installed)?:/.test(x);
const kindOf = (x) =>
  /^(resident\+installed|resident|noask|plugin|installed):/.exec(x)?.[1] ?? 'hooks';
const sockDir = path.join(tmp, 'resident');
const envOf = { none: env, A: env, B: env };
for (const [k, x] of [
  ['A', a],
  ['B', b],
])
  if (resident(x)) envOf[k] = { ...env, GUARD_RESIDENT: '1', GUARD_RESIDENT_DIR: sockDir };
const sides = {
  none: null,
  A: path.resolve(a.replace(/^[\w+]+:/, '')),
  B: path.resolve(b.replace(/^[\w+]+:/, '')),
};
const kinds = { A: kindOf(a), B: kindOf(b) };
const plugins = {};
for (const k of ['A', 'B'])
  if (kinds[k] === 'plugin') {
    Object.assign(process.env, env);
    plugins[k] = await import(pathToFileURL(sides[k]).href);
  }
const commands = {};
for (const k of ['A', 'B'])
  if (kinds[k].endsWith('installed')) commands[k] = await sim.claudeCommands(node, sides[k]);
const repos = {};
const ms = { none: 0, A: 0, B: 0 };
for (const k of Object.keys(sides)) repos[k] = sim.makeSessionRepo(path.join(tmp, k), env);
const nodeMs = [];
const cpu = { none: 0, A: 0, B: 0 };
/** CPU ms so far of this process and of its children it waited for (the hooks, their git processes: /proc's 10 ms ticks). */
function cpuNow() {
  const u = process.cpuUsage();
  const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (u.user + u.system) / 1000 + (+f[13] + +f[14]) * 10;
}

/** One call of the session through a build's plugin, as the bench's S2 in-process row makes it (scripts/bench.mjs). */
async function clineCall(plugin, repo, c, i) {
  const p = JSON.parse(c.pre).tool_input;
  let toolName = 'run_commands';
  let input = { commands: [p.command] };
  if (c.kind === 'write') {
    toolName = 'editor';
    input =
      p.content !== undefined
        ? { path: p.file_path, old_text: fs.readFileSync(p.file_path, 'utf8'), new_text: p.content }
        : { path: p.file_path, old_text: p.old_string, new_text: p.new_string };
  }
  const call = { toolCall: { toolCallId: `s2p-${i}`, toolName, input }, input };
  const setup = { session: { sessionId: 's2-plugin' }, workspaceInfo: { rootPath: repo } };
  const v = await plugin.clineBeforeTool(call, setup, { budgetMs: 60_000 });
  if (v !== undefined) throw new Error(`call ${i} refused: ${v.reason}`);
  c.run(env);
  await plugin.clineAfterTool(call, setup, { budgetMs: 60_000 });
}
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
    const c0 = cpuNow();
    if (plugins[k]) await clineCall(plugins[k], repos[k], c, i);
    else {
      if (sides[k])
        sim.hookOnce(
          node,
          sides[k],
          repos[k],
          c.pre,
          envOf[k],
          sim.commandOf(commands[k], c, false),
        );
      c.run(env);
      if (sides[k] && !(kinds[k] === 'noask' && c.kind === 'write'))
        sim.hookOnce(
          node,
          sides[k],
          repos[k],
          c.post,
          envOf[k],
          sim.commandOf(commands[k], c, true),
        );
    }
    ms[k] += Number(process.hrtime.bigint() - t) / 1e6;
    cpu[k] += cpuNow() - c0;
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
    `${k} (${kinds[k]}: ${sides[k]}): +${((ms[k] - ms.none) / 1000).toFixed(1)} s, ${((ms[k] - ms.none) / CALLS).toFixed(1)} ms per tool call; CPU +${((cpu[k] - cpu.none) / 1000).toFixed(1)} s (this process and the processes it waited for)`,
  );
if (servers.length > 0)
  console.log(
    `resident servers: ${servers.filter((x) => x.server).length}, their CPU and their git processes' ${servers.reduce((t, x) => t + x.cpuMs, 0).toFixed(0)} ms`,
  );
for (const x of servers) process.kill(x.pid);
fs.rmSync(tmp, { recursive: true, force: true });
