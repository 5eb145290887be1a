import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, lines, ROOT } from '../helpers.js';

/**
 * guard installed the way a user installs it: `npm pack`, then the tarball
 * installed into fresh projects with npm, pnpm (a workspace root), yarn berry
 * (Plug'n'Play) and globally, the pre-commit framework (`try-repo` against a
 * clone of this repository), and the Action's run steps under the variables a
 * runner sets. In each: guard init, one destructive commit through the real
 * hook (blocked, kept under refs/guard/rejected/), one small one (passes),
 * guard doctor (active).
 *
 * pnpm and yarn come from npm packages installed by this test into a cache
 * folder, never from the machine. Downloads (npm's cache, pnpm's store,
 * yarn's cache, the tools) are kept in GUARD_E2E_CACHE (default: the temp
 * folder's guard-e2e-cache) between runs.
 */
const CACHE = process.env.GUARD_E2E_CACHE ?? path.join(tmpdir(), 'guard-e2e-cache');
const TOOLS = path.join(CACHE, 'tools');
const TOOL_BIN = path.join(TOOLS, 'node_modules', '.bin');
/** Pinned so a run is repeatable; pnpm 11+ needs a newer node than guard's 20. */
const PNPM = 'pnpm@10.34.9';
const YARN = '@yarnpkg/cli-dist@4.18.1';

let work: string;
let tarball: string;

interface Result {
  code: number;
  /** stdout and stderr, for messages */
  out: string;
  stdout: string;
}

/** Everything a child gets: no user git config, downloads into the cache, no telemetry. */
function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cleanEnv({
    npm_config_cache: path.join(CACHE, 'npm'),
    npm_config_store_dir: path.join(CACHE, 'pnpm-store'),
    // no loglevel from outside (.ci/run sets one): it would override this
    // repository's .npmrc, which pre-commit's `npm pack` needs
    npm_config_loglevel: undefined,
    NPM_CONFIG_LOGLEVEL: undefined,
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
    YARN_GLOBAL_FOLDER: path.join(CACHE, 'yarn'),
    YARN_ENABLE_TELEMETRY: '0',
    YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
    YARN_ENABLE_GLOBAL_CACHE: 'true',
    COREPACK_ENABLE_STRICT: '0',
    PRE_COMMIT_HOME: path.join(CACHE, 'pre-commit'),
    // the tools (pnpm, yarn) on PATH, as a user who installed them has them
    PATH: `${TOOL_BIN}${path.delimiter}${process.env.PATH}`,
    // the agent: no person to ask
    CI: 'true',
    ...extra,
  });
}

function sh(
  cwd: string,
  cmd: string,
  extra: Record<string, string | undefined> = {},
  timeout = 180_000,
): Result {
  const r = spawnSync('bash', ['-c', cmd], { cwd, env: env(extra), timeout });
  const stdout = r.stdout?.toString() ?? '';
  return { code: r.status ?? 128, out: `${stdout}${r.stderr?.toString() ?? ''}`, stdout };
}

function must(cwd: string, cmd: string, extra: Record<string, string | undefined> = {}): string {
  const r = sh(cwd, cmd, extra);
  if (r.code !== 0) throw new Error(`\`${cmd}\` in ${cwd} failed (${r.code}):\n${r.out}`);
  return r.out;
}

function project(name: string, files: Record<string, string>): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), c);
  }
  must(
    dir,
    'git init -q -b main && git config commit.gpgsign false && git add -A && git commit -q -m "the project"',
  );
  return dir;
}

const rejected = (dir: string) =>
  must(dir, 'git for-each-ref --format="%(refname)" refs/guard/rejected/')
    .split('\n')
    .filter(Boolean);

/**
 * Through the real hook, as an agent (CI=true): deleting a 300-line module
 * is blocked and kept as a rejected ref; a one-line edit commits. `run` is how
 * this project runs guard (`npx guard`, `pnpm exec guard`, `yarn guard`, `guard`).
 */
function commitsThroughTheHook(dir: string, run: string, big = 'src/state.py'): void {
  const head = must(dir, 'git rev-parse HEAD').trim();
  const before = rejected(dir);
  must(dir, `git rm -q ${big}`);
  const blocked = sh(dir, 'git commit -q -m "rewrite the state module"');
  expect(blocked.code, blocked.out).not.toBe(0);
  expect(blocked.out).toContain('blocked 1 change that needs a person');
  expect(must(dir, 'git rev-parse HEAD').trim()).toBe(head);
  // the refusal's own ref: a rejected ref kept from before (try-repo's) is not deleted, as that is
  // what guard's integrity journal calls a ref removed outside guard (doctor: an error)
  const refs = rejected(dir).filter((r) => !before.includes(r));
  expect(refs).toHaveLength(1);
  // The refused change is kept whole: the ref's tree lacks the file, its parent has it.
  expect(must(dir, `git diff --name-status ${refs[0]}^ ${refs[0]}`).trim()).toBe(`D\t${big}`);

  must(dir, `git reset -q HEAD -- ${big} && git checkout -- ${big}`);
  must(dir, `echo "# one more line" >> ${big} && git add ${big}`);
  const small = sh(dir, 'git commit -q -m "a small edit"');
  expect(small.code, small.out).toBe(0);
  expect(must(dir, 'git rev-parse HEAD~1').trim()).toBe(head);

  const version = sh(dir, `${run} --version`);
  expect(version.stdout.trim(), version.out).toBe(
    JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version,
  );

  const doctor = sh(dir, `${run} doctor --json`, { CI: undefined });
  expect(doctor.code, doctor.out).toBe(0);
  expect(JSON.parse(doctor.stdout).active).toBe(true);
}

/**
 * The README's install table: the lines a user copies are the lines this test
 * runs, with the packed tarball where the registry's guard-cli would be.
 */
function readme(route: string): { install: string; init: string } {
  const row = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`| ${route}`));
  const cells = row?.split(' | ') ?? [];
  const code = (cell: string | undefined) => /`([^`]+)`/.exec(cell ?? '')?.[1];
  const install = code(cells[1]);
  const init = code(cells[2]);
  if (!install || !init || !install.includes('guard-cli'))
    throw new Error(`README.md has no install row for ${route}: ${row}`);
  return { install, init };
}
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const PY = { 'src/state.py': lines(300, 'state = 1  #'), 'README.md': '# a project\n' };

beforeAll(() => {
  mkdirSync(CACHE, { recursive: true });
  work = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-install-')));
  if (!existsSync(path.join(TOOL_BIN, 'pnpm')) || !existsSync(path.join(TOOL_BIN, 'yarn'))) {
    must(CACHE, `npm install --prefix "${TOOLS}" --no-save ${PNPM} ${YARN}`);
  }
  // The package as it would be published. Its prepack builds dist/; here dist/
  // is already built (npm test builds first) and other test files are running
  // it, so the scripts are skipped rather than rewriting dist/ under them.
  const packed = must(ROOT, `npm pack --ignore-scripts --pack-destination "${work}"`)
    .trim()
    .split('\n')
    .pop()!;
  tarball = path.join(work, packed);
  expect(existsSync(tarball)).toBe(true);
}, 240_000);

afterAll(() => {
  if (work && !process.env.GUARD_E2E_KEEP) rmSync(work, { recursive: true, force: true });
});

describe('guard-cli installed from its tarball', () => {
  it('holds what the command needs: bin, hooks, the tree-sitter wasm as a dependency', () => {
    const files = must(work, `tar -tzf "${tarball}"`);
    for (const f of [
      'package/dist/cli/main.js',
      'package/hooks/pre-commit',
      'package/hooks/pre-commit-global',
      'package/hooks/pre-commit-yarn-pnp',
      'package/package.json',
    ]) {
      expect(files).toContain(f);
    }
    expect(files).not.toMatch(/package\/(src|test)\//);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('guard-cli');
    expect(pkg.bin).toEqual({ guard: 'dist/cli/main.js' });
    expect(pkg.dependencies['@vscode/tree-sitter-wasm']).toBeTruthy();
  });

  it('npm: npm install --save-dev, npx guard init, the hook runs guard directly', () => {
    const dir = project('npm', {
      ...PY,
      'package.json': '{ "name": "app", "private": true }\n',
      '.gitignore': 'node_modules/\n',
    });
    const { install, init: initLine } = readme('npm');
    must(dir, install.replace('guard-cli', q(tarball)));
    const init = must(dir, initLine);
    expect(init).toContain('runs guard check, for npm');
    expect(readFileSync(path.join(dir, '.husky/pre-commit'), 'utf8')).not.toMatch(/\bnpx\b/);
    must(
      dir,
      'git add .husky guard.config.json package.json package-lock.json && git commit -q -m "Gate commits with guard"',
    );
    commitsThroughTheHook(dir, 'npx guard');
    // extend loads the tree-sitter grammar from the installed dependency
    expect(
      existsSync(
        path.join(dir, 'node_modules/@vscode/tree-sitter-wasm/wasm/tree-sitter-python.wasm'),
      ),
    ).toBe(true);
  }, 180_000); // a real install: slow on a loaded machine or a cold cache

  it('pnpm, at a workspace root: pnpm add --save-dev --workspace-root', () => {
    const dir = project('pnpm', {
      ...PY,
      'package.json': '{ "name": "monorepo", "private": true }\n',
      'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n',
      'packages/a/package.json':
        '{ "name": "a", "version": "1.0.0", "dependencies": { "b": "workspace:*" } }\n',
      'packages/b/package.json': '{ "name": "b", "version": "1.0.0" }\n',
      '.gitignore': 'node_modules/\n',
    });
    const { install, init: initLine } = readme('pnpm');
    // at a workspace root, with --workspace-root as the README says
    must(dir, install.replace('guard-cli', `--workspace-root ${q(tarball)}`));
    const init = must(dir, initLine);
    expect(init).toContain('runs guard check, for pnpm (pnpm-lock.yaml)');
    expect(readFileSync(path.join(dir, '.husky/pre-commit'), 'utf8')).toContain(
      'pnpm add --save-dev --workspace-root guard-cli',
    );
    must(dir, 'git add -A && git commit -q -m "Gate commits with guard"');
    commitsThroughTheHook(dir, 'pnpm exec guard');
  }, 180_000); // a real install: slow on a loaded machine or a cold cache

  it("yarn berry with Plug'n'Play (its default): the hook runs yarn guard check", () => {
    const dir = project('yarn', {
      ...PY,
      'package.json': '{ "name": "app", "private": true }\n',
      '.gitignore': '.yarn/\n.pnp.*\n',
    });
    const { install, init: initLine } = readme('yarn');
    must(dir, install.replace('guard-cli', q(`guard-cli@file:${tarball}`)));
    expect(existsSync(path.join(dir, '.pnp.cjs'))).toBe(true);
    expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
    const init = must(dir, initLine);
    expect(init).toContain("runs yarn guard check, for yarn Plug'n'Play");
    must(dir, 'git add -A && git commit -q -m "Gate commits with guard"');
    commitsThroughTheHook(dir, 'yarn guard');
  }, 180_000); // a real install: slow on a loaded machine or a cold cache

  it('yarn berry with the node-modules linker: the hook runs guard directly', () => {
    const dir = project('yarn-nm', {
      ...PY,
      'package.json': '{ "name": "app", "private": true }\n',
      '.yarnrc.yml': 'nodeLinker: node-modules\n',
      '.gitignore': '.yarn/\nnode_modules/\n',
    });
    const { install, init: initLine } = readme('yarn');
    must(dir, install.replace('guard-cli', q(`guard-cli@file:${tarball}`)));
    const init = must(dir, initLine);
    expect(init).toContain('runs guard check, for yarn (yarn.lock)');
    must(dir, 'git add -A && git commit -q -m "Gate commits with guard"');
    commitsThroughTheHook(dir, 'yarn guard');
  }, 180_000); // a real install: slow on a loaded machine or a cold cache

  it('global: npm install --global, guard init --global in a Python-only repository', () => {
    const prefix = path.join(work, 'global-prefix');
    const { install, init: initLine } = readme('global');
    must(work, install.replace('guard-cli', `--prefix ${q(prefix)} ${q(tarball)}`));
    const PATH = `${path.join(prefix, 'bin')}${path.delimiter}${env().PATH}`;
    const dir = project('python', { ...PY, 'pyproject.toml': '[project]\nname = "app"\n' });
    const init = must(dir, initLine, { PATH });
    expect(init).toContain(
      'wrote .git/hooks/pre-commit, a plain git hook that runs the guard on PATH',
    );
    // nothing JavaScript left in the repository
    for (const f of ['package.json', 'package-lock.json', 'node_modules', '.husky'])
      expect(existsSync(path.join(dir, f))).toBe(false);
    must(dir, 'git add guard.config.json && git commit -q -m "Gate commits with guard"', { PATH });
    const saved = process.env.PATH;
    process.env.PATH = PATH; // commitsThroughTheHook's children see the global bin
    try {
      commitsThroughTheHook(dir, 'guard');
    } finally {
      process.env.PATH = saved;
    }
    // without guard on PATH the hook fails closed
    must(dir, 'echo "# again" >> README.md && git add README.md');
    const off = sh(dir, 'git commit -q -m x', { PATH: `/usr/bin${path.delimiter}/bin` });
    expect(off.code).not.toBe(0);
    expect(off.out).toContain('npm install --global guard-cli');
  }, 180_000); // a real install: slow on a loaded machine or a cold cache

  const preCommit = spawnSync('pre-commit', ['--version']).status === 0;
  it.skipIf(!preCommit && process.env.CI !== 'true')(
    'pre-commit framework: try-repo against a clone of this repository, then installed from it',
    () => {
      const clone = path.join(work, 'guard-clone');
      must(work, `git clone -q "${ROOT}" "${clone}"`);
      const dir = project('pre-commit', {
        ...PY,
        'setup.py': 'from setuptools import setup\nsetup()\n',
      });
      must(dir, 'git rm -q src/state.py');
      const tried = sh(dir, `pre-commit try-repo "${clone}" guard`, {}, 300_000);
      expect(tried.code, tried.out).toBe(1);
      expect(tried.out).toContain('blocked 1 change that needs a person');
      expect(rejected(dir)).toHaveLength(1);
      must(dir, 'git reset -q HEAD -- src/state.py && git checkout -- src/state.py');

      // As a user wires it: .pre-commit-config.yaml naming this repository, pre-commit install.
      const rev = must(clone, 'git rev-parse HEAD').trim();
      writeFileSync(
        path.join(dir, '.pre-commit-config.yaml'),
        `repos:\n  - repo: ${clone}\n    rev: ${rev}\n    hooks:\n      - id: guard\n`,
      );
      must(dir, 'pre-commit install');
      must(
        dir,
        'git add .pre-commit-config.yaml && git commit -q -m "Gate commits with guard (pre-commit)"',
      );
      // doctor from outside: guard is not on this project's PATH, pre-commit holds it
      commitsThroughTheHook(dir, `node "${path.join(ROOT, 'dist/cli/main.js')}"`);

      // The commit-msg stage (guard-trailer) under the real framework: what guard check leaves in
      // the git dir reaches the commit's message. Here a Guard-Agent: trailer, from an agent
      // session's shell call that wrote the file (guard hook claude: before, the write, after).
      writeFileSync(
        path.join(dir, '.pre-commit-config.yaml'),
        `repos:\n  - repo: ${clone}\n    rev: ${rev}\n    hooks:\n      - id: guard\n      - id: guard-trailer\n`,
      );
      must(dir, 'pre-commit install --hook-type pre-commit --hook-type commit-msg');
      must(dir, 'git add .pre-commit-config.yaml && git commit -q -m "and its trailers"');
      const guard = `node "${path.join(ROOT, 'dist/cli/main.js')}"`;
      const payload = (event: string) =>
        JSON.stringify({
          session_id: 'sess-pc',
          cwd: dir,
          hook_event_name: event,
          tool_name: 'Bash',
          tool_input: { command: 'echo hi > notes.md' },
          tool_use_id: 'tu-pc',
          ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
        });
      writeFileSync(path.join(work, 'pre.json'), payload('PreToolUse'));
      writeFileSync(path.join(work, 'post.json'), payload('PostToolUse'));
      must(dir, `${guard} hook claude < "${path.join(work, 'pre.json')}"`);
      writeFileSync(path.join(dir, 'notes.md'), 'hi\n');
      must(dir, `${guard} hook claude < "${path.join(work, 'post.json')}"`);
      const committed = sh(dir, 'git add notes.md && git commit -q -m "notes"');
      expect(committed.code, committed.out).toBe(0);
      expect(must(dir, 'git log -1 --format=%B')).toContain('Guard-Agent: claude sess-pc');
    },
    400_000,
  );
});

/* ------------------------------------------------------------- the Action */

type Step = {
  name?: string;
  id?: string;
  if?: string;
  shell?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
};
type Ctx = {
  inputs: Record<string, string>;
  steps: Record<string, { outputs: Record<string, string> }>;
  github: Record<string, unknown>;
};

/** action.yml as data (python3's yaml: the pre-commit package brings it). */
function readAction(): { inputs: Record<string, { default?: string }>; runs: { steps: Step[] } } {
  const py = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const r = spawnSync(py, [
    '-c',
    'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))',
    path.join(ROOT, 'action.yml'),
  ]);
  if (r.status !== 0) throw new Error(`cannot read action.yml: ${r.stderr}`);
  return JSON.parse(r.stdout.toString());
}

/** The few expressions action.yml uses: `${{ a.b.c }}` lookups and `X != ''`. */
function lookup(expr: string, ctx: Ctx): string {
  let v: unknown = ctx;
  for (const k of expr.trim().split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v === undefined || v === null ? '' : String(v);
}
const expand = (s: string, ctx: Ctx) =>
  s.replace(/\$\{\{([^}]*)\}\}/g, (_, e: string) => lookup(e, ctx));
function condition(s: string | undefined, ctx: Ctx): boolean {
  if (s === undefined) return true;
  const m = /^\s*([\w.-]+)\s*(!=|==)\s*''\s*$/.exec(s.replace(/^\$\{\{|\}\}$/g, ''));
  if (!m) throw new Error(`an if: this runner does not evaluate: ${s}`);
  return (lookup(m[1]!, ctx) !== '') === (m[2] === '!=');
}

/** Run the action's `run:` steps as the runner does: bash -e -o pipefail on a script file, GITHUB_* set, outputs read back. */
function runAction(
  workspace: string,
  withInputs: Record<string, string>,
  event: Record<string, unknown>,
): { steps: { name: string; code: number; out: string }[]; summary: string } {
  const action = readAction();
  const temp = path.join(work, 'runner-temp');
  mkdirSync(temp, { recursive: true });
  const eventPath = path.join(temp, 'event.json');
  writeFileSync(eventPath, JSON.stringify(event));
  const summary = path.join(temp, 'step-summary.md');
  writeFileSync(summary, '');
  const ctx: Ctx = { inputs: {}, steps: {}, github: { event, workspace } };
  for (const [k, spec] of Object.entries(action.inputs))
    ctx.inputs[k] = withInputs[k] ?? expand(spec.default ?? '', ctx);
  const results: { name: string; code: number; out: string }[] = [];
  for (const [i, step] of action.runs.steps.entries()) {
    if (step.uses || !step.run) continue; // actions/setup-node, upload-sarif: not this test's business
    if (!condition(step.if, ctx)) continue;
    const output = path.join(temp, `output-${i}`);
    writeFileSync(output, '');
    const script = path.join(temp, `step-${i}.sh`);
    writeFileSync(script, step.run);
    const stepEnv: Record<string, string> = {
      GITHUB_ACTIONS: 'true',
      CI: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_ACTION_PATH: ROOT,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_REF: 'refs/pull/1/merge',
      GITHUB_BASE_REF: 'main',
      GITHUB_HEAD_REF: 'agent',
      GITHUB_SHA: lookup('github.event.pull_request.head.sha', ctx),
      GITHUB_REPOSITORY: 'someone/app',
      RUNNER_TEMP: temp,
      RUNNER_OS: 'Linux',
    };
    for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = expand(v, ctx);
    const cwd = path.resolve(workspace, expand(step['working-directory'] ?? '.', ctx));
    const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
      cwd,
      env: env(stepEnv),
      timeout: 180_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    results.push({ name: step.name ?? step.id ?? String(i), code: r.status ?? 128, out });
    const outputs: Record<string, string> = {};
    for (const line of readFileSync(output, 'utf8').split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) outputs[line.slice(0, eq)] = line.slice(eq + 1);
    }
    if (step.id) ctx.steps[step.id] = { outputs };
    if (r.status !== 0) break; // the runner stops the job at the first failing step
  }
  return { steps: results, summary: readFileSync(summary, 'utf8') };
}

describe('the Action (action.yml) on a pull request', () => {
  it('blocks a destructive pull request: annotations, job summary, SARIF', () => {
    const repo = project('action', PY);
    const base = must(repo, 'git rev-parse HEAD').trim();
    must(
      repo,
      'git checkout -q -b agent && git rm -q src/state.py && echo "small" > new.py && git add -A && git commit -q --no-verify -m "agent: rewrite"',
    );
    const head = must(repo, 'git rev-parse HEAD').trim();
    const event = {
      pull_request: {
        number: 1,
        base: { sha: base, ref: 'main' },
        head: { sha: head, ref: 'agent' },
      },
    };
    const { steps, summary } = runAction(
      repo,
      { package: tarball, sarif: 'reports/guard.sarif' },
      event,
    );

    expect(steps.map((s) => s.name)).toEqual(['Install guard', 'guard ci (SARIF)', 'guard ci']);
    const [install, sarifStep, check] = steps;
    expect(install!.code, install!.out).toBe(0);
    expect(sarifStep!.code, sarifStep!.out).toBe(0);
    expect(check!.code, check!.out).toBe(1);
    expect(check!.out).toMatch(/::error file=src\/state\.py[^\n]*::/);
    expect(summary).toContain('src/state.py');
    const sarif = JSON.parse(readFileSync(path.join(repo, 'reports/guard.sarif'), 'utf8'));
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0].results.map((r: { ruleId: string }) => r.ruleId)).toContain(
      'guard/delete',
    );
    // it wrote nothing into the repository under check but the report
    expect(must(repo, 'git status --porcelain --untracked-files=all').trim()).toBe(
      '?? reports/guard.sarif',
    );
  });

  it('passes a small pull request', () => {
    const repo = project('action-ok', PY);
    const base = must(repo, 'git rev-parse HEAD').trim();
    must(
      repo,
      'git checkout -q -b agent && echo "# note" >> src/state.py && git commit -qam "agent: a note"',
    );
    const head = must(repo, 'git rev-parse HEAD').trim();
    const { steps } = runAction(
      repo,
      { package: tarball },
      { pull_request: { base: { sha: base }, head: { sha: head } } },
    );
    expect(steps.map((s) => [s.name, s.code])).toEqual([
      ['Install guard', 0],
      ['guard ci', 0],
    ]);
  });
});
