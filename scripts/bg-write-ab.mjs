#!/usr/bin/env node
// holes7 (docs/reliability/holes7.md): the CPU (user + sys, guard and the git processes it waited
// for, from /usr/bin/time) of one `guard hook gemini` BeforeTool write_file, two builds alternated,
// each on its own repository of 51 files, the "harness" writing the file after each call: in a
// session with a background command open (a write then keeps its result) and in one without.
//
//   node scripts/bg-write-ab.mjs ROUNDS base=DIST new=DIST
//
// DIST is a build's dist folder (copy one aside before rebuilding, under node_modules as for cpu-ab.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const N = Number(process.argv[2] ?? 20);
const builds = Object.fromEntries(
  process.argv.slice(3).map((a) => {
    const [label, dist] = a.split('=');
    return [label, path.resolve(dist, 'cli', 'main.js')];
  }),
);
if (Object.keys(builds).join() !== 'base,new') {
  console.error('usage: node scripts/bg-write-ab.mjs ROUNDS base=DIST new=DIST');
  process.exit(2);
}
const env = { ...process.env };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') || k.startsWith('GUARD_')) delete env[k];
const lines = (n, w = 'line') => Array.from({ length: n }, (_, i) => `${w} ${i + 1}\n`).join('');
const git = (cwd, ...a) => spawnSync('git', a, { cwd, env, encoding: 'utf8' });
function repo(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `holes7-ab-${label}-`));
  git(dir, 'init', '-q');
  git(dir, 'config', 'user.email', 'a@b');
  git(dir, 'config', 'user.name', 'a');
  git(dir, 'config', 'maintenance.auto', 'false');
  git(dir, 'config', 'gc.auto', '0');
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, `m${i}.py`), lines(100, `m${i}`));
  fs.writeFileSync(path.join(dir, 'keep.py'), lines(300));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'init');
  return dir;
}
const payload = (dir, session, event, tool, input) =>
  JSON.stringify({
    session_id: session,
    cwd: dir,
    hook_event_name: event,
    tool_name: tool,
    tool_input: input,
    ...(event === 'AfterTool' ? { tool_response: {} } : {}),
  });
function run(main, dir, input) {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, main, 'hook', 'gemini'], {
    cwd: dir,
    env: { ...env, GEMINI_PROJECT_DIR: dir },
    input,
  });
  const t = r.stderr.toString().trim().split('\n').pop().split(' ').map(Number);
  if (r.stdout.toString().includes('deny'))
    console.error('DENY', r.stdout.toString().slice(0, 200));
  return (t[0] + t[1]) * 1000;
}
const repos = {};
for (const b of Object.keys(builds)) {
  repos[b] = repo(b);
  const bg = { command: 'sleep 600', is_background: true };
  run(builds[b], repos[b], payload(repos[b], 'bg', 'BeforeTool', 'run_shell_command', bg));
  run(builds[b], repos[b], payload(repos[b], 'bg', 'AfterTool', 'run_shell_command', bg));
}
const res = {};
for (let i = 0; i < N; i++)
  for (const session of ['bg', 'nb'])
    for (const b of i % 2 ? ['new', 'base'] : ['base', 'new']) {
      const dir = repos[b];
      // the write proposes the other of two contents, and the harness writes it (as it would)
      const content = lines(300) + (i % 2 ? 'b\n' : 'c\n');
      const w = { file_path: path.join(dir, 'keep.py'), content };
      const ms = run(builds[b], dir, payload(dir, session, 'BeforeTool', 'write_file', w));
      fs.writeFileSync(path.join(dir, 'keep.py'), content);
      (res[`${session} ${b}`] ??= []).push(ms);
    }
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
console.log(`${N} rounds, node ${process.version}, load ${os.loadavg()[0].toFixed(1)} at the end`);
for (const [k, v] of Object.entries(res))
  console.log(`${k.padEnd(10)} CPU median ${med(v).toFixed(0)} ms, mean ${mean(v).toFixed(1)} ms`);
