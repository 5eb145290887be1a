#!/usr/bin/env node
// guard bench: generates repositories in a temp folder and measures the built
// CLI against plain git / plain node in the same run, as ratios (median of N
// runs each). Not a test: always exits 0 once it has run; a budget that is
// missed prints OVER.
//
//   node scripts/bench.mjs [--runs N] [--keep] [--scale] [--markdown] [--only P1,P5]   (or: npm run bench)
//
// Every row is guard's figure against a baseline measured in the same run
// (node's own start, git's numstat, a shadow repository's checkpoint, git
// status), with the goal of issue 15 beside it. On a shared, loaded machine
// absolute times move; the ratios are what to read.
//
// Plain Node ESM, no dependencies beyond Node, git and the built CLI.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as lib from './lib.mjs';
import { median, ROOT } from './lib.mjs';

// GUARD_CLI: run another build of the CLI (e.g. a stub while dist/ is not built)
const CLI = process.env.GUARD_CLI
  ? path.resolve(process.env.GUARD_CLI)
  : path.join(ROOT, 'dist', 'cli', 'main.js');
const NODE = process.execPath;

const argv = process.argv.slice(2);
// npm run bench -- --friction REPO [N]: the friction benchmark (scripts/friction.mjs), and nothing else
if (argv.includes('--friction'))
  await (await import('./friction.mjs')).done.then(() => process.exit());
const KEEP = argv.includes('--keep');
const SCALE = argv.includes('--scale');
const MARKDOWN = argv.includes('--markdown');
const runsIdx = argv.indexOf('--runs');
const onlyIdx = argv.indexOf('--only');
// --only P1,P4: just those rows (node's start always; P5 reuses P4's repository)
const ONLY =
  onlyIdx >= 0
    ? new Set(
        String(argv[onlyIdx + 1] ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
    : null;
if (ONLY?.has('P5') || ONLY?.has('scale')) ONLY.add('P4');
const N = Math.max(
  1,
  Number(runsIdx >= 0 ? argv[runsIdx + 1] : (process.env.BENCH_RUNS ?? 7)) || 7,
);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(
    'usage: node scripts/bench.mjs [--runs N] [--keep] [--scale] [--markdown] [--only IDS] [--node PATH]\n  --node PATH one Node binary only (default: this node and every line scripts/node-lines.mjs installed)\n  --runs N    runs per measurement (median; default 7)\n  --keep      keep the generated repositories\n  --scale     also a 200,000-file repository (minutes)\n  --markdown  print the table as Markdown (docs/performance.md)\n  --only IDS  only these rows, comma-separated (P1,P1b,P2,P3,P4,P5,P6,S1,S2,scale; refs: only the 100,000-ref rows of scale)',
  );
  process.exit(0);
}
// Every row on every Node line available (issue 22): this node, and each line
// scripts/node-lines.mjs installed (`node scripts/node-lines.mjs install 24 22`).
// Each line runs the whole bench in a process of its own; --node PATH picks one.
const nodeIdx = argv.indexOf('--node');
if (!argv.includes('--this-node')) {
  const { nodeLines } = await import('./node-lines.mjs');
  const lines =
    nodeIdx >= 0 ? [{ bin: path.resolve(argv[nodeIdx + 1]), version: '' }] : nodeLines();
  const rest = nodeIdx >= 0 ? argv.filter((_, i) => i !== nodeIdx && i !== nodeIdx + 1) : argv;
  if (lines.length > 1 || nodeIdx >= 0) {
    let code = 0;
    console.log(
      `guard bench on ${lines.length} Node line${lines.length === 1 ? '' : 's'}: ${lines.map((l) => l.version || l.bin).join(', ')}${lines.length === 1 ? '' : ' (node scripts/node-lines.mjs install 24 22 adds lines)'}\n`,
    );
    for (const l of lines) {
      const r = spawnSync(l.bin, [fileURLToPath(import.meta.url), ...rest, '--this-node'], {
        stdio: 'inherit',
      });
      code = Math.max(code, r.status ?? 1);
      console.log('');
    }
    process.exit(code);
  }
}
if (!fs.existsSync(CLI)) {
  console.error(
    `bench: the built CLI is missing (${CLI}); run \`npm run build\` first (or \`npm run bench\`).`,
  );
  process.exit(2);
}

// ---------------------------------------------------------------------------
// environment: guard always in auto mode; git never reads the user's global or
// system config; nothing inherited that points git elsewhere.

// BENCH_SESSION_CHAIN=0: guard's hooks write a ref per record, as before the session chains
const ENV = lib.cleanEnv(
  process.env.BENCH_SESSION_CHAIN ? { GUARD_SESSION_CHAIN: process.env.BENCH_SESSION_CHAIN } : {},
);

const TMP = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'guard-bench-')));
const T0 = process.hrtime.bigint();

const sh = (cmd, args, opts = {}) => lib.sh(cmd, args, { env: ENV, ...opts });
const git = (cwd, args, opts = {}) => sh('git', args, { cwd, ...opts });

function timed(cmd, args, opts) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout: 300_000,
    env: ENV,
    ...opts,
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  return { ms, status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

const guardArgs = (...a) => [CLI, ...a];

/**
 * Interleaved measurement: one warm-up of each, then n rounds of (each command
 * once). Returns the median ms of each and the last result of each.
 */
function measure(cmds, n = N) {
  for (const c of cmds) timed(c.cmd, c.args, c.opts);
  const times = cmds.map(() => []);
  const last = [];
  for (let i = 0; i < n; i++) {
    cmds.forEach((c, j) => {
      if (c.before) c.before(i);
      const r = timed(c.cmd, c.args, c.opts);
      times[j].push(r.ms);
      last[j] = r;
    });
  }
  return cmds.map((_, j) => ({ ms: median(times[j]), last: last[j] }));
}

/** Guard's exit code for check: 0 allowed, 1 blocked; anything else is an error worth showing. */
function guardProblem(r) {
  if (r.status === 0 || r.status === 1) return null;
  let msg = (r.stderr || '').trim().split('\n')[0];
  try {
    const doc = JSON.parse(r.stdout);
    if (doc?.error?.message) msg = `${doc.error.code}: ${doc.error.message}`;
  } catch {
    /* not JSON */
  }
  return `guard exited ${r.status}${msg ? ` (${msg})` : ''}`;
}

function summarizeCheck(r) {
  try {
    const doc = JSON.parse(r.stdout);
    const files = Array.isArray(doc.files) ? doc.files.length : '?';
    return `files reported ${files}, blocked ${doc.blocked ?? '?'}${doc.truncated ? `, truncated (${doc.truncatedReason ?? 'no reason'})` : ''}`;
  } catch {
    return 'stdout was not one JSON document';
  }
}

// /usr/bin/time -f %M: peak RSS (KiB) of the process, which on Linux includes
// the largest of its waited-for children (the git processes guard spawns).
const TIME_BIN = '/usr/bin/time';
const HAVE_TIME = (() => {
  if (!fs.existsSync(TIME_BIN)) return false;
  const r = spawnSync(TIME_BIN, ['-f', 'BENCH_MAXRSS_KB=%M', 'true'], { encoding: 'utf8' });
  return r.status === 0 && /BENCH_MAXRSS_KB=\d+/.test(r.stderr ?? '');
})();

function peakRssMb(cmd, args, opts) {
  if (!HAVE_TIME) return null;
  const r = spawnSync(TIME_BIN, ['-f', 'BENCH_MAXRSS_KB=%M', cmd, ...args], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    env: ENV,
    timeout: 300_000,
    ...opts,
  });
  const m = /BENCH_MAXRSS_KB=(\d+)/.exec(r.stderr ?? '');
  return m ? Number(m[1]) / 1024 : null;
}

function traceCount(cwd, args, input) {
  const file = path.join(TMP, `trace-${process.hrtime.bigint()}.log`);
  const r = spawnSync(NODE, args, {
    cwd,
    env: { ...ENV, GUARD_TRACE_GIT: file },
    input,
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (!fs.existsSync(file)) return { count: null, status: r.status };
  const count = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  fs.rmSync(file, { force: true });
  return { count, status: r.status };
}

function objectStoreKiB(gitArgs, cwd) {
  const r = sh('git', [...gitArgs, 'count-objects', '-v'], { cwd });
  const get = (k) => Number((new RegExp(`^${k}: (\\d+)`, 'm').exec(r.stdout) ?? [])[1] ?? 0);
  return get('size') + get('size-pack');
}

function makeRepo(name) {
  return lib.makeRepo(path.join(TMP, name), {
    env: ENV,
    config: { user: { name: 'Guard Bench', email: 'bench@guard.invalid' } },
  });
}

const write = lib.writeFile;

function pyModule(i, lines, salt = '') {
  const out = [`"""Generated module ${i}${salt}."""`, '', 'from __future__ import annotations', ''];
  for (let k = 0; out.length < lines; k++) {
    out.push(`def handler_${i}_${k}(value: int) -> int:`, `    return value * ${k + 1} + ${i}`, '');
  }
  return out.slice(0, lines).join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// The table: every figure a ratio to a baseline measured in the same run.

const table = [];
const notes = [];
const fmtMs = (x) => (x == null ? 'n/a' : `${x.toFixed(0)} ms`);
const fmtMb = (x) => (x == null ? 'n/a' : `${x.toFixed(0)} MB`);
const fmtX = (x) => (x == null || !Number.isFinite(x) ? 'n/a' : `${x.toFixed(2)}x`);

/** One row: id (P1...), what, guard's figure, the baseline's, the ratio, the goal, and whether it is met (null: n/a). */
function row(id, what, guard, baseline, ratio, goal, ok) {
  table.push({
    id,
    what,
    guard,
    baseline,
    ratio,
    goal,
    result: ok === null ? 'n/a' : ok === 'ERR' ? 'ERR' : ok ? 'PASS' : 'OVER',
  });
}

function section(title) {
  const s = (Number(process.hrtime.bigint() - T0) / 1e9).toFixed(1);
  process.stderr.write(`[bench ${s}s] ${title}\n`);
}

function printTable(rows) {
  lib.printTable(
    {
      id: '',
      what: 'measurement',
      guard: 'guard',
      baseline: 'baseline',
      ratio: 'ratio',
      goal: 'goal',
      result: 'result',
    },
    rows,
    ['guard', 'baseline', 'ratio'],
  );
}

/** The same table as Markdown (docs/performance.md), with --markdown. */
function printMarkdown(rows) {
  console.log('| | measurement | guard | baseline | ratio | goal | result |');
  console.log('| --- | --- | ---: | ---: | ---: | --- | --- |');
  for (const r of rows)
    console.log(
      `| ${r.id} | ${r.what} | ${r.guard} | ${r.baseline} | ${r.ratio} | ${r.goal} | ${r.result} |`,
    );
}

// ---------------------------------------------------------------------------
// node's own start: the unit of P1 and P1b

let nodeMs = null;
function benchNode() {
  const dir = makeRepo('node');
  nodeMs = measure([{ cmd: NODE, args: ['-e', '0'], opts: { cwd: dir } }], Math.max(N, 9))[0].ms;
}

// ---------------------------------------------------------------------------
// P1: a commit of one file through the real pre-commit hook (hooks/pre-commit,
// `guard` on PATH), minus the same commit with --no-verify, in units of node's start.

function benchCommit() {
  section('P1: git commit through the hook vs --no-verify');
  const repo = makeRepo('commit');
  for (const f of ['state.py', 'small.py', 'big_module.py'])
    fs.copyFileSync(path.join(ROOT, 'fixtures', f), path.join(repo, f));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base']);
  const hooks = path.join(TMP, 'commit-hooks');
  const bin = path.join(TMP, 'commit-bin');
  fs.mkdirSync(hooks, { recursive: true });
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(hooks, 'pre-commit'),
    `#!/bin/sh\n${fs.readFileSync(path.join(ROOT, 'hooks', 'pre-commit'), 'utf8')}`,
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(bin, 'guard'), `#!/bin/sh\nexec "${NODE}" "${CLI}" "$@"\n`, {
    mode: 0o755,
  });
  git(repo, ['config', 'core.hooksPath', hooks]);
  const env = { ...ENV, PATH: `${bin}${path.delimiter}${ENV.PATH}` };
  let k = 0;
  const stage = () => {
    fs.appendFileSync(path.join(repo, 'small.py'), `# edit ${k++}\n`);
    git(repo, ['add', 'small.py']);
  };
  const [hook, plain] = measure([
    {
      cmd: 'git',
      args: ['commit', '-q', '-m', 'through the hook'],
      opts: { cwd: repo, env },
      before: stage,
    },
    {
      cmd: 'git',
      args: ['commit', '-q', '--no-verify', '-m', 'no hook'],
      opts: { cwd: repo, env },
      before: stage,
    },
  ]);
  if (hook.last.status !== 0) {
    row(
      'P1',
      'commit of 1 file through the hook, minus --no-verify, / node -e 0',
      'ERR',
      '',
      '',
      '<= 2.0x',
      'ERR',
    );
    notes.push(
      `P1: the commit through the hook failed: ${(hook.last.stderr || '').trim().split('\n')[0]}`,
    );
    return;
  }
  const extra = hook.ms - plain.ms;
  row(
    'P1',
    'commit of 1 file through the hook, minus --no-verify, / node -e 0',
    `+${fmtMs(extra)}`,
    fmtMs(nodeMs),
    fmtX(extra / nodeMs),
    '<= 2.0x',
    extra / nodeMs <= 2.0,
  );
  notes.push(`P1: commit with the hook ${fmtMs(hook.ms)}, with --no-verify ${fmtMs(plain.ms)}`);
}

// ---------------------------------------------------------------------------
// P1b: guard check of one staged file vs node -e 0

let trace1 = null;
function benchOneFile() {
  section('P1b: 1 staged file vs node -e 0');
  const repo = makeRepo('one-file');
  for (const f of ['state.py', 'small.py', 'big_module.py'])
    fs.copyFileSync(path.join(ROOT, 'fixtures', f), path.join(repo, f));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base']);
  fs.copyFileSync(
    path.join(ROOT, 'fixtures', 'big_module_modified.py'),
    path.join(repo, 'big_module.py'),
  );
  git(repo, ['add', 'big_module.py']);
  const [node, guard] = measure([
    { cmd: NODE, args: ['-e', '0'], opts: { cwd: repo } },
    { cmd: NODE, args: guardArgs('check', '--json'), opts: { cwd: repo } },
  ]);
  const problem = guardProblem(guard.last);
  notes.push(`P1b: ${problem ?? summarizeCheck(guard.last)}`);
  row(
    'P1b',
    'guard check, 1 staged file / node -e 0',
    fmtMs(guard.ms),
    fmtMs(node.ms),
    fmtX(guard.ms / node.ms),
    '<= 2.0x',
    problem ? 'ERR' : guard.ms / node.ms <= 2.0,
  );
  trace1 = traceCount(repo, guardArgs('check', '--json'));
}

// ---------------------------------------------------------------------------
// P2: 2,000 staged files (1,000 modified, 1,000 new) vs git diff --cached --numstat

function benchManyFiles() {
  section('P2: 2,000 staged files vs git diff --cached --numstat');
  const repo = makeRepo('many-files');
  for (let i = 0; i < 1000; i++)
    write(
      path.join(repo, 'src', `pkg_${String(i % 20).padStart(2, '0')}`, `mod_${i}.py`),
      pyModule(i, 40),
    );
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base: 1,000 modules']);
  for (let i = 0; i < 1000; i++) {
    const f = path.join(repo, 'src', `pkg_${String(i % 20).padStart(2, '0')}`, `mod_${i}.py`);
    const lines = fs.readFileSync(f, 'utf8').split('\n');
    lines[5] = `    return value * ${i + 7} - 1  # tuned`;
    lines[20] = `    return value + ${i}  # tuned`;
    fs.writeFileSync(f, lines.join('\n'));
    write(
      path.join(repo, 'feature', `pkg_${String(i % 20).padStart(2, '0')}`, `new_${i}.py`),
      pyModule(i, 25, ' (new)'),
    );
  }
  git(repo, ['add', '-A']);
  const staged = git(repo, ['diff', '--cached', '--name-only', '-z'])
    .stdout.split('\0')
    .filter(Boolean).length;
  const { gitDiff, guard, n, problem } = checkVsGitDiff(repo);
  notes.push(`P2: ${staged} staged; ${n} runs; ${problem ?? summarizeCheck(guard.last)}`);
  row(
    'P2',
    `guard check, ${staged.toLocaleString('en')} staged files / git diff --cached --numstat`,
    fmtMs(guard.ms),
    fmtMs(gitDiff.ms),
    fmtX(guard.ms / gitDiff.ms),
    '<= 3.0x',
    problem ? 'ERR' : guard.ms / gitDiff.ms <= 3.0,
  );
  const t = traceCount(repo, guardArgs('check', '--json'));
  const c1 = trace1?.count ?? null;
  const c2 = t.count;
  row(
    'P2',
    'git processes: 2,000 files / 1 file',
    c2 == null ? 'n/a' : `${c2}`,
    c1 == null ? 'n/a' : `${c1}`,
    c1 && c2 != null ? fmtX(c2 / c1) : 'n/a',
    'equal (<= 1.0x)',
    c1 == null || c2 == null ? null : c2 <= c1,
  );
}

// ---------------------------------------------------------------------------
// P3: a 15 MB file with 1% of its lines changed

function benchHugeFile() {
  section('P3: 15 MB file, 1% of lines changed');
  const repo = makeRepo('huge-file');
  const lines = [];
  let size = 0;
  for (let i = 0; size < 15 * 1024 * 1024; i++) {
    const l = `ROW_${String(i).padStart(7, '0')} = {"sku": "SKU-${(i * 7919) % 1000003}", "qty": ${i % 997}, "bin": "A${i % 61}"}`;
    lines.push(l);
    size += l.length + 1;
  }
  const file = path.join(repo, 'inventory_table.py');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base: 15 MB table']);
  for (let i = 50; i < lines.length; i += 100)
    lines[i] = lines[i].replace('"qty": ', '"qty": 1 + ');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  git(repo, ['add', '-A']);
  const mb = fs.statSync(file).size / (1024 * 1024);
  const { gitDiff, guard, n, problem } = checkVsGitDiff(repo);
  notes.push(
    `P3: ${mb.toFixed(1)} MB, ${lines.length} lines; ${n} runs; ${problem ?? summarizeCheck(guard.last)}`,
  );
  // goal: guard <= 2 x git + node's start, i.e. (guard - node) / git <= 2
  const r = (guard.ms - nodeMs) / gitDiff.ms;
  row(
    'P3',
    `guard check, ${mb.toFixed(0)} MB file, 1% changed: (guard - node) / git numstat`,
    fmtMs(guard.ms),
    fmtMs(gitDiff.ms),
    fmtX(r),
    '<= 2.0x',
    problem ? 'ERR' : r <= 2.0,
  );
  const guardRss = peakRssMb(NODE, guardArgs('check', '--json'), { cwd: repo });
  const gitRss = peakRssMb('git', ['diff', '--cached', '--numstat'], { cwd: repo });
  row(
    'P3',
    `guard check, ${mb.toFixed(0)} MB file: peak RSS (guard and its git children) / git's`,
    fmtMb(guardRss),
    fmtMb(gitRss),
    guardRss && gitRss ? fmtX(guardRss / gitRss) : 'n/a',
    '<= 150 MB',
    guardRss == null ? null : problem ? 'ERR' : guardRss <= 150,
  );
}

/** `guard check` against `git diff --cached --numstat` in one repo; a slow guard is probed first so the bench never takes minutes. */
function checkVsGitDiff(repo) {
  const probe = timed(NODE, guardArgs('check', '--json'), { cwd: repo });
  const n = probe.ms > 4000 ? 3 : N;
  const [gitDiff, guard] = measure(
    [
      { cmd: 'git', args: ['diff', '--cached', '--numstat'], opts: { cwd: repo } },
      { cmd: NODE, args: guardArgs('check', '--json'), opts: { cwd: repo } },
    ],
    n,
  );
  return { gitDiff, guard, n, problem: guardProblem(guard.last) };
}

// ---------------------------------------------------------------------------
// Checkpoints: P4 (guard write), P4b (a whole-tree checkpoint), P5 (guard hook),
// each against a shadow repository (`git add -A && git commit` into a second git
// dir over the same work tree) and `git status`, in the same run.

function makeWideRepo(name, files) {
  const repo = makeRepo(name);
  const dirs = Math.max(1, Math.round(files / 100));
  for (let i = 0; i < files; i++)
    write(
      path.join(repo, 'lib', `d${String(i % dirs).padStart(4, '0')}`, `f${i}.txt`),
      `file ${i}\nline two of ${i}\nend\n`,
    );
  write(path.join(repo, 'notes', 'bench.txt'), 'bench note\nround 0\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', `base: ${files} files`]);
  // ten modified files, not staged: what an agent's session looks like
  for (let i = 0; i < 10; i++)
    fs.appendFileSync(
      path.join(repo, 'lib', `d${String(i % dirs).padStart(4, '0')}`, `f${i}.txt`),
      `modified ${i}\n`,
    );
  return repo;
}

function makeShadow(repo, name) {
  const shadow = path.join(TMP, `${name}-shadow.git`);
  const args = [
    '-c',
    'user.name=Shadow',
    '-c',
    'user.email=shadow@guard.invalid',
    '-c',
    'commit.gpgsign=false',
    '-c',
    'gc.auto=0',
    `--git-dir=${shadow}`,
    `--work-tree=${repo}`,
  ];
  git(repo, ['init', '-q', '--bare', shadow]);
  git(repo, [...args, 'add', '-A']);
  git(repo, [...args, 'commit', '-q', '-m', 'initial']);
  return args;
}

/** One shadow checkpoint: add -A then commit, timed as one step (two git processes). */
function shadowOnce(repo, shadowGit) {
  const a = timed('git', [...shadowGit, 'add', '-A'], { cwd: repo });
  const c = timed('git', [...shadowGit, 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: repo });
  return a.ms + c.ms;
}

function checkpointOnce(repo, paths = []) {
  const r = spawnSync(NODE, [path.join(ROOT, 'scripts', 'checkpoint-once.mjs'), repo, ...paths], {
    encoding: 'utf8',
    env: ENV,
  });
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`checkpoint-once failed: ${(r.stderr || '').trim().split('\n').slice(-1)[0]}`);
  }
}

/**
 * Interleaved rounds of: a change (`touch(i)`), guard's whole-tree checkpoint
 * (in-process), its known-path one, the shadow checkpoint, git status. Medians.
 */
function checkpointRounds(repo, shadowGit, touch, n = N) {
  const whole = [];
  const known = [];
  const shadow = [];
  const status = [];
  let skipped = 0;
  for (let i = -1; i < n; i++) {
    touch(i, 'guard');
    const w = checkpointOnce(repo);
    skipped = w.skipped;
    touch(i, 'known');
    const k = checkpointOnce(repo, ['notes/bench.txt']);
    touch(i, 'shadow');
    const s = shadowOnce(repo, shadowGit);
    const st = timed('git', ['status', '--porcelain'], { cwd: repo }).ms;
    if (i < 0) continue; // warm-up
    whole.push(w.ms);
    known.push(k.ms);
    shadow.push(s);
    status.push(st);
  }
  return {
    whole: median(whole),
    known: median(known),
    shadow: median(shadow),
    status: median(status),
    skipped,
  };
}

const note = (repo) => (i, who) =>
  fs.writeFileSync(path.join(repo, 'notes', 'bench.txt'), `bench note\n${who} round ${i}\n`);

let wideRepo = null;
let wideShadow = null;

function benchCheckpoint() {
  section('P4/P4b: 20,000-file repo, 10 modified');
  const repo = makeWideRepo('wide', 20_000);
  const shadowGit = makeShadow(repo, 'wide');
  wideRepo = repo;
  wideShadow = shadowGit;

  // P4: guard write of one file, node's start and classification included
  const probe = timed(NODE, guardArgs('write', 'notes/bench.txt', '--auto', '--json'), {
    cwd: repo,
    input: 'bench note\nprobe\n',
  });
  if (probe.status !== 0) {
    row(
      'P4',
      'guard write, 1 file, 20,000-file repo / shadow checkpoint',
      'ERR',
      '',
      '',
      '<= 1.0x',
      'ERR',
    );
    notes.push(`P4: guard write failed: ${guardProblem(probe) ?? probe.status}`);
  } else {
    let round = 0;
    const writes = [];
    const shadows = [];
    for (let i = -1; i < N; i++) {
      const w = timed(NODE, guardArgs('write', 'notes/bench.txt', '--auto', '--json'), {
        cwd: repo,
        input: `bench note\nguard round ${round++}\n`,
      });
      fs.writeFileSync(path.join(repo, 'notes', 'bench.txt'), `bench note\nshadow round ${i}\n`);
      const s = shadowOnce(repo, shadowGit);
      if (i >= 0) {
        writes.push(w.ms);
        shadows.push(s);
      }
    }
    const w = median(writes);
    const s = median(shadows);
    row(
      'P4',
      'guard write, 1 file, 20,000-file repo (node start incl.) / shadow checkpoint',
      fmtMs(w),
      fmtMs(s),
      fmtX(w / s),
      '<= 1.0x',
      w / s <= 1.0,
    );
    const t = traceCount(
      repo,
      guardArgs('write', 'notes/bench.txt', '--auto', '--json'),
      'bench note\ntraced\n',
    );
    notes.push(`P4: guard write runs ${t.count ?? '?'} git processes`);
  }

  const r = checkpointRounds(repo, shadowGit, note(repo));
  row(
    'P4b',
    'whole-tree checkpoint, 20,000 files (in-process) / shadow checkpoint',
    fmtMs(r.whole),
    fmtMs(r.shadow),
    fmtX(r.whole / r.shadow),
    '<= 0.8x',
    r.whole / r.shadow <= 0.8,
  );
  row(
    'P4b',
    'whole-tree checkpoint, 20,000 files (in-process) / git status',
    fmtMs(r.whole),
    fmtMs(r.status),
    fmtX(r.whole / r.status),
    '<= 2.0x',
    r.whole / r.status <= 2.0,
  );
  row(
    'P4b',
    'known-path checkpoint, 20,000 files (in-process) / shadow checkpoint',
    fmtMs(r.known),
    fmtMs(r.shadow),
    fmtX(r.known / r.shadow),
    '-',
    null,
  );
}

/** Checkpoints with many untracked files, and with a large one appearing, on the same 20,000-file repo. */
function benchCheckpointScale() {
  if (!wideRepo) return;
  const repo = wideRepo;
  section('checkpoint: + 2,000 untracked files');
  for (let i = 0; i < 2000; i++)
    write(path.join(repo, 'untracked', `u${i % 20}`, `n${i}.txt`), `untracked ${i}\n`);
  let r = checkpointRounds(repo, wideShadow, note(repo));
  row(
    'scale',
    'whole-tree checkpoint, 20k files + 2,000 untracked / shadow',
    fmtMs(r.whole),
    fmtMs(r.shadow),
    fmtX(r.whole / r.shadow),
    '<= 0.8x',
    r.whole / r.shadow <= 0.8,
  );
  row(
    'scale',
    'whole-tree checkpoint, 20k files + 2,000 untracked / git status',
    fmtMs(r.whole),
    fmtMs(r.status),
    fmtX(r.whole / r.status),
    '<= 2.0x',
    r.whole / r.status <= 2.0,
  );
  fs.rmSync(path.join(repo, 'untracked'), { recursive: true, force: true });

  section('checkpoint: a new 80 MB untracked file each round');
  const big = path.join(repo, 'model.bin');
  const chunk = Buffer.alloc(1 << 20);
  r = checkpointRounds(
    repo,
    wideShadow,
    (i, who) => {
      // a different file each time, as a fresh build output or download would be
      chunk.fill(`${who}${i}`);
      const fd = fs.openSync(big, 'w');
      for (let k = 0; k < 80; k++) fs.writeSync(fd, chunk);
      fs.closeSync(fd);
    },
    Math.min(N, 3),
  );
  row(
    'scale',
    'whole-tree checkpoint, 20k files + a new 80 MB untracked file / shadow',
    fmtMs(r.whole),
    fmtMs(r.shadow),
    fmtX(r.whole / r.shadow),
    '<= 0.8x',
    r.whole / r.shadow <= 0.8,
  );
  notes.push(
    `scale: the 80 MB file is over the untracked cap (50 MB): guard skipped ${r.skipped} file(s) and recorded it; the shadow repository hashed and stored it each round`,
  );
  fs.rmSync(big, { force: true });
  if (SCALE) {
    section('checkpoint: 200,000-file repo (--scale)');
    const huge = makeWideRepo('wide200k', 200_000);
    const hugeShadow = makeShadow(huge, 'wide200k');
    const h = checkpointRounds(huge, hugeShadow, note(huge), Math.min(N, 5));
    row(
      'scale',
      'whole-tree checkpoint, 200,000 files / shadow',
      fmtMs(h.whole),
      fmtMs(h.shadow),
      fmtX(h.whole / h.shadow),
      '<= 0.8x',
      h.whole / h.shadow <= 0.8,
    );
    row(
      'scale',
      'whole-tree checkpoint, 200,000 files / git status',
      fmtMs(h.whole),
      fmtMs(h.status),
      fmtX(h.whole / h.status),
      '<= 2.0x',
      h.whole / h.status <= 2.0,
    );
    row(
      'scale',
      'known-path checkpoint, 200,000 files / shadow',
      fmtMs(h.known),
      fmtMs(h.shadow),
      fmtX(h.known / h.shadow),
      '-',
      null,
    );
  }
}

// ---------------------------------------------------------------------------
// P5: guard hook claude, on a Write and before a Bash call, same 20,000-file repo

function hookBuilt() {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'hook.js'))) return false;
  const r = spawnSync(NODE, guardArgs('hook', '--help'), { encoding: 'utf8', env: ENV });
  return !/unknown (command|argument)/i.test(`${r.stdout}${r.stderr}`);
}

function benchHook() {
  if (!hookBuilt() || !wideRepo) {
    row(
      'P5',
      'guard hook claude, Write / shadow checkpoint',
      'n/a (guard hook not built)',
      '',
      '',
      '<= 1.0x',
      null,
    );
    row(
      'P5',
      'guard hook claude, before Bash / shadow checkpoint',
      'n/a (guard hook not built)',
      '',
      '',
      '<= 1.0x',
      null,
    );
    return;
  }
  section('P5: guard hook claude');
  const repo = wideRepo;
  const payload = (tool, input) =>
    JSON.stringify({
      session_id: 'bench-session',
      transcript_path: path.join(TMP, 'transcript.jsonl'),
      cwd: repo,
      hook_event_name: 'PreToolUse',
      tool_name: tool,
      tool_input: input,
      tool_use_id: `toolu_bench_${Math.random().toString(36).slice(2)}`,
    });
  for (const [tool, what] of [
    ['Write', 'Write'],
    ['Bash', 'before Bash'],
  ]) {
    const hooks = [];
    const shadows = [];
    let last = null;
    for (let i = -1; i < N; i++) {
      fs.writeFileSync(
        path.join(repo, 'notes', 'bench.txt'),
        `bench note\nhook ${tool} round ${i}\n`,
      );
      const input =
        tool === 'Write'
          ? payload('Write', {
              file_path: path.join(repo, 'notes', 'bench.txt'),
              content: `bench note\nwritten ${i}\n`,
            })
          : payload('Bash', { command: 'ls', description: 'list' });
      last = timed(NODE, guardArgs('hook', 'claude'), { cwd: repo, input });
      fs.writeFileSync(
        path.join(repo, 'notes', 'bench.txt'),
        `bench note\nshadow ${tool} round ${i}\n`,
      );
      const s = shadowOnce(repo, wideShadow);
      if (i >= 0) {
        hooks.push(last.ms);
        shadows.push(s);
      }
    }
    const h = median(hooks);
    const s = median(shadows);
    const failed = last && last.status !== 0 && last.status !== 2;
    row(
      'P5',
      `guard hook claude, ${what}, 20,000 files / shadow checkpoint`,
      fmtMs(h),
      fmtMs(s),
      fmtX(h / s),
      '<= 1.0x',
      failed ? 'ERR' : h / s <= 1.0,
    );
    if (failed)
      notes.push(
        `P5 ${what}: guard hook exited ${last.status}: ${(last.stderr || last.stdout).trim().split('\n')[0]}`,
      );
  }
}

/**
 * P6: one tool call of a plugin harness (Cline, opencode, Kilo) judged in
 * the harness's own process (guard-cli/plugin) vs the same call through
 * `guard hook cline` as a process, in a 2,000-file repository: a one-line
 * editor call on a 270-line file (checkpointed, allowed). The in-process
 * figure is the median after the first call, which pays the import (shown
 * in the notes).
 */
async function benchPlugin() {
  section('P6: a plugin tool call in process vs guard hook as a process');
  const repo = makeRepo('plugin');
  for (let i = 0; i < 2000; i++) write(path.join(repo, 'src', `m${i}.py`), pyModule(i, 40));
  write(path.join(repo, 'state.py'), pyModule(9999, 270));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base']);
  Object.assign(process.env, ENV);
  const file = path.join(repo, 'state.py');
  const edit = (i) => {
    const text = fs.readFileSync(file, 'utf8');
    const line = text.split('\n')[4];
    return { path: file, old_text: `${line}\n`, new_text: `${line} # ${i}\n` };
  };
  const applyEdit = (input) =>
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(input.old_text, input.new_text));
  const payload = (input, i) =>
    JSON.stringify({
      hookName: 'tool_call',
      taskId: 'bench-proc',
      workspaceRoots: [repo],
      tool_call: { id: `p${i}`, name: 'editor', input },
    });
  const t0 = process.hrtime.bigint();
  const plugin = await import(pathToFileURL(path.join(ROOT, 'dist', 'plugin', 'index.js')).href);
  const setup = { session: { sessionId: 'bench-plugin' }, workspaceInfo: { rootPath: repo } };
  const call = (input, i) =>
    plugin.clineBeforeTool(
      { toolCall: { toolCallId: `c${i}`, toolName: 'editor', input }, input },
      setup,
      { budgetMs: 60_000 },
    );
  const firstInput = edit(-1);
  const first = await call(firstInput, -1);
  const firstMs = Number(process.hrtime.bigint() - t0) / 1e6;
  applyEdit(firstInput);
  const inproc = [];
  const proc = [];
  let failed = first !== undefined ? 'in process: refused' : null;
  for (let i = 0; i < N; i++) {
    let input = edit(i);
    let t = process.hrtime.bigint();
    const v = await call(input, i);
    inproc.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (v !== undefined) failed = `in process: ${v.reason}`;
    applyEdit(input);
    input = edit(`p${i}`);
    const r = timed(NODE, guardArgs('hook', 'cline'), { cwd: repo, input: payload(input, i) });
    proc.push(r.ms);
    if (r.status !== 0 || !/"cancel":false/.test(r.stdout))
      failed = `process: ${r.stdout.trim() || r.stderr.trim()}`;
    applyEdit(input);
  }
  const a = median(inproc);
  const b = median(proc);
  row(
    'P6',
    'a Cline editor call, 2,000 files: in process (guard-cli/plugin) / guard hook cline',
    fmtMs(a),
    fmtMs(b),
    fmtX(a / b),
    '<= 0.5x',
    failed ? 'ERR' : a / b <= 0.5,
  );
  notes.push(`P6: first in-process call (import of guard-cli/plugin included) ${fmtMs(firstMs)}`);
  if (failed) notes.push(`P6: ${failed.slice(0, 200)}`);
}

/**
 * S2 in process: the same scripted session of 423 tool calls (scripts/session-sim.mjs)
 * through guard-cli/plugin as Cline runs it (beforeTool and afterTool of every
 * call, inside the harness's own process: no node start), against the same
 * session with no plugin. A write becomes Cline's `editor` call (the changed
 * line, or the whole text for a Write), a shell call `run_commands`.
 */
async function benchSessionPlugin() {
  section('S2 in process: the same session through guard-cli/plugin (Cline)');
  const sim = await import('./session-sim.mjs');
  const CALLS = Number(process.env.BENCH_SESSION_CALLS) || 423;
  Object.assign(process.env, ENV);
  const plugin = await import(pathToFileURL(path.join(ROOT, 'dist', 'plugin', 'index.js')).href);
  const clineCall = (repo, c, i) => {
    const p = JSON.parse(c.pre).tool_input;
    let toolName = 'run_commands';
    let input = { commands: [p.command] };
    if (c.kind === 'write') {
      toolName = 'editor';
      input =
        p.content !== undefined
          ? {
              path: p.file_path,
              old_text: fs.readFileSync(p.file_path, 'utf8'),
              new_text: p.content,
            }
          : { path: p.file_path, old_text: p.old_string, new_text: p.new_string };
    }
    return { toolCall: { toolCallId: `s2p-${i}`, toolName, input }, input };
  };
  const run = async (repo, hooks) => {
    const setup = { session: { sessionId: 's2-plugin' }, workspaceInfo: { rootPath: repo } };
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) {
      const c = sim.sessionCall(repo, i, 's2-plugin');
      const call = hooks ? clineCall(repo, c, i) : null;
      if (call) {
        const v = await plugin.clineBeforeTool(call, setup, { budgetMs: 60_000 });
        if (v !== undefined) throw new Error(`call ${i} refused: ${v.reason}`);
      }
      c.run(ENV);
      if (call) await plugin.clineAfterTool(call, setup, { budgetMs: 60_000 });
    }
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const plain = await run(sim.makeSessionRepo(path.join(TMP, 'session-plugin-plain'), ENV), false);
  const hooked = await run(sim.makeSessionRepo(path.join(TMP, 'session-plugin'), ENV), true);
  const extra = (hooked - plain) / 1000;
  row(
    'S2',
    `the same ${CALLS} calls in process (guard-cli/plugin, Cline): extra wall time / 10 s goal`,
    `+${extra.toFixed(1)} s`,
    `${(plain / 1000).toFixed(1)} s`,
    fmtX(extra / 10),
    '<= 10 s (plugins)',
    extra <= 10,
  );
  row(
    'S2',
    `  per call, before and after (${CALLS} of them) / node -e 0`,
    fmtMs((hooked - plain) / CALLS),
    fmtMs(nodeMs),
    fmtX((hooked - plain) / CALLS / nodeMs),
    '-',
    null,
  );
}

// ---------------------------------------------------------------------------
// scale (issue 22, item 6): a month of heavy use, 100,000 refs under
// refs/guard/ made with one fast-import and packed (scripts/scale-refs.mjs),
// against the same repository without them; interleaved runs, the ratio of
// the CPU time (user + system of the command and the git processes it
// waited for: it moves less with the load than the wall time, which is
// given beside it). BENCH_SCALE_REFS=N for another count.

/** CPU (user + sys, children included) and wall ms of one run, from /usr/bin/time. */
function cpuTimed(cmd, args, opts) {
  if (!HAVE_TIME) {
    const r = timed(cmd, args, opts);
    return { ...r, cpu: null };
  }
  const r = timed(TIME_BIN, ['-f', 'BENCH_CPU=%U %S', cmd, ...args], opts);
  const m = /BENCH_CPU=([\d.]+) ([\d.]+)/.exec(r.stderr);
  return { ...r, cpu: m ? (Number(m[1]) + Number(m[2])) * 1000 : null };
}

async function benchRefsScale() {
  const count = Number(process.env.BENCH_SCALE_REFS) || 100_000;
  // as guard writes them now (one chain ref per session); BENCH_SCALE_LAYOUT=refs: a ref per record, as before
  const chain = process.env.BENCH_SCALE_LAYOUT !== 'refs';
  const layout = chain ? 'session chains' : 'a ref each';
  section(
    `scale: ${count.toLocaleString('en')} records under refs/guard/ (${Math.floor(count / 3).toLocaleString('en')} hook calls, ${layout}; one fast-import, packed)`,
  );
  const { makeScaleRepos } = await import('./scale-refs.mjs');
  const r = makeScaleRepos(path.join(TMP, 'refs-scale'), {
    ...{ env: ENV, node: NODE, cli: CLI, count, chain },
  });
  const repos = [r.without, r.with];
  let edit = 0;
  // git's own commands take a few ms, under /usr/bin/time's 10 ms ticks: 100 in a row per run,
  // the figures per call
  const inARow = (cmd) => [
    'sh',
    ['-c', `i=0; while [ $i -lt 100 ]; do ${cmd} >/dev/null; i=$((i + 1)); done`],
    false,
    100,
  ];
  const cases = [
    ['git status', ...inARow('git status --short')],
    ['git log -20', ...inARow("git log -20 --format='%h %s'")],
    ['guard log --limit 20', NODE, guardArgs('log', '--limit', '20')],
    ['guard doctor', NODE, guardArgs('doctor')],
    ['guard rewind (the latest session)', NODE, guardArgs('rewind')],
    ["git commit, one file, through guard's hooks", 'git', ['commit', '-q', '-am', 'edit'], true],
  ];
  for (const [what, cmd, args, commits, per = 1] of cases) {
    const runs = repos.map(() => ({ cpu: [], wall: [] }));
    for (let i = -1; i < N; i++) {
      repos.forEach((repo, j) => {
        if (commits) fs.appendFileSync(path.join(repo, 'src', 'm1.py'), `edit ${edit++}\n`);
        const t = cpuTimed(cmd, args, { cwd: repo, env: r.env });
        if (t.status !== 0 && !(what === 'guard doctor' && t.status === 1))
          notes.push(`scale, ${what}: exit ${t.status} ${t.stderr.slice(-200)}`);
        if (i < 0) return; // a warm-up each
        runs[j].wall.push(t.ms);
        if (t.cpu !== null) runs[j].cpu.push(t.cpu);
      });
    }
    const [w, h] = runs.map((x) => ({
      wall: median(x.wall) / per,
      cpu: x.cpu.length ? median(x.cpu) / per : null,
    }));
    const cpuRatio = w.cpu && h.cpu ? h.cpu / w.cpu : null;
    const ratio = cpuRatio ?? h.wall / w.wall;
    const fig = (x) => `${fmtMs(x.wall)}${x.cpu !== null ? ` (${fmtMs(x.cpu)} CPU)` : ''}`;
    row(
      'scale',
      `${what}: ${count.toLocaleString('en')} records (${layout}) / none (${cpuRatio ? 'CPU' : 'wall'}; wall ${fmtX(h.wall / w.wall)})`,
      fig(h),
      fig(w),
      fmtX(ratio),
      '<= 1.2x',
      ratio <= 1.2,
    );
  }
}

// ---------------------------------------------------------------------------
// S2: a scripted session of 423 tool calls (the 90th percentile of published
// agent sessions; a shell call in five) through the real hook commands, pre
// and post as `guard init --agent claude` installs them, against the same
// session with no hooks. S1: then one more Write in that repository against
// the same call in a fresh clone of its start, interleaved. And the growth of
// .git per 1,000 calls against the bytes the agent wrote.

async function benchSession() {
  section('S1, S2: a scripted session of 423 tool calls through guard hook claude');
  const sim = await import('./session-sim.mjs');
  const CALLS = Number(process.env.BENCH_SESSION_CALLS) || 423;
  const withHooks = sim.makeSessionRepo(path.join(TMP, 'session-hooks'), ENV);
  const without = sim.makeSessionRepo(path.join(TMP, 'session-plain'), ENV);
  const fresh = path.join(TMP, 'session-fresh');
  git(TMP, ['clone', '-q', withHooks, fresh]);
  const before = sim.gitDirBytes(withHooks);
  const kindsBefore = sim.gitDirBreakdown(withHooks);
  const plain = sim.runSession({
    node: NODE,
    cli: CLI,
    repo: without,
    env: ENV,
    to: CALLS,
    hooks: false,
    session: 's2',
  });
  // the commands guard init --agent claude installs, run as Claude Code runs them (sh -c)
  const commands = await sim.claudeCommands(NODE, CLI);
  const hooked = sim.runSession({
    node: NODE,
    cli: CLI,
    repo: withHooks,
    env: ENV,
    to: CALLS,
    hooks: true,
    session: 's2',
    commands,
  });
  const extra = (hooked.ms - plain.ms) / 1000;
  const shells = Math.floor((CALLS + 1) / 5);
  row(
    'S2',
    `session of ${CALLS} tool calls (${shells} shell), pre+post hooks: extra wall time / 30 s goal`,
    `+${extra.toFixed(1)} s`,
    `${(plain.ms / 1000).toFixed(1)} s`,
    fmtX(extra / 30),
    '<= 30 s (Node 24)',
    extra <= 30,
  );
  row(
    'S2',
    `  per hook event (${2 * CALLS} of them, ${2 * CALLS - (CALLS - shells)} starting guard) / node -e 0`,
    fmtMs((hooked.ms - plain.ms) / (2 * CALLS)),
    fmtMs(nodeMs),
    fmtX((hooked.ms - plain.ms) / (2 * CALLS) / nodeMs),
    '-',
    null,
  );
  const s1 = sim.measureS1({
    node: NODE,
    cli: CLI,
    env: ENV,
    long: { repo: withHooks, session: 's2' },
    fresh: { repo: fresh, session: 's1-fresh' },
    after: CALLS,
    rounds: Math.max(N, 9),
  });
  const l = median(s1.long);
  const f = median(s1.fresh);
  row(
    'S1',
    `PreToolUse Write after ${CALLS} calls of the session / the same in a fresh clone after 40 calls`,
    fmtMs(l),
    fmtMs(f),
    fmtX(l / f),
    '<= 1.05x (10,000 calls: npm run soak)',
    l / f <= 1.05,
  );
  const grown = sim.gitDirBytes(withHooks) - before;
  // what the agent changed: each write rewrites one ~1.7 kB file
  const written = (CALLS - shells) * fs.statSync(path.join(withHooks, 'src', 'm0.py')).size;
  const per1000 = (x) => `${(((x / CALLS) * 1000) / 1024).toFixed(0)} kB`;
  row(
    'scale',
    '.git growth per 1,000 tool calls / bytes the agent wrote',
    per1000(grown),
    per1000(written),
    fmtX(grown / written),
    'reported',
    null,
  );
  const c = sim.looseCounts(withHooks);
  notes.push(
    `S1/S2: after ${CALLS} calls ${c.refs} loose refs under refs/guard/ and ${c.objects} loose objects (git gc --auto packs past ~2,000)`,
  );
  // what the growth is made of (the journal and the loose objects are bounded: compacted, packed)
  const kinds = sim.gitDirBreakdown(withHooks);
  const by = Object.keys(kinds)
    .map((k) => [k, kinds[k].bytes - (kindsBefore[k]?.bytes ?? 0)])
    .filter(([, b]) => b >= 1024)
    .sort((a, b) => b[1] - a[1]);
  notes.push(
    `scale: .git growth per 1,000 calls by kind: ${by.map(([k, b]) => `${k} ${per1000(b)}`).join(', ')}`,
  );
  await benchResidentSession(sim, CALLS, plain.ms);
}

/**
 * S2 through the resident hook (GUARD_RESIDENT=1, docs/harnesses/README.md): the same session,
 * each hook process a small client of one server kept for the session (its socket in a folder of
 * the bench's; the first call starts it). The server is ended at the end; its CPU is noted.
 */
async function benchResidentSession(sim, CALLS, plainMs) {
  const repo = sim.makeSessionRepo(path.join(TMP, 'session-resident'), ENV);
  const sockDir = path.join(TMP, 'resident-sock');
  const env = { ...ENV, GUARD_RESIDENT: '1', GUARD_RESIDENT_DIR: sockDir };
  const hooked = sim.runSession({
    node: NODE,
    cli: CLI,
    repo,
    env,
    to: CALLS,
    hooks: true,
    session: 's2',
    commands: await sim.claudeCommands(NODE, CLI),
  });
  const extra = (hooked.ms - plainMs) / 1000;
  row(
    'S2',
    `the same session through the resident hook (GUARD_RESIDENT=1): extra wall time / 30 s goal`,
    `+${extra.toFixed(1)} s`,
    `${(plainMs / 1000).toFixed(1)} s`,
    fmtX(extra / 30),
    '<= 30 s (Node 24)',
    extra <= 30,
  );
  row(
    'S2',
    `  per hook event through the resident hook (${2 * CALLS}) / node -e 0`,
    fmtMs((hooked.ms - plainMs) / (2 * CALLS)),
    fmtMs(nodeMs),
    fmtX((hooked.ms - plainMs) / (2 * CALLS) / nodeMs),
    '-',
    null,
  );
  const servers = sim.residentServers(sockDir);
  notes.push(
    `S2 resident: ${servers.filter((x) => x.server).length} server(s), CPU with their git processes ${servers.reduce((t, x) => t + x.cpuMs, 0)} ms (in the wall time above: the clients wait for it)`,
  );
  for (const x of servers) process.kill(x.pid);
}

// ---------------------------------------------------------------------------

/**
 * The placeholder rule on its corpus (issue 13): truncations caught and real
 * comments wrongly flagged, against the floors the unit test holds
 * (test/unit/elision-corpus.test.ts). Self-contained: reads the corpus, runs
 * the built rule, prints its own small section.
 */
async function benchElision() {
  const dir = path.join(ROOT, 'test', 'corpus', 'elision');
  try {
    const read = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const placeholders = read('placeholders.json').placeholders.map((p) => p.text);
    const comments = read('real-comments.json').comments.map((c) => c.text);
    const { elisionFigures } = await import(
      pathToFileURL(path.join(ROOT, 'dist', 'core', 'elision.js')).href
    );
    const f = elisionFigures(placeholders, comments);
    const pct = (x) => `${(x * 100).toFixed(2)}%`;
    console.log('\nelision placeholders (corpus in test/corpus/elision/)');
    console.log(
      `  truncations caught     ${f.caught}/${f.placeholders} = ${pct(f.recall)}  (floor 98%)  ${f.recall >= 0.98 ? 'ok' : 'FAIL'}`,
    );
    console.log(
      `  real comments flagged  ${f.flagged}/${f.comments} = ${pct(f.falsePositiveRate)}  (ceiling 0.5%)  ${f.falsePositiveRate <= 0.005 ? 'ok' : 'FAIL'}`,
    );
  } catch (e) {
    console.log(`\nelision placeholders: skipped (${e.message})`);
  }
}

const gitVersion = spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? 'git ?';
console.log(
  `guard bench: node ${process.version}, ${gitVersion}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, ${N} runs per measurement (median), peak RSS via ${HAVE_TIME ? TIME_BIN : 'n/a'}`,
);
console.log(`temp folder: ${TMP}\n`);

for (const [id, fn] of [
  ['node', benchNode],
  ['P1', benchCommit],
  ['P1b', benchOneFile],
  ['P2', benchManyFiles],
  ['P3', benchHugeFile],
  ['P4', benchCheckpoint],
  ['P5', benchHook],
  ['S2', benchSession],
  ['scale', benchCheckpointScale],
  ['refs', benchRefsScale],
]) {
  const alias = (id === 'S2' && ONLY?.has('S1')) || (id === 'refs' && ONLY?.has('scale'));
  if (ONLY && id !== 'node' && !ONLY.has(id) && !alias) continue;
  try {
    await fn();
  } catch (e) {
    row(id, `${id}: could not be measured`, 'ERR', '', '', '-', 'ERR');
    notes.push(`${id}: ${e.message}`);
  }
}
if (!ONLY || ONLY.has('P6')) {
  try {
    await benchPlugin();
  } catch (e) {
    row('P6', 'P6: could not be measured', 'ERR', '', '', '-', 'ERR');
    notes.push(`P6: ${e.message}`);
  }
}
if (!ONLY || ONLY.has('S2')) {
  try {
    await benchSessionPlugin();
  } catch (e) {
    row('S2', 'S2 in process: could not be measured', 'ERR', '', '', '-', 'ERR');
    notes.push(`S2 in process: ${e.message}`);
  }
}
if (MARKDOWN) printMarkdown(table);
else printTable(table);

await benchElision();

if (notes.length) {
  console.log('\nnotes:');
  for (const n of notes) console.log(`  - ${n}`);
}
const total = Number(process.hrtime.bigint() - T0) / 1e9;
console.log(`\ntotal ${total.toFixed(1)} s`);
if (KEEP) console.log(`kept: ${TMP}`);
else fs.rmSync(TMP, { recursive: true, force: true });
process.exit(0);
