/**
 * The person's side of the commit gate, attacked as issue 20 found it open:
 * `e` through git's no-op editor, an agent committing in a lane, an approval
 * at the commit prompt that guard ci then refused, and `q`'s advice.
 * The prompts run through a real pseudo-terminal, with the child env set
 * explicitly (CI unset: CI=true would put guard in auto mode).
 */
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as pty from 'node-pty';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  fixture,
  installGuard,
  lanePath,
  laneWrite,
  lines,
  makeRepo,
  outsideDir,
  startLane,
  type TestRepo,
} from '../helpers.js';
import { spawnGuard } from '../pty.js';

afterAll(cleanupRepos);

const PROMPT = /Take this hunk \[[^\]]*\]\? $/;

/** `git commit ARGS` on a pseudo-terminal; `answer(screen)` returns what to type at each prompt (null: nothing). */
function commitAtTerminal(
  repo: TestRepo,
  args: string[],
  answer: (screen: string) => string | null,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; out: string }> {
  const p = pty.spawn('git', ['commit', ...args], {
    cwd: repo.dir,
    env: cleanEnv({
      CI: undefined,
      GUARD_AUTO: undefined,
      NO_COLOR: '1',
      TERM: 'xterm',
      ...env,
    }) as Record<string, string>,
    cols: 160,
    rows: 50,
  });
  let out = '';
  let seen = 0;
  p.onData((d) => {
    out += d;
    const rest = out.slice(seen);
    if (PROMPT.test(rest)) {
      seen = out.length;
      const a = answer(rest);
      if (a !== null) p.write(a);
    }
  });
  const timer = setTimeout(() => p.kill(), 30_000);
  return new Promise((resolve) =>
    p.onExit(({ exitCode }) => (clearTimeout(timer), resolve({ code: exitCode, out }))),
  );
}

/** A plain pre-commit hook running the built guard (git sets GIT_EDITOR=: for it under `commit -m`). */
function plainHook(repo: TestRepo): void {
  repo.write('.git/hooks/pre-commit', `#!/bin/sh\nexec "${process.execPath}" "${CLI}" check\n`);
  chmodSync(path.join(repo.dir, '.git/hooks/pre-commit'), 0o755);
  repo.git(['config', 'core.hooksPath', '.git/hooks']);
}

/** An editor that marks every added line of the hunk it is given. */
function markingEditor(): string {
  const f = path.join(outsideDir(), 'edit.sh');
  writeFileSync(f, `#!/bin/sh\nsed -i 's/^+\\(.*\\)$/+\\1  # edited by hand/' "$1"\n`);
  chmodSync(f, 0o755);
  return f;
}

describe('e at the prompt of git commit -m', () => {
  it("opens the person's core.editor, not git's GIT_EDITOR=: for hooks (the hunk is what they edited)", async () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    plainHook(repo);
    repo.git(['config', 'core.editor', markingEditor()]);
    const keys = ['e\r', 'a\r'];
    const r = await commitAtTerminal(
      repo,
      ['-q', '-m', 'agent rewrite'],
      () => keys.shift() ?? 'q\r',
      { EDITOR: undefined, VISUAL: undefined },
    );
    expect(r.code).toBe(0);
    // what was committed carries the person's edit: the editor ran
    expect(repo.git(['show', 'HEAD:state.py'])).toContain('# edited by hand');
  });

  it('with only a no-op editor anywhere: says editing is not possible and leaves the hunk undecided, never takes it', async () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    plainHook(repo);
    repo.git(['config', 'core.editor', 'true']);
    const screens: string[] = [];
    const keys = ['e\r', 'q\r'];
    const r = await commitAtTerminal(
      repo,
      ['-q', '-m', 'agent rewrite'],
      (s) => (screens.push(s), keys.shift() ?? 'q\r'),
      { EDITOR: undefined, VISUAL: undefined },
    );
    expect(screens.join('')).toContain('Editing is not possible here');
    expect(screens).toHaveLength(2); // the same hunk asked again after `e`
    // q left it undecided: blocked, nothing committed, the index as it was
    expect(r.code).not.toBe(0);
    expect(repo.git(['rev-parse', 'HEAD']).trim()).toBe(head);
    expect(repo.git(['show', ':state.py'])).toBe(fixture('state_replacement.py'));
  });
});

describe('q at the commit prompt', () => {
  it('tells the person at the terminal to run the commit again, not to go find a terminal', async () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(PROMPT);
    s.type('q\r');
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain(
      'You stopped (q) before deciding it: run the same `git commit` (or `guard check`) again',
    );
    expect(s.output()).not.toContain('in a terminal');
  });

  it('without a terminal the advice still says where a person decides', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const r = repo.guard(['check']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('run the same `git commit` in a terminal');
  });
});

describe('q at the review prompt', () => {
  it('tells the person to run the review again, not to find a terminal', async () => {
    const repo = makeRepo({
      'doc.txt': 'a\n',
      'guard.config.json': JSON.stringify({ protect: ['doc.txt'] }),
    });
    const lane = startLane(repo);
    laneWrite(lane, 'doc.txt', 'b\n');
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await s.waitFor(PROMPT);
    s.type('q\r');
    await s.waitFor(/Merge now \[y,n\]\? $/);
    s.type('y\r');
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain(
      'You stopped (q) before deciding the blocked changes: run guard review agent again to decide them.',
    );
    expect(s.output()).not.toContain('in a terminal');
  });
});

describe('an approval at the commit prompt', () => {
  it('writes the Guard-Approved: trailer for exactly the content approved, so guard ci passes', async () => {
    const repo = installGuard({ 'state.py': fixture('state.py') });
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', 'state.py']);
    const r = await commitAtTerminal(repo, ['-q', '-m', 'agent rewrite'], () => 'y\r');
    expect(r.code).toBe(0);
    const blob = repo.git(['rev-parse', 'HEAD:state.py']).trim();
    expect(repo.git(['log', '-1', '--format=%B'])).toBe(
      `agent rewrite\n\nGuard-Approved: state.py ${blob}\n\n`,
    );
    const ci = repo.guard(['ci', '--base', base, '--head', 'HEAD']);
    expect(ci.stdout + ci.stderr).toContain('1 approved');
    expect(ci.code).toBe(0);
    // nothing left behind for the next commit
    const pending = repo.git(['rev-parse', '--git-path', 'guard-approved-trailers']).trim();
    expect(repo.gitRun(['cat-file', '-e', 'HEAD']).code).toBe(0);
    expect(() => repo.read(pending)).toThrow();
  });

  it("the user's own commit-msg hook that ends in exit still gets the trailer (guard's lines run first), and the user's hook still runs", async () => {
    const userHook =
      '# the team\'s hook\necho ran >> "$(git rev-parse --git-dir)/user-hook-ran"\nexit 0\n';
    const repo = makeRepo({ 'state.py': fixture('state.py'), '.gitignore': 'node_modules/\n' });
    repo.write('.husky/commit-msg', userHook);
    repo.git(['config', '--unset', 'core.hooksPath']);
    mkdirSync(path.join(repo.dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(CLI, path.join(repo.dir, 'node_modules', '.bin', 'guard'));
    expect(repo.guard(['init']).code).toBe(0);
    expect(repo.read('.husky/commit-msg')).toContain('echo ran >>');
    repo.git(['add', '-A']);
    expect(repo.gitRun(['commit', '-q', '-m', 'install guard'], { CI: 'true' }).code).toBe(0);
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', 'state.py']);
    const r = await commitAtTerminal(repo, ['-q', '-m', 'agent rewrite'], () => 'y\r');
    expect(r.code).toBe(0);
    const blob = repo.git(['rev-parse', 'HEAD:state.py']).trim();
    expect(
      repo.git(['log', '-1', '--format=%(trailers:key=Guard-Approved,valueonly)']).trim(),
    ).toBe(`state.py ${blob}`);
    expect(repo.guard(['ci', '--base', base, '--head', 'HEAD']).code).toBe(0);
    expect(repo.read('.git/user-hook-ran')).toBe('ran\nran\n');
    // a second guard init changes nothing
    repo.guard(['init']);
    expect(repo.git(['status', '--porcelain', '--', '.husky'])).toBe('');
  });

  it('a strategy (b: both) names the merged blob that was committed, not the proposal', async () => {
    const repo = installGuard({ 'state.py': fixture('state.py') });
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', 'state.py']);
    const r = await commitAtTerminal(repo, ['-q', '-m', 'agent rewrite'], () => 'b\r');
    expect(r.code).toBe(0);
    expect(repo.git(['show', 'HEAD:state.py'])).toBe(
      fixture('state.py') + fixture('state_replacement.py'),
    );
    const blob = repo.git(['rev-parse', 'HEAD:state.py']).trim();
    expect(
      repo.git(['log', '-1', '--format=%(trailers:key=Guard-Approved,valueonly)']).trim(),
    ).toBe(`state.py ${blob}`);
    expect(repo.guard(['ci', '--base', base]).code).toBe(0);
  });

  it('an agent cannot get the trailer: in auto mode the change is blocked and no trailer is left for the next commit', () => {
    const repo = installGuard({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', 'state.py']);
    const r = repo.gitRun(['commit', '-q', '-m', 'agent rewrite'], { CI: 'true' });
    expect(r.code).not.toBe(0);
    const pending = repo.git(['rev-parse', '--git-path', 'guard-approved-trailers']).trim();
    expect(() => repo.read(pending)).toThrow();
  });
});

describe('an agent committing in a lane', () => {
  it("the lane's commit gate finds the main tree's guard: a small commit lands, a destructive one is blocked by guard", () => {
    const repo = installGuard({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
    const s = repo.guard(['start', 'agent']);
    expect(s.code).toBe(0);
    const lane = lanePath(repo, 'agent');
    const inLane = (args: string[]) => repo.gitRun(['-C', lane, ...args], { CI: 'true' });
    writeFileSync(path.join(lane, 'notes.txt'), 'a\nb\n');
    expect(inLane(['add', 'notes.txt']).code).toBe(0);
    const small = inLane(['commit', '-q', '-m', 'small edit']);
    expect(small.stderr).not.toContain('not installed');
    expect(small.code).toBe(0);
    expect(repo.git(['-C', lane, 'log', '-1', '--format=%s']).trim()).toBe('small edit');

    writeFileSync(path.join(lane, 'state.py'), fixture('state_replacement.py'));
    inLane(['add', 'state.py']);
    const big = inLane(['commit', '-q', '-m', 'rewrite']);
    expect(big.code).not.toBe(0);
    expect(big.stdout + big.stderr).toContain('guard: blocked 1 change');
  });

  it("a project in a subfolder with a name that needs quoting: the lane finds the main tree's guard there", () => {
    const web = 'we b$x';
    const repo = makeRepo({
      [`${web}/package.json`]: '{"name":"x"}\n',
      'notes.txt': 'a\n',
      'big.txt': lines(200),
      '.gitignore': 'node_modules/\n',
    });
    repo.git(['config', '--unset', 'core.hooksPath']);
    mkdirSync(path.join(repo.dir, web, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(CLI, path.join(repo.dir, web, 'node_modules', '.bin', 'guard'));
    expect(repo.guard(['init'], { cwd: path.join(repo.dir, web) }).code).toBe(0);
    repo.git(['add', '-A']);
    expect(repo.gitRun(['commit', '-q', '-m', 'install guard'], { CI: 'true' }).code).toBe(0);
    expect(repo.guard(['start', 'agent']).code).toBe(0);
    const lane = lanePath(repo, 'agent');
    writeFileSync(path.join(lane, 'notes.txt'), 'a\nb\n');
    repo.gitRun(['-C', lane, 'add', 'notes.txt']);
    // the pre-commit hook itself, as husky runs it
    const r = spawnSync('sh', ['-e', '.husky/pre-commit'], {
      cwd: lane,
      env: cleanEnv({ CI: 'true', PATH: `node_modules/.bin:${process.env.PATH}` }),
    });
    expect(r.stderr.toString()).not.toContain('not installed');
    expect(r.status).toBe(0);
    // and a real commit, through the branch gate's reference-transaction hook too: it finds guard in the subfolder
    const c = repo.gitRun(['-C', lane, 'commit', '-q', '-m', 'small edit'], { CI: 'true' });
    expect(c.stderr).not.toContain('not installed');
    expect(c.code).toBe(0);
    expect(repo.git(['-C', lane, 'log', '-1', '--format=%s']).trim()).toBe('small edit');
    // a destructive commit there is still refused by guard itself
    writeFileSync(path.join(lane, 'big.txt'), '');
    repo.gitRun(['-C', lane, 'add', 'big.txt']);
    const big = repo.gitRun(['-C', lane, 'commit', '-q', '--no-verify', '-m', 'empty it'], {
      CI: 'true',
    });
    expect(big.code).not.toBe(0);
    expect(big.stderr).not.toContain('not installed');
    expect(big.stderr).toContain('big.txt');
  });
});

/** .husky/pre-commit as `guard init` wrote it before the lane fallback and the commit-msg hook (hooks/pre-commit at ce2481b^). */
const OLD_PRE_COMMIT = `# guard: the commit gate. Every staged change is measured against HEAD;
# large destructive ones need a person (and are blocked when none is there).
# husky puts node_modules/.bin first on PATH, so this is the project's guard.
command -v guard >/dev/null 2>&1 || {
  echo "guard: the guard command is not installed here (npm install --save-dev guard-cli); the commit gate fails closed" >&2
  exit 1
}
guard check
`;

describe('hooks set up by an older guard init', () => {
  it('doctor says the pre-commit has no lane fallback and there is no commit-msg hook, and names guard init; guard init then adds both', () => {
    const repo = installGuard({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
    repo.write('.husky/pre-commit', OLD_PRE_COMMIT);
    repo.git(['rm', '-q', '.husky/commit-msg']);
    const d = repo.guardJson(['doctor']).json;
    const old = d.checks.find((c: any) => c.id === 'hook-old');
    expect(old).toMatchObject({ ok: false, severity: 'warning' });
    expect(old.message).toContain('.husky/pre-commit');
    expect(old.message).toMatch(/lane/);
    expect(old.message).toMatch(/commit-msg/);
    expect(old.hint).toMatch(/guard init/);

    const init = repo.guard(['init']);
    expect(init.code).toBe(0);
    expect(repo.read('.husky/pre-commit')).toContain('--git-common-dir');
    expect(repo.read('.husky/commit-msg')).toContain('guard-approved-trailers');
    expect(
      repo.guardJson(['doctor']).json.checks.find((c: any) => c.id === 'hook-old'),
    ).toBeUndefined();
    // exactly what a fresh guard init writes (the lane commits this allows: "an agent committing in a lane" above)
    expect(repo.read('.husky/pre-commit')).toBe(repo.git(['show', 'HEAD:.husky/pre-commit']));
    repo.git(['add', '-A', '.husky']);
    expect(repo.git(['diff', '--cached', '--stat', 'HEAD', '--', '.husky'])).toBe('');
  });
});
