// What bench.mjs, soak.mjs and session-sim.mjs share: the environment guard and
// git run in, running a process, a scratch repository, and the table they print.
// The tests' own helpers are test/helpers.ts (TypeScript, with TestRepo).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_CLI = path.join(ROOT, 'dist', 'cli', 'main.js');

/**
 * The environment every child runs in: guard in auto mode, no colour, git
 * reading neither the user's global nor the system config and asking for
 * nothing, and no GIT_* or GUARD_* variable inherited that would point git
 * elsewhere or turn on a test hook. `extra` last.
 */
export function cleanEnv(extra = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('GIT_') || k.startsWith('GUARD_')) delete env[k];
  delete env.FORCE_COLOR;
  return Object.assign(env, {
    CI: 'true',
    NO_COLOR: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  });
}

/**
 * Run a process to its end: { status, signal, stdout, stderr } (text). Throws
 * if it cannot start, and on a non-zero exit unless `allowFail`.
 */
export function sh(
  cmd,
  args,
  { cwd, env = process.env, input, allowFail = false, timeout = 300_000 } = {},
) {
  const r = spawnSync(cmd, args, {
    cwd,
    env,
    input,
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout,
  });
  if (r.error) throw new Error(`${cmd} ${args.slice(0, 4).join(' ')}: ${r.error.message}`);
  if (r.status !== 0 && !allowFail) {
    throw new Error(
      `${cmd} ${args.slice(0, 4).join(' ')} exited ${r.status} in ${cwd ?? process.cwd()}: ${(r.stderr || r.stdout || '').trim().split('\n')[0]}`,
    );
  }
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** git in `cwd`; its stdout. Throws on failure. */
export function git(cwd, args, { env, input } = {}) {
  return sh('git', args, { cwd, env, input }).stdout;
}

/**
 * A scratch repository at `dir`: branch main, no signing, no line-ending
 * conversion, no hooks of its own, and none of git's automatic gc or
 * maintenance (a figure must not include git packing on its own). Written
 * into .git/config as `git config` writes it, without a process each.
 * `config` adds sections: { user: { name: 'Bench' } }. With `files`: written
 * and committed as "base".
 */
export function makeRepo(dir, { env, files, config = {} } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main'], { env });
  const sections = {
    commit: { gpgsign: 'false' },
    core: { autocrlf: 'false' },
    gc: { auto: '0' },
    maintenance: { auto: 'false' },
    ...config,
  };
  const text = Object.entries(sections)
    .map(
      ([s, kv]) =>
        `[${s}]\n${Object.entries(kv)
          .map(([k, v]) => `\t${k} = ${v}\n`)
          .join('')}`,
    )
    .join('');
  fs.appendFileSync(path.join(dir, '.git', 'config'), text);
  if (files) {
    for (const [f, c] of Object.entries(files)) writeFile(path.join(dir, f), c);
    git(dir, ['add', '-A'], { env });
    git(dir, ['commit', '-q', '--no-verify', '--allow-empty', '-m', 'base'], { env });
  }
  return dir;
}

/** Write a file, making its folders. */
export function writeFile(file, content) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** n numbered lines: "line 1\nline 2\n...". */
export function lines(n, prefix = 'line') {
  let s = '';
  for (let i = 1; i <= n; i++) s += `${prefix} ${i}\n`;
  return s;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Print rows as a plain table: `head` names the columns (its keys, in
 * order) and gives each its title; the columns in `right` are right-aligned.
 */
export function printTable(head, rows, right = []) {
  const all = [head, ...rows];
  const keys = Object.keys(head);
  const w = Object.fromEntries(
    keys.map((k) => [k, Math.max(...all.map((r) => String(r[k]).length))]),
  );
  const line = (r) =>
    keys
      .map((k) => (right.includes(k) ? String(r[k]).padStart(w[k]) : String(r[k]).padEnd(w[k])))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  console.log(keys.map((k) => '-'.repeat(w[k])).join('  '));
  for (const r of rows) console.log(line(r));
}

/**
 * Run vitest on `files` and read its JSON report (never its log): { ok,
 * tests: [{ title, fullName, status, duration, meta, file }], failures: [the
 * first line of each] }. A test hands figures over in `task.meta` (the
 * report's `meta`). `tmp`: a folder for the report.
 */
export function vitestJson(files, { env = process.env, testNamePattern, tmp = os.tmpdir() } = {}) {
  const out = path.join(tmp, `vitest-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  const args = [
    path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    ...files,
    '--reporter=json',
    `--outputFile=${out}`,
  ];
  if (testNamePattern) args.push('-t', testNamePattern);
  const r = sh(process.execPath, args, { cwd: ROOT, env, allowFail: true, timeout: 0 });
  let report;
  try {
    report = JSON.parse(fs.readFileSync(out, 'utf8'));
  } catch {
    return {
      ok: false,
      tests: [],
      failures: [
        `vitest wrote no report (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`,
      ],
    };
  } finally {
    fs.rmSync(out, { force: true });
  }
  const tests = report.testResults.flatMap((f) =>
    f.assertionResults.map((t) => ({ ...t, file: path.relative(ROOT, f.name) })),
  );
  const failures = tests
    .filter((t) => t.status === 'failed')
    .map((t) => `${t.title}: ${(t.failureMessages[0] ?? '').split('\n')[0]}`);
  for (const f of report.testResults)
    if (f.status === 'failed' && f.assertionResults.length === 0)
      failures.push(`${path.relative(ROOT, f.name)}: ${(f.message ?? '').split('\n')[0]}`);
  return {
    ok: r.status === 0 && report.numFailedTests === 0 && report.numTotalTests > 0,
    tests,
    failures,
  };
}
