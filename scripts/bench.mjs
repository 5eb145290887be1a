#!/usr/bin/env node
// guard bench: generates repositories in a temp folder and measures the built
// CLI against plain git / plain node in the same run, as ratios (median of N
// runs each). Not a test: always exits 0 once it has run; a budget that is
// missed prints OVER.
//
//   node scripts/bench.mjs [--runs N] [--keep]      (or: npm run bench)
//
// Plain Node ESM, no dependencies beyond Node, git and the built CLI.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// GUARD_CLI: run another build of the CLI (e.g. a stub while dist/ is not built)
const CLI = process.env.GUARD_CLI ? path.resolve(process.env.GUARD_CLI) : path.join(ROOT, 'dist', 'cli', 'main.js');
const CHECKPOINT_MODULE = path.join(ROOT, 'dist', 'git', 'checkpoint.js');
const NODE = process.execPath;

const argv = process.argv.slice(2);
const KEEP = argv.includes('--keep');
const runsIdx = argv.indexOf('--runs');
const N = Math.max(1, Number(runsIdx >= 0 ? argv[runsIdx + 1] : process.env.BENCH_RUNS ?? 7) || 7);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log('usage: node scripts/bench.mjs [--runs N] [--keep]\n  --runs N  runs per measurement (median; default 7)\n  --keep    keep the generated repositories');
  process.exit(0);
}
if (!fs.existsSync(CLI)) {
  console.error(`bench: the built CLI is missing (${CLI}); run \`npm run build\` first (or \`npm run bench\`).`);
  process.exit(2);
}

// ---------------------------------------------------------------------------
// environment: guard always in auto mode; git never reads the user's global or
// system config; nothing inherited that points git elsewhere.

const ENV = { ...process.env };
for (const k of [
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CEILING_DIRECTORIES', 'GIT_PREFIX', 'GUARD_TRACE_GIT', 'GUARD_DEBUG', 'FORCE_COLOR',
]) delete ENV[k];
Object.assign(ENV, {
  CI: 'true',
  NO_COLOR: '1',
  GIT_CONFIG_GLOBAL: os.devNull,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
});

const TMP = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'guard-bench-')));
const T0 = process.hrtime.bigint();

function sh(cmd, args, { cwd, env = ENV, input, allowFail = false } = {}) {
  const r = spawnSync(cmd, args, { cwd, env, input, encoding: 'utf8', maxBuffer: 256 << 20, timeout: 300_000 });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0 && !allowFail) {
    throw new Error(`${cmd} ${args.slice(0, 4).join(' ')} exited ${r.status}: ${(r.stderr || r.stdout || '').trim().split('\n')[0]}`);
  }
  return r;
}
const git = (cwd, args, opts = {}) => sh('git', args, { cwd, ...opts });

function timed(cmd, args, opts) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 300_000, env: ENV, ...opts });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  return { ms, status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
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
  } catch { /* not JSON */ }
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
  const r = spawnSync(TIME_BIN, ['-f', 'BENCH_MAXRSS_KB=%M', cmd, ...args], { encoding: 'utf8', maxBuffer: 256 << 20, env: ENV, timeout: 300_000, ...opts });
  const m = /BENCH_MAXRSS_KB=(\d+)/.exec(r.stderr ?? '');
  return m ? Number(m[1]) / 1024 : null;
}

function traceCount(cwd, args) {
  const file = path.join(TMP, `trace-${process.hrtime.bigint()}.log`);
  const r = spawnSync(NODE, args, { cwd, env: { ...ENV, GUARD_TRACE_GIT: file }, encoding: 'utf8', maxBuffer: 256 << 20 });
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
  const dir = path.join(TMP, name);
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  for (const [k, v] of [
    ['user.name', 'Guard Bench'], ['user.email', 'bench@guard.invalid'], ['commit.gpgsign', 'false'],
    ['core.autocrlf', 'false'], ['gc.auto', '0'], ['maintenance.auto', 'false'],
  ]) git(dir, ['config', k, v]);
  return dir;
}

function write(file, content) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

function pyModule(i, lines, salt = '') {
  const out = [`"""Generated module ${i}${salt}."""`, '', 'from __future__ import annotations', ''];
  for (let k = 0; out.length < lines; k++) {
    out.push(`def handler_${i}_${k}(value: int) -> int:`, `    return value * ${k + 1} + ${i}`, '');
  }
  return out.slice(0, lines).join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// results table

const rows = [];
const notes = [];
const fmtMs = (x) => (x == null ? 'n/a' : `${x.toFixed(1)} ms`);
const fmtMb = (x) => (x == null ? 'n/a' : `${x.toFixed(1)} MB`);
const fmtRatio = (a, b) => (a == null || b == null || b === 0 ? 'n/a' : `${(a / b).toFixed(2)}x`);

function row(name, guard, baseline, ratio, budget, result) {
  rows.push({ name, guard, baseline, ratio, budget, result });
}

function section(title) {
  const s = ((Number(process.hrtime.bigint() - T0) / 1e9)).toFixed(1);
  process.stderr.write(`[bench ${s}s] ${title}\n`);
}

function printTable(rows) {
  const head = { name: 'name', guard: 'guard_ms', baseline: 'baseline_ms', ratio: 'ratio', budget: 'budget', result: 'PASS/OVER' };
  const all = [head, ...rows];
  const keys = Object.keys(head);
  const w = Object.fromEntries(keys.map((k) => [k, Math.max(...all.map((r) => String(r[k]).length))]));
  const line = (r) => keys.map((k) => (k === 'name' || k === 'budget' || k === 'result' ? String(r[k]).padEnd(w[k]) : String(r[k]).padStart(w[k]))).join('  ').trimEnd();
  console.log(line(head));
  console.log(keys.map((k) => '-'.repeat(w[k])).join('  '));
  for (const r of rows) console.log(line(r));
}

// ---------------------------------------------------------------------------
// 1. one staged file: guard's overhead over bare node startup

let nodeMs = null;
let trace1 = null;

function benchOneFile() {
  section('1 staged file vs node -e 0');
  const repo = makeRepo('one-file');
  for (const f of ['state.py', 'small.py', 'big_module.py']) fs.copyFileSync(path.join(ROOT, 'fixtures', f), path.join(repo, f));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base']);
  fs.copyFileSync(path.join(ROOT, 'fixtures', 'big_module_modified.py'), path.join(repo, 'big_module.py'));
  git(repo, ['add', 'big_module.py']);

  const [node, guard] = measure([
    { cmd: NODE, args: ['-e', '0'], opts: { cwd: repo } },
    { cmd: NODE, args: guardArgs('check', '--json'), opts: { cwd: repo } },
  ]);
  nodeMs = node.ms;
  const problem = guardProblem(guard.last);
  if (problem) notes.push(`1 file: ${problem}`);
  else notes.push(`1 file: ${summarizeCheck(guard.last)}`);
  const overhead = guard.ms - node.ms;
  row('check, 1 staged file (overhead over node)', `${fmtMs(guard.ms)} (+${overhead.toFixed(1)})`, fmtMs(node.ms), fmtRatio(guard.ms, node.ms),
    '+<=150 ms', problem ? 'ERR' : overhead <= 150 ? 'PASS' : 'OVER');
  trace1 = traceCount(repo, guardArgs('check', '--json'));
}

// ---------------------------------------------------------------------------
// 2. 2,000 staged files (1,000 modified, 1,000 new) vs git diff --cached --numstat

let trace2000 = null;

function benchManyFiles() {
  section('2,000 staged files vs git diff --cached --numstat');
  const repo = makeRepo('many-files');
  for (let i = 0; i < 1000; i++) write(path.join(repo, 'src', `pkg_${String(i % 20).padStart(2, '0')}`, `mod_${i}.py`), pyModule(i, 40));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base: 1,000 modules']);
  for (let i = 0; i < 1000; i++) {
    const f = path.join(repo, 'src', `pkg_${String(i % 20).padStart(2, '0')}`, `mod_${i}.py`);
    const lines = fs.readFileSync(f, 'utf8').split('\n');
    lines[5] = `    return value * ${i + 7} - 1  # tuned`;
    lines[20] = `    return value + ${i}  # tuned`;
    fs.writeFileSync(f, lines.join('\n'));
    write(path.join(repo, 'feature', `pkg_${String(i % 20).padStart(2, '0')}`, `new_${i}.py`), pyModule(i, 25, ' (new)'));
  }
  git(repo, ['add', '-A']);
  const staged = git(repo, ['diff', '--cached', '--name-only', '-z']).stdout.split('\0').filter(Boolean).length;

  const { gitDiff, guard, n, problem } = checkVsGitDiff(repo);
  notes.push(`2,000 files: ${staged} staged; ${n} runs; ${problem ?? summarizeCheck(guard.last)}`);
  const budget = 4 * gitDiff.ms + (nodeMs ?? 0);
  row(`check, ${staged} staged files (new + modified)`, fmtMs(guard.ms), fmtMs(gitDiff.ms), fmtRatio(guard.ms, gitDiff.ms),
    `<=4x git + node = ${budget.toFixed(0)} ms`, problem ? 'ERR' : guard.ms <= budget ? 'PASS' : 'OVER');
  trace2000 = traceCount(repo, guardArgs('check', '--json'));
}

// ---------------------------------------------------------------------------
// 3. a 15 MB file with 1% of its lines changed

function benchHugeFile() {
  section('15 MB file, 1% of lines changed');
  const repo = makeRepo('huge-file');
  const target = 15 * 1024 * 1024;
  const lines = [];
  let size = 0;
  for (let i = 0; size < target; i++) {
    const l = `ROW_${String(i).padStart(7, '0')} = {"sku": "SKU-${(i * 7919) % 1000003}", "qty": ${i % 997}, "bin": "A${i % 61}"}`;
    lines.push(l);
    size += l.length + 1;
  }
  const file = path.join(repo, 'inventory_table.py');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base: 15 MB table']);
  let changed = 0;
  for (let i = 50; i < lines.length; i += 100) {
    lines[i] = lines[i].replace('"qty": ', '"qty": 1 + ');
    changed++;
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
  git(repo, ['add', '-A']);
  const mb = fs.statSync(file).size / (1024 * 1024);

  const { gitDiff, guard, n, problem } = checkVsGitDiff(repo);
  notes.push(`15 MB: ${mb.toFixed(1)} MB, ${lines.length} lines, ${changed} changed; ${n} runs; ${problem ?? summarizeCheck(guard.last)}`);
  row(`check, ${mb.toFixed(0)} MB file, 1% lines changed: wall`, fmtMs(guard.ms), fmtMs(gitDiff.ms), fmtRatio(guard.ms, gitDiff.ms),
    '< 10 s', problem ? 'ERR' : guard.ms < 10_000 ? 'PASS' : 'OVER');

  const guardRss = peakRssMb(NODE, guardArgs('check', '--json'), { cwd: repo });
  const gitRss = peakRssMb('git', ['diff', '--cached', '--numstat'], { cwd: repo });
  row(`check, ${mb.toFixed(0)} MB file, 1% lines changed: peak RSS`, fmtMb(guardRss), fmtMb(gitRss), fmtRatio(guardRss, gitRss),
    '< 250 MB', guardRss == null ? 'n/a' : problem ? 'ERR' : guardRss < 250 ? 'PASS' : 'OVER');
}

// ---------------------------------------------------------------------------
// 4. git processes spawned (GUARD_TRACE_GIT): must not grow with the file count

function reportTrace() {
  const c1 = trace1?.count ?? null;
  const c2 = trace2000?.count ?? null;
  if (c1 == null || c2 == null) {
    row('git processes spawned (1 file / 2,000 files)', `${c2 ?? 'n/a'}`, `${c1 ?? 'n/a'}`, 'n/a', 'equal', 'n/a');
    notes.push('git process count: GUARD_TRACE_GIT produced no trace file (not implemented yet, or guard failed early)');
    return;
  }
  row('git processes spawned (2,000 files vs 1 file)', `${c2} procs`, `${c1} procs`, fmtRatio(c2, c1), 'equal', c2 <= c1 ? 'PASS' : 'OVER');
}

// ---------------------------------------------------------------------------
// 5. checkpoint: guard's temporary-index checkpoint vs a shadow repository.
// Measured through `guard write` of one small file (it checkpoints first).

/** `guard check` against `git diff --cached --numstat` in one repo; a slow guard is probed first so the bench never takes minutes. */
function checkVsGitDiff(repo) {
  const probe = timed(NODE, guardArgs('check', '--json'), { cwd: repo });
  const n = probe.ms > 4000 ? 3 : N;
  const [gitDiff, guard] = measure([
    { cmd: 'git', args: ['diff', '--cached', '--numstat'], opts: { cwd: repo } },
    { cmd: NODE, args: guardArgs('check', '--json'), opts: { cwd: repo } },
  ], n);
  return { gitDiff, guard, n, problem: guardProblem(guard.last) };
}

function benchCheckpoint() {
  // GUARD_BENCH_CHECKPOINT=1 forces the measurement (e.g. against a GUARD_CLI stub)
  if (!fs.existsSync(CHECKPOINT_MODULE) && process.env.GUARD_BENCH_CHECKPOINT !== '1') {
    console.log('checkpoint: not measured yet');
    return;
  }
  section('checkpoint: 20,000-file repo, 10 modified');
  const repo = makeRepo('checkpoint');
  for (let i = 0; i < 20_000; i++) {
    write(path.join(repo, 'lib', `d${String(i % 200).padStart(3, '0')}`, `f${i}.txt`), `file ${i}\nline two of ${i}\nend\n`);
  }
  write(path.join(repo, 'notes', 'bench.txt'), 'bench note\nround 0\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base: 20,000 files']);
  for (let i = 0; i < 10; i++) {
    const f = path.join(repo, 'lib', `d${String((i * 37) % 200).padStart(3, '0')}`, `f${(i * 37) % 200 + 200 * i}.txt`);
    if (fs.existsSync(f)) fs.appendFileSync(f, `modified ${i}\n`);
  }

  // shadow repository over the same work tree, with its initial commit
  const shadow = path.join(TMP, 'checkpoint-shadow.git');
  const shadowGit = ['-c', 'user.name=Shadow', '-c', 'user.email=shadow@guard.invalid', '-c', 'commit.gpgsign=false', '-c', 'gc.auto=0',
    `--git-dir=${shadow}`, `--work-tree=${repo}`];
  git(repo, ['init', '-q', '--bare', shadow]);
  git(repo, [...shadowGit, 'add', '-A']);
  git(repo, [...shadowGit, 'commit', '-q', '-m', 'initial']);

  const note = path.join(repo, 'notes', 'bench.txt');
  const probe = timed(NODE, guardArgs('write', 'notes/bench.txt', '--auto', '--json'), { cwd: repo, input: 'bench note\nprobe\n' });
  if (probe.status !== 0) {
    const msg = guardProblem(probe) ?? `guard write exited ${probe.status}`;
    console.log(`checkpoint: skipped (guard write failed: ${msg})`);
    return;
  }

  const repoBefore = objectStoreKiB([], repo);
  const shadowBefore = objectStoreKiB([`--git-dir=${shadow}`], repo);
  let round = 0;
  const [status, guard] = measure([
    { cmd: 'git', args: ['status', '--porcelain'], opts: { cwd: repo } },
    {
      cmd: NODE, args: guardArgs('write', 'notes/bench.txt', '--auto', '--json'),
      get opts() { return { cwd: repo, input: `bench note\nguard round ${round++}\n` }; },
    },
  ]);
  const repoAfter = objectStoreKiB([], repo);

  // shadow: add -A && commit, timed as one step (two git processes)
  const shadowTimes = [];
  for (let i = -1; i < N; i++) {
    fs.writeFileSync(note, `bench note\nshadow round ${i}\n`);
    const a = timed('git', [...shadowGit, 'add', '-A'], { cwd: repo });
    const c = timed('git', [...shadowGit, 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: repo });
    if (i >= 0) shadowTimes.push(a.ms + c.ms);
  }
  const shadowMs = median(shadowTimes);
  const shadowAfter = objectStoreKiB([`--git-dir=${shadow}`], repo);
  const checkpoints = N + 1; // warm-up + N rounds (the probe wrote before the "before" count)

  row('checkpoint via guard write (20k files, 10 modified)', fmtMs(guard.ms), fmtMs(status.ms), fmtRatio(guard.ms, status.ms),
    'baseline: git status', 'info');
  row('checkpoint via shadow repo (add -A + commit)', fmtMs(shadowMs), fmtMs(status.ms), fmtRatio(shadowMs, status.ms),
    'baseline: git status', 'info');
  row('checkpoint: guard write vs shadow repo', fmtMs(guard.ms), fmtMs(shadowMs), fmtRatio(guard.ms, shadowMs), '-', 'info');

  // The checkpoint itself (a whole-tree one, timed in-process), against the shadow repository.
  const once = path.join(ROOT, 'scripts', 'checkpoint-once.mjs');
  const full = [];
  for (let i = -1; i < N; i++) {
    fs.writeFileSync(note, `bench note\nfull checkpoint round ${i}\n`);
    const r = spawnSync(NODE, [once, repo], { encoding: 'utf8' });
    const out = JSON.parse(r.stdout || '{}');
    if (i >= 0 && typeof out.ms === 'number') full.push(out.ms);
  }
  const fullMs = median(full);
  row('checkpoint, whole tree (in-process)', fmtMs(fullMs), fmtMs(status.ms), fmtRatio(fullMs, status.ms), 'baseline: git status', 'info');
  row('checkpoint, whole tree vs shadow repo', fmtMs(fullMs), fmtMs(shadowMs), fmtRatio(fullMs, shadowMs), '<= shadow repo',
    fullMs <= shadowMs ? 'PASS' : 'OVER');
  notes.push(`checkpoint: guard write includes node startup (~${fmtMs(nodeMs)}) and classification; the shadow repo does not`);
  notes.push(`checkpoint object store growth over ${checkpoints} checkpoints: guard +${repoAfter - repoBefore} KiB (repo), shadow +${shadowAfter - shadowBefore} KiB (shadow git dir)`);
}

// ---------------------------------------------------------------------------

const gitVersion = spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? 'git ?';
console.log(`guard bench: node ${process.version}, ${gitVersion}, ${os.cpus().length} CPUs, ${N} runs per measurement (median), peak RSS via ${HAVE_TIME ? TIME_BIN : 'n/a'}`);
console.log(`temp folder: ${TMP}\n`);

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
    const { elisionFigures } = await import(pathToFileURL(path.join(ROOT, 'dist', 'core', 'elision.js')).href);
    const f = elisionFigures(placeholders, comments);
    const pct = (x) => `${(x * 100).toFixed(2)}%`;
    console.log('\nelision placeholders (corpus in test/corpus/elision/)');
    console.log(`  truncations caught     ${f.caught}/${f.placeholders} = ${pct(f.recall)}  (floor 98%)  ${f.recall >= 0.98 ? 'ok' : 'FAIL'}`);
    console.log(`  real comments flagged  ${f.flagged}/${f.comments} = ${pct(f.falsePositiveRate)}  (ceiling 0.5%)  ${f.falsePositiveRate <= 0.005 ? 'ok' : 'FAIL'}`);
  } catch (e) {
    console.log(`\nelision placeholders: skipped (${e.message})`);
  }
}

for (const [name, fn] of [['1 file', benchOneFile], ['2,000 files', benchManyFiles], ['15 MB file', benchHugeFile]]) {
  try {
    fn();
  } catch (e) {
    row(name, 'n/a', 'n/a', 'n/a', '-', 'ERR');
    notes.push(`${name}: ${e.message}`);
  }
}
reportTrace();

printTable(rows);
console.log('');
const before = rows.length;
try {
  benchCheckpoint();
} catch (e) {
  console.log(`checkpoint: skipped (${e.message})`);
}
if (rows.length > before) printTable(rows.slice(before));

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
