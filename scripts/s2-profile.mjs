#!/usr/bin/env node
// Where one S2 hook process spends its time, per event kind (docs/performance.md, "S2 per
// event"): the scripted session (scripts/session-sim.mjs) warmed with 40 calls, then ROUNDS
// more calls of each kind, every hook process measured:
//
//   node scripts/s2-profile.mjs NODE [cli=dist/cli/main.js[,B/cli/main.js]] [rounds=20]
//
// Per event (an allowed Write's pre and post events, a shell call's pre and post events):
// wall time; CPU of the hook process itself (process.cpuUsage at exit, through a --require'd
// file); CPU of the git processes it waited for (/proc/self/stat's cutime + cstime at exit:
// 10 ms ticks, so read the means, not single runs); git processes (GUARD_TRACE_GIT) and what
// they were. Beside them, node's own boot (`node -e 0` with the same --require) and node's boot
// plus the bundle's import (`guard hook claude` with the payload `{}`, refused before any git
// or file is read), so that "guard's own" is the process's CPU less those. Each kind's runs are
// interleaved with the two baselines, so all share the machine's load.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanEnv } from './lib.mjs';
import * as sim from './session-sim.mjs';

const [node, cliArg, roundsArg] = process.argv.slice(2);
if (!node) {
  console.error(
    'usage: node scripts/s2-profile.mjs NODE [A/cli/main.js[,B/cli/main.js]] [rounds=20]',
  );
  process.exit(2);
}
// two builds, comma-separated (BEFORE/cli/main.js,dist/cli/main.js): their events interleaved round by round
const clis = (cliArg ?? 'dist/cli/main.js').split(',').map((c) => path.resolve(c));
const ROUNDS = Number(roundsArg) || 20;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-s2prof-'));
const out = path.join(tmp, 'cpu.json');
const trace = path.join(tmp, 'trace');
const probe = path.join(tmp, 'probe.cjs');
fs.writeFileSync(
  probe,
  `process.on('exit', () => {
  const u = process.cpuUsage();
  const f = require('fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ self: (u.user + u.system) / 1000, children: (+f[13] + +f[14]) * 10 }));
});\n`,
);
const env = { ...cleanEnv(), GUARD_TRACE_GIT: trace };

function measured(args, input, cwd, refused = false) {
  fs.rmSync(out, { force: true });
  fs.writeFileSync(trace, '');
  const t = process.hrtime.bigint();
  const r = spawnSync(node, ['--require', probe, ...args], { cwd, env, input, encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0 || (!refused && r.stdout.includes('"deny"')))
    throw new Error(`${args.join(' ')}: ${r.status} ${r.stdout}${r.stderr}`);
  const cpu = JSON.parse(fs.readFileSync(out, 'utf8'));
  const gits = fs.readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  return { wall, ...cpu, gits };
}

const sides = clis.map((cli, n) => {
  const repo = sim.makeSessionRepo(path.join(tmp, `repo${n}`), cleanEnv());
  sim.runSession({ node, cli, repo, env: cleanEnv(), to: 40, hooks: true, session: 'prof' });
  return { cli, repo, rows: {}, i: 40 };
});

const add = (side, k, m) => (side.rows[k] ??= []).push(m);
const load0 = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
for (let r = 0; r < ROUNDS; r++) {
  for (const side of r % 2 ? [...sides].reverse() : sides) {
    const { cli, repo } = side;
    add(side, 'node -e 0', measured(['-e', '0'], '', repo));
    add(
      side,
      'node + the bundle (payload {})',
      measured([cli, 'hook', 'claude'], '{}', repo, true),
    );
    // one write call, then calls up to the next shell call
    for (let done = { write: false, shell: false }; !done.write || !done.shell; side.i++) {
      const c = sim.sessionCall(repo, side.i, 'prof');
      const kind = c.kind === 'shell' ? 'Bash' : 'Write/Edit';
      const pre = measured([cli, 'hook', 'claude'], c.pre, repo);
      c.run(cleanEnv());
      const post = measured([cli, 'hook', 'claude'], c.post, repo);
      if (!done[c.kind]) {
        add(side, `${kind}, pre`, pre);
        add(side, `${kind}, post`, post);
        done[c.kind] = true;
      }
    }
  }
}
const load1 = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`Node ${version}, ${ROUNDS} rounds, load ${load0} -> ${load1}`);
for (const { cli, rows } of sides) {
  console.log(`\n${cli}`);
  const boot = mean(rows['node -e 0'].map((m) => m.self));
  const loaded = mean(rows['node + the bundle (payload {})'].map((m) => m.self));
  console.log(
    '| event | wall ms (median) | CPU, process (mean) | node boot | bundle import | guard own | git CPU (mean) | git processes |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [k, ms] of Object.entries(rows)) {
    const self = mean(ms.map((m) => m.self));
    const hook = !k.startsWith('node');
    console.log(
      `| ${k} | ${median(ms.map((m) => m.wall)).toFixed(0)} | ${self.toFixed(1)} | ${boot.toFixed(1)} | ${hook || k.includes('bundle') ? (loaded - boot).toFixed(1) : ''} | ${hook ? (self - loaded).toFixed(1) : ''} | ${mean(ms.map((m) => m.children)).toFixed(1)} | ${mean(ms.map((m) => m.gits.length)).toFixed(1)} |`,
    );
  }
  for (const [k, ms] of Object.entries(rows)) {
    if (k.startsWith('node')) continue;
    const names = {};
    for (const m of ms)
      for (const g of m.gits) names[g.split(' ')[0]] = (names[g.split(' ')[0]] ?? 0) + 1;
    console.log(
      `${k}: ${Object.entries(names)
        .map(([n, c]) => `${n} ${(c / ms.length).toFixed(1)}`)
        .join(', ')}`,
    );
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
