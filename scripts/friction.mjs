#!/usr/bin/env node
/**
 * The friction benchmark: what guard's defaults would cost a team. Replays
 * the last N non-merge commits of a repository as `guard check --auto`
 * would judge each one staged on its parent (default config, the bootstrap
 * rules where the parent has no guard.config.json), and prints how many would
 * ask a person, why (protected path, rule ids), every commit that asked
 * for anything but a protected path, so a person can judge which were
 * genuine, and every placeholder alarm with the lines its file lost (one
 * where nothing was removed would be a false alarm).
 *
 *   node scripts/friction.mjs REPO [N] [--json] [--exact]
 *   npm run bench -- --friction REPO [N]
 *
 * REPO is a repository folder or a git bundle (cloned into a temp folder).
 * In process: the same modules `guard check` runs (diff, collectFacts,
 * classify, withAggregateLoss), three git processes per commit, so 300
 * commits take seconds. `--exact` instead runs the built CLI's
 * `guard check --auto --json` per commit in a temp clone (HEAD moved to the
 * parent, the commit's tree read into the index) and reports where the two
 * disagree: the check that the in-process replay is what check does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// GUARD_DIST: replay with another build (e.g. main's dist/, to compare a rule change)
const DIST = process.env.GUARD_DIST
  ? path.resolve(process.env.GUARD_DIST)
  : path.join(ROOT, 'dist');

const argv = process.argv.slice(2).filter((a) => a !== '--friction');
const JSON_OUT = argv.includes('--json');
const EXACT = argv.includes('--exact');
const positional = argv.filter((a) => !a.startsWith('--'));
if (positional.length === 0 || argv.includes('--help')) {
  process.stderr.write(
    'usage: node scripts/friction.mjs REPO [N] [--json] [--exact]\n  REPO: a repository folder or a git bundle; N: how many non-merge commits (default 300)\n',
  );
  process.exit(positional.length === 0 ? 2 : 0);
}
const source = path.resolve(positional[0]);
const N = Number(positional[1] ?? 300);
if (!Number.isInteger(N) || N < 1) {
  process.stderr.write(
    `friction: N must be a positive whole number, not ${JSON.stringify(positional[1])}\n`,
  );
  process.exit(2);
}

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
delete ENV.GUARD_AUTO;
const git = (cwd, args) =>
  execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', maxBuffer: 1 << 28 });

/** A bundle is cloned (bare: nothing is checked out); a folder is read where it is. */
function openSource() {
  let isBundle = false;
  try {
    isBundle = statSync(source).isFile();
  } catch {
    process.stderr.write(`friction: ${source}: no such repository or bundle\n`);
    process.exit(2);
  }
  if (!isBundle && !EXACT) return { repo: source, cleanup: () => {} };
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'guard-friction-'));
  const repo = path.join(tmp, 'repo');
  // --no-checkout: the replay reads objects only; --exact stages into the index
  execFileSync(
    'git',
    ['clone', '--quiet', '--no-checkout', ...(isBundle ? [] : ['--no-local']), source, repo],
    { env: ENV, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return { repo, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

/** The last N non-merge commits of HEAD (first-parent order is not needed: every non-merge commit). */
function commits(repo) {
  const out = git(repo, ['log', '--no-merges', '-z', `-n${N}`, '--format=%H%x00%P%x00%s', 'HEAD']);
  const f = out.split('\0');
  const list = [];
  for (let i = 0; i + 2 < f.length; i += 3) {
    const [sha, parents, subject] = [f[i].replace(/^\n/, ''), f[i + 1], f[i + 2]];
    list.push({ sha, parent: parents.split(' ')[0] || null, subject });
  }
  return list;
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

async function inProcess(repo, list) {
  const { treeDiff } = await import(path.join(DIST, 'git/diff.js'));
  const { collectFacts } = await import(path.join(DIST, 'git/changes.js'));
  const { classify, makePolicy } = await import(path.join(DIST, 'core/classify.js'));
  const { withAggregateLoss } = await import(path.join(DIST, 'core/aggregate.js'));
  const { DEFAULT_CONFIG, CONFIG_FILE } = await import(path.join(DIST, 'core/config.js'));
  const { READ_CAP } = await import(path.join(DIST, 'git/catfile.js'));
  const config = DEFAULT_CONFIG;
  // which parents carry a committed config (the bootstrap rules apply where none does), in one process
  const parents = [...new Set(list.map((c) => c.parent).filter(Boolean))];
  const withConfig = new Set(parents.length ? batchHasConfig(repo, parents, CONFIG_FILE) : []);
  const out = [];
  // a few commits at once: each waits on its git processes
  const WIDTH = 4;
  for (let i = 0; i < list.length; i += WIDTH) {
    const chunk = list.slice(i, i + WIDTH);
    const judged = await Promise.all(
      chunk.map(async (c) => {
        const base = c.parent ?? EMPTY_TREE;
        const entries = await treeDiff(repo, base, c.sha);
        const policy = makePolicy(config, { bootstrap: !withConfig.has(c.parent) });
        const { facts } = await collectFacts(repo, entries, {
          maxBytes: Math.min(config.maxFileBytes, READ_CAP),
          whitespace: { range: [base, c.sha], changeRatio: config.changeRatio },
        });
        const files = withAggregateLoss(
          facts.map((f) => classify(f, policy)),
          config,
        );
        // lines the file lost, beside each file that asks: a placeholder alarm where nothing was removed is a false one
        const deleted = new Map(facts.map((f) => [f.path, f.linesDeleted]));
        return {
          ...c,
          files: files
            .filter((f) => f.needsApproval)
            .map((f) => ({
              path: f.path,
              rules: f.rules,
              reasons: f.reasons,
              linesDeleted: deleted.get(f.path),
            })),
        };
      }),
    );
    out.push(...judged);
  }
  return out;
}

/** The parents (of `parents`) whose tree holds `file`: one cat-file --batch-check. */
function batchHasConfig(repo, parents, file) {
  const r = spawnSync('git', ['cat-file', '--batch-check=%(objecttype)'], {
    cwd: repo,
    env: ENV,
    input: parents.map((p) => `${p}:${file}`).join('\n') + '\n',
    encoding: 'utf8',
  });
  const lines = r.stdout.split('\n');
  return parents.filter((_, i) => lines[i] === 'blob');
}

/** The built CLI, per commit, in the temp clone: HEAD at the parent, the commit's tree staged. */
function exact(repo, list) {
  const bin = path.join(DIST, 'cli/main.js');
  const out = [];
  for (const c of list) {
    if (!c.parent) continue; // a root commit: check would judge against the empty tree; skipped here
    git(repo, ['update-ref', 'HEAD', c.parent]);
    git(repo, ['read-tree', c.sha]);
    const r = spawnSync(process.execPath, [bin, 'check', '--auto', '--json', '--cwd', repo], {
      env: { ...ENV, GUARD_AUTO: '1' },
      encoding: 'utf8',
    });
    let doc;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      doc = { ok: false, error: { message: r.stderr.trim().split('\n')[0] } };
    }
    if (doc.ok === false) {
      out.push({ ...c, error: doc.error?.message ?? 'failed', files: [] });
      continue;
    }
    out.push({
      ...c,
      files: doc.files
        .filter((f) => f.needsApproval)
        .map((f) => ({ path: f.path, rules: f.rules ?? [], reasons: f.reasons })),
    });
  }
  return out;
}

function summarize(judged) {
  const asks = judged.filter((c) => c.files.length > 0 || c.error);
  const onlyProtected = asks.filter(
    (c) =>
      !c.error &&
      c.files.every((f) => f.rules.length > 0 && f.rules.every((r) => r === 'protected')),
  );
  const other = asks.filter((c) => !onlyProtected.includes(c));
  const byRule = {};
  for (const c of asks)
    for (const r of new Set(c.files.flatMap((f) => f.rules))) byRule[r] = (byRule[r] ?? 0) + 1;
  const protectedPaths = {};
  for (const c of onlyProtected)
    for (const f of c.files) {
      const top = f.path.split('/').slice(0, 2).join('/');
      protectedPaths[top] = (protectedPaths[top] ?? 0) + 1;
    }
  const asking = asks.map((c) => ({
    sha: c.sha,
    subject: c.subject,
    rules: [...new Set(c.files.flatMap((f) => f.rules))],
  }));
  // every placeholder alarm (rule `elision`), with the lines its file lost: issue 23 asks for none where no code was removed
  const placeholders = asks.flatMap((c) =>
    c.files
      .filter((f) => f.rules.includes('elision'))
      .map((f) => ({
        sha: c.sha,
        subject: c.subject,
        path: f.path,
        reason: f.reasons.find((r) => r.startsWith('elision')) ?? '',
        linesDeleted: f.linesDeleted ?? null,
      })),
  );
  return {
    commits: judged.length,
    asks: asks.length,
    onlyProtected: onlyProtected.length,
    other,
    byRule,
    protectedPaths,
    asking,
    placeholders,
  };
}

const pct = (a, b) => `${b ? ((100 * a) / b).toFixed(1) : '0.0'}%`;

async function main() {
  const started = Date.now();
  const { repo, cleanup } = openSource();
  try {
    const list = commits(repo);
    const judged = EXACT ? exact(repo, list) : await inProcess(repo, list);
    const s = summarize(judged);
    const seconds = (Date.now() - started) / 1000;
    if (JSON_OUT) {
      process.stdout.write(
        JSON.stringify({ source, mode: EXACT ? 'exact' : 'in-process', seconds, ...s }, null, 2) +
          '\n',
      );
      return;
    }
    const p = (l = '') => process.stdout.write(l + '\n');
    process.stdout.on('error', () => process.exit(0)); // a closed pipe (| head) ends the report
    p(
      `friction: ${path.basename(source)}, last ${s.commits} non-merge commits, default config (${EXACT ? 'guard check --auto per commit' : 'in process'}, ${seconds.toFixed(1)} s)`,
    );
    p(`  would ask a person:        ${s.asks} (${pct(s.asks, s.commits)})`);
    p(
      `  only for a protected path: ${s.onlyProtected} (${pct(s.onlyProtected, s.commits)})${
        Object.keys(s.protectedPaths).length
          ? '  ' +
            Object.entries(s.protectedPaths)
              .map(([k, v]) => `${k}: ${v} files`)
              .join(', ')
          : ''
      }`,
    );
    p(`  for anything else:         ${s.other.length} (${pct(s.other.length, s.commits)})`);
    p(
      `  commits by rule:           ${
        Object.entries(s.byRule)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none'
      }`,
    );
    p(`  placeholder alarms:        ${s.placeholders.length}`);
    for (const e of s.placeholders) {
      const lost =
        e.linesDeleted === null
          ? 'lines lost: not known in --exact'
          : `the file lost ${e.linesDeleted} line${e.linesDeleted === 1 ? '' : 's'}`;
      p(`      ${e.sha.slice(0, 10)} ${e.path}: ${e.reason} (${lost})`);
    }
    if (s.other.length) {
      p('');
      p('The commits that asked for more than a protected path (judge which were genuine):');
      for (const c of s.other) {
        p(`  ${c.sha.slice(0, 10)} ${c.subject.slice(0, 72)}`);
        if (c.error) p(`      error: ${c.error}`);
        for (const f of c.files.slice(0, 6)) p(`      ${f.path}: ${f.reasons.join('; ')}`);
        if (c.files.length > 6) p(`      ... and ${c.files.length - 6} more files`);
      }
    }
  } finally {
    cleanup();
  }
}

/** Settled when the report is printed (scripts/bench.mjs --friction waits on it). */
export const done = main().catch((err) => {
  process.stderr.write(`friction: ${err?.message ?? err}\n`);
  process.exit(3);
});
