#!/usr/bin/env node
// guard demo: a throwaway repository, guard installed the way a user would,
// then an "agent" tries to commit a destructive rewrite through the real
// pre-commit hook. Doubles as a smoke test: exits non-zero when an
// expectation fails.
//
//   node scripts/demo.mjs [--keep]      (or: npm run demo -- --keep)
//
// Plain Node ESM, no dependencies beyond Node, git and the built CLI.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// GUARD_CLI: run another build of the CLI (e.g. a stub while dist/ is not built)
const CLI = process.env.GUARD_CLI
  ? path.resolve(process.env.GUARD_CLI)
  : path.join(ROOT, 'dist', 'cli', 'main.js');
const FIXTURES = path.join(ROOT, 'fixtures');
const HUSKY = path.join(ROOT, 'node_modules', 'husky');

const args = process.argv.slice(2);
const KEEP = args.includes('--keep');
if (args.includes('--help') || args.includes('-h')) {
  console.log(
    'usage: node scripts/demo.mjs [--keep]\n  --keep  keep the temporary repository for inspection',
  );
  process.exit(0);
}

for (const [what, p] of [
  ['the built CLI', CLI],
  ['the fixtures', FIXTURES],
]) {
  if (!fs.existsSync(p)) {
    console.error(
      `demo: ${what} not found at ${p}; run \`npm run build\` first (or \`npm run demo\`).`,
    );
    process.exit(2);
  }
}

// ---------------------------------------------------------------------------
// environment: never depend on the user's global or system git config, never
// inherit variables that would point git somewhere else or skip the hooks.

const baseEnv = { ...process.env };
for (const k of [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CEILING_DIRECTORIES',
  'GIT_PREFIX',
  'HUSKY',
  'CI',
  'GUARD_AUTO',
  'GUARD_TRACE_GIT',
  'FORCE_COLOR',
])
  delete baseEnv[k];
Object.assign(baseEnv, {
  GIT_CONFIG_GLOBAL: os.devNull,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  NO_COLOR: '1',
  // the hook runs `guard` through its `#!/usr/bin/env node` line: make sure this node is found
  PATH: [path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter),
});
// the agent: no person at a terminal, CI=true puts guard in auto mode
const agentEnv = { ...baseEnv, CI: 'true' };

// ---------------------------------------------------------------------------
// output helpers

const failures = [];
const facts = {};

function header(title) {
  console.log(`\n== ${title} ${'='.repeat(Math.max(3, 74 - title.length))}`);
}

function note(text) {
  console.log(`   ${text}`);
}

function quote(a) {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `"${a.replace(/(["\\$`])/g, '\\$1')}"`;
}

function indent(text) {
  return text
    .replace(/\s+$/, '')
    .split('\n')
    .map((l) => `   | ${l}`)
    .join('\n');
}

/**
 * Run a command in the demo repo, showing it as `$ cmd args` and its output.
 * `shown` is how the command is displayed (e.g. `guard log` for `node CLI log`).
 */
function run(cmd, argv, { env = baseEnv, shown, quiet = false, input } = {}) {
  const display = shown ?? [cmd, ...argv].map(quote).join(' ');
  if (!quiet) console.log(`\n$ ${display}${env.CI ? '        # as the agent: CI=true' : ''}`);
  const r = spawnSync(cmd, argv, {
    cwd: repo,
    env,
    encoding: 'utf8',
    input,
    timeout: 120_000,
    maxBuffer: 64 << 20,
  });
  if (r.error) {
    console.log(`   (could not run ${cmd}: ${r.error.message})`);
    return { status: 127, stdout: '', stderr: String(r.error.message) };
  }
  const out = `${r.stdout ?? ''}${r.stderr ? (r.stdout ? '\n' : '') + r.stderr : ''}`;
  if (!quiet && out.trim()) console.log(indent(out));
  if (!quiet && (r.status !== 0 || argv[0] === 'commit' || cmd !== 'git'))
    console.log(`   (exit ${r.status ?? `signal ${r.signal}`})`);
  return { status: r.status ?? 128, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

const git = (argv, opts) => run('git', argv, opts);
const guard = (argv, opts = {}) =>
  run(process.execPath, [CLI, ...argv], {
    shown: ['guard', ...argv].map(quote).join(' '),
    ...opts,
  });

function must(ok, what) {
  if (ok) {
    note(`ok: ${what}`);
  } else {
    note(`EXPECTATION FAILED: ${what}`);
    failures.push(what);
  }
  return ok;
}

function countLines(text) {
  if (!text) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function copyFixture(name, dest = name) {
  fs.copyFileSync(path.join(FIXTURES, name), path.join(repo, dest));
}

function rejectedRefs() {
  const r = run('git', ['for-each-ref', '--format=%(refname)', 'refs/guard/rejected'], {
    quiet: true,
  });
  return r.status === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

// ---------------------------------------------------------------------------

const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'guard-demo-')));

function finish() {
  header('Summary');
  const lines = [
    `guard init installed .husky/pre-commit (runs \`guard check\`) via husky; hooksPath=${facts.hooksPath || '(unset)'}`,
    `(a) agent rewrote state.py (270 -> 56 lines, no placeholder): commit ${facts.aStatus === 0 ? 'WENT THROUGH' : `blocked (git exit ${facts.aStatus})`}` +
      (facts.aRef ? `; proposed content kept at ${facts.aRef}` : ''),
    `(a2) agent truncated state.py (kept 198 lines + "# ... rest of the code unchanged ..."): commit ${facts.a2Status === 0 ? 'WENT THROUGH' : `blocked (git exit ${facts.a2Status})`}` +
      (facts.a2Ref ? `; kept at ${facts.a2Ref}` : ''),
    `HEAD:state.py after both attempts: ${facts.headLines ?? '?'} lines (270 means nothing was lost)`,
    `(b) agent changed 10 of 200 lines in big_module.py: commit ${facts.bStatus === 0 ? `allowed (${facts.bCommit})` : `FAILED (git exit ${facts.bStatus})`}`,
    `(c) guard log ${facts.logStatus === 0 ? `listed the audit trail${facts.logEntries != null ? ` (${facts.logEntries} entries)` : ''}` : `failed (exit ${facts.logStatus})`}`,
  ];
  for (const l of lines) note(`- ${l}`);
  const keep = KEEP || failures.length > 0;
  if (keep) {
    note(`\nThe demo repository is kept at: ${repo}`);
    if (!KEEP) note('(kept because an expectation failed; delete it when done)');
    note(`Try: cd ${repo} && git for-each-ref refs/guard && node ${CLI} log`);
  } else {
    fs.rmSync(repo, { recursive: true, force: true });
    note(`\nRemoved the demo repository (${repo}); pass --keep to keep it.`);
  }
  if (failures.length) {
    console.log(`\nDEMO FAILED: ${failures.length} expectation(s) not met:`);
    for (const f of failures) console.log(`  - ${f}`);
    process.exit(1);
  }
  console.log(
    '\nDemo OK: the destructive change was blocked and kept, the small one went through.',
  );
  process.exit(0);
}

try {
  header('1. A project, with guard installed the way a user would');
  note(`temporary repository: ${repo}`);

  git(['init', '-q', '-b', 'main']);
  for (const [k, v] of [
    ['user.name', 'Guard Demo'],
    ['user.email', 'demo@guard.invalid'],
    ['commit.gpgsign', 'false'],
    ['core.autocrlf', 'false'],
  ]) {
    if (run('git', ['config', k, v], { quiet: true }).status !== 0) must(false, `git config ${k}`);
  }
  note("set user.name/user.email and commit.gpgsign=false in the repo's own config");
  note('(your global git config is not read: GIT_CONFIG_GLOBAL=/dev/null, GIT_CONFIG_NOSYSTEM=1)');

  // what `npm install --save-dev guard-cli` would leave behind: node_modules/.bin/guard
  // pointing at the package's bin, and husky next to it.
  const bin = path.join(repo, 'node_modules', '.bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(CLI, path.join(bin, 'guard'));
  if (fs.existsSync(HUSKY)) {
    fs.symlinkSync(HUSKY, path.join(repo, 'node_modules', 'husky'), 'dir');
    if (fs.existsSync(path.join(HUSKY, 'bin.js')))
      fs.symlinkSync(path.join('..', 'husky', 'bin.js'), path.join(bin, 'husky'));
  } else {
    note(`(husky not found at ${HUSKY}; guard init may not be able to install the hook)`);
  }
  note(
    'created node_modules/.bin/guard -> dist/cli/main.js and node_modules/husky (as npm install would)',
  );

  fs.writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify(
      {
        name: 'guard-demo',
        private: true,
        scripts: { prepare: 'husky' },
        devDependencies: { 'guard-cli': '*', husky: '^9' },
      },
      null,
      2,
    ) + '\n',
  );
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
  for (const f of ['state.py', 'small.py', 'big_module.py']) copyFixture(f);
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'Initial import: state, helpers, inventory report']);

  const init = guard(['init']);
  must(init.status === 0, 'guard init exits 0');
  const preCommit = path.join(repo, '.husky', 'pre-commit');
  const hookText = fs.existsSync(preCommit) ? fs.readFileSync(preCommit, 'utf8') : '';
  must(/guard\b.*\bcheck\b/.test(hookText), '.husky/pre-commit exists and runs `guard check`');
  facts.hooksPath = run('git', ['config', 'core.hooksPath'], { quiet: true }).stdout.trim();
  note(`core.hooksPath = ${facts.hooksPath || '(unset)'}`);
  if (hookText) {
    console.log('\n$ cat .husky/pre-commit');
    console.log(indent(hookText));
  }

  // The person installing guard commits its setup. The hook and the config are
  // protected paths, so guard would (rightly) ask about them; the person is
  // the one who decides here, so this one commit skips the hook.
  git(['add', '-A']);
  git(['commit', '-q', '--no-verify', '-m', 'Install guard pre-commit hook']);
  git(['log', '--oneline']);

  // -------------------------------------------------------------------------
  header('2a. The agent replaces state.py with a 56-line rewrite');
  note('state.py has 270 lines; the agent writes a "simplified" 56-line version.');
  let before = new Set(rejectedRefs());
  copyFixture('state_replacement.py', 'state.py');
  const a = git(['commit', '-am', 'Simplify state module'], { env: agentEnv });
  facts.aStatus = a.status;
  must(a.status !== 0, 'the commit is blocked (git commit exits non-zero)');
  let refs = rejectedRefs().filter((r) => !before.has(r));
  git(['for-each-ref', 'refs/guard/rejected']);
  if (must(refs.length > 0, 'the refused content is kept under refs/guard/rejected/')) {
    facts.aRef = refs[refs.length - 1];
    git(['diff', '--stat', `${facts.aRef}^`, facts.aRef]);
  }
  note("undo the agent's edit in the work tree (a copy stays in the rejected ref):");
  git(['checkout', 'HEAD', '--', 'state.py']);

  // -------------------------------------------------------------------------
  header('2b. The agent truncates state.py with an elision placeholder');
  note('Only 72 of 270 lines go (below the 50% ratio), but the last line is a placeholder');
  note('where real code stood: "    # ... rest of the code unchanged ..."');
  before = new Set(rejectedRefs());
  copyFixture('state_truncated.py', 'state.py');
  const a2 = git(['commit', '-am', 'Tidy state module'], { env: agentEnv });
  facts.a2Status = a2.status;
  must(a2.status !== 0, 'the truncating commit is blocked too');
  refs = rejectedRefs().filter((r) => !before.has(r));
  if (must(refs.length > 0, 'and kept under refs/guard/rejected/')) {
    facts.a2Ref = refs[refs.length - 1];
    git(['diff', '--stat', `${facts.a2Ref}^`, facts.a2Ref]);
  }
  git(['checkout', 'HEAD', '--', 'state.py']);
  const headState = run('git', ['cat-file', '-p', 'HEAD:state.py'], { quiet: true });
  facts.headLines = headState.status === 0 ? countLines(headState.stdout) : null;
  must(facts.headLines === 270, `HEAD:state.py still has all 270 lines (has ${facts.headLines})`);

  // -------------------------------------------------------------------------
  header('3. The agent makes a small edit: 10 of 200 lines in big_module.py');
  copyFixture('big_module_modified.py', 'big_module.py');
  git(['diff', '--stat']);
  const b = git(['commit', '-am', 'Accept thousands separators in inventory CSV'], {
    env: agentEnv,
  });
  facts.bStatus = b.status;
  must(b.status === 0, 'the small commit goes through');
  facts.bCommit = run('git', ['log', '-1', '--format=%h %s'], { quiet: true }).stdout.trim();
  git(['log', '--oneline']);

  // -------------------------------------------------------------------------
  header('4. The audit trail');
  const log = guard(['log', '--limit', '20']);
  facts.logStatus = log.status;
  must(log.status === 0, 'guard log exits 0');
  const logJson = run(process.execPath, [CLI, 'log', '--json', '--limit', '50'], { quiet: true });
  try {
    const doc = JSON.parse(logJson.stdout);
    const entries = Array.isArray(doc.entries) ? doc.entries : [];
    facts.logEntries = entries.length;
    const decisions = entries.filter((e) => e.kind === 'decision');
    const text = JSON.stringify(decisions);
    must(/"blocked"/.test(text), 'guard log --json records a blocked decision');
    must(/"allowed"/.test(text), 'guard log --json records an allowed decision');
  } catch (e) {
    must(false, `guard log --json prints one JSON document (${e.message})`);
  }
  note('Everything guard recorded lives under refs/guard/ in the repository itself:');
  git(['for-each-ref', '--format=%(refname)', 'refs/guard']);
} catch (e) {
  failures.push(`demo crashed: ${e && e.stack ? e.stack : e}`);
}

finish();
