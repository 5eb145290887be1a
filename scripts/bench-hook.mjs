#!/usr/bin/env node
// guard hook in a 20,000-file repository, as ratios to the shadow-repository
// checkpoint (`git add -A && git commit` into a second git dir) measured in
// the same run (issue 12). Node start included. For scripts/bench.mjs to fold
// in (branch perf owns it); run alone: npm run build && node scripts/bench-hook.mjs [FILES] [ROUNDS]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js');
const FILES = Number(process.argv[2] ?? 20000);
const ROUNDS = Number(process.argv[3] ?? 5);
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b', CI: 'true' };
for (const k of Object.keys(env)) if (k.startsWith('GUARD_')) delete env[k];

const dir = mkdtempSync(path.join(tmpdir(), 'guard-bench-hook-'));
const git = (args, extra = {}) => execFileSync('git', args, { cwd: dir, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
try {
  git(['init', '-q', '-b', 'main']);
  for (let i = 0; i < FILES; i++) {
    const d = path.join(dir, 'src', `d${i % 200}`);
    if (i < 200) mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, `f${i}.py`), Array.from({ length: 20 }, (_, l) => `line ${l} of ${i}\n`).join(''));
  }
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'base']);
  appendFileSync(path.join(dir, '.git', 'info', 'exclude'), '/.shadow/\n');
  const shadow = { GIT_DIR: path.join(dir, '.shadow'), GIT_WORK_TREE: dir };
  git(['init', '-q'], shadow);
  // no auto-gc in the middle of a measurement (20,000 loose objects trigger it)
  git(['config', 'gc.auto', '0'], shadow);
  git(['config', 'gc.auto', '0']);
  // the shadow repository must not take in its own objects
  appendFileSync(path.join(dir, '.shadow', 'info', 'exclude'), '/.shadow/\n');
  git(['add', '-A'], shadow);
  git(['commit', '-q', '-m', 's0'], shadow);
  git(['rev-parse', 'HEAD'], shadow);

  const time = (fn) => {
    const t = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const hook = (payload) => {
    const r = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: dir, env, input: JSON.stringify(payload) });
    if (r.status !== 0) throw new Error(`guard hook failed: ${r.stderr}`);
  };
  const base = { session_id: 'bench', cwd: dir, permission_mode: 'bypassPermissions', hook_event_name: 'PreToolUse', tool_use_id: 't' };
  const churn = path.join(dir, 'src', 'd1', 'f1.py');
  const target = path.join(dir, 'src', 'd5', 'f5.py');
  const rows = { shadow: [], write: [], shell: [] };
  for (let r = 0; r < ROUNDS; r++) {
    appendFileSync(churn, `s${r}\n`);
    rows.shadow.push(time(() => execFileSync('sh', ['-c', 'git add -A && git commit -q -m s'], { cwd: dir, env: { ...env, ...shadow } })));
    appendFileSync(churn, `h${r}\n`);
    rows.shell.push(time(() => hook({ ...base, tool_name: 'Bash', tool_input: { command: 'make' } })));
    rows.write.push(time(() => hook({ ...base, tool_name: 'Edit', tool_input: { file_path: target, old_string: `line ${r + 1} of 5\n`, new_string: `LINE ${r + 1}\n` } })));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const s = median(rows.shadow);
  console.log(`guard hook, ${FILES} files, median of ${ROUNDS}: shadow checkpoint ${s.toFixed(0)} ms`);
  console.log(`  write (Edit):       ${median(rows.write).toFixed(0)} ms  ratio ${(median(rows.write) / s).toFixed(2)}x`);
  console.log(`  pre-shell (Bash):   ${median(rows.shell).toFixed(0)} ms  ratio ${(median(rows.shell) / s).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
