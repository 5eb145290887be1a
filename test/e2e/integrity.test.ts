/**
 * Issue 20, "The safety net, deleted without a word" and `.husky/_` under
 * `git clean -fdX`: each attack performed through plain git and the shell;
 * the next call of every door (hook, doctor, log, rewind, check) says so, and
 * `guard recover` puts back what git still has.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { liveTips } from '../../src/git/journal.js';
import {
  claudeHook,
  claudePayload,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

const hook = (repo: TestRepo, tool: string, input: object, id: string, post = false) =>
  claudeHook(repo, 'net-1', tool, input, id, post);

/** A session that wrote a file through the hook and ran one shell command: refs under refs/guard/sessions and checkpoints. */
function session(repo: TestRepo): void {
  const file = path.join(repo.dir, 'app.py');
  expect(
    hook(repo, 'Edit', { file_path: file, old_string: 'line 1\n', new_string: 'LINE 1\n' }, 'w1')
      .stdout,
  ).toBe('');
  repo.write('app.py', repo.read('app.py').replace('line 1\n', 'LINE 1\n'));
  hook(repo, 'Bash', { command: 'ls' }, 's1');
  hook(repo, 'Bash', { command: 'ls' }, 's1', true);
}

const wipeRefs = (repo: TestRepo) => {
  const refs = repo.git(['for-each-ref', '--format=delete %(refname)', 'refs/guard/']);
  repo.git(['update-ref', '--stdin'], { input: refs });
};

describe('refs/guard/* deleted and gc run through the shell', () => {
  it('every door says so, the hook blocks, and guard recover puts the refs back', () => {
    const repo = makeRepo({ 'app.py': lines(120) });
    session(repo);
    const before = repo.git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/guard/']);
    expect(before).toContain('refs/guard/sessions/claude/net-1/');
    wipeRefs(repo);
    repo.git(['gc', '-q']);
    expect(repo.git(['for-each-ref', 'refs/guard/'])).toBe('');

    // the hook (pre): the tool call is refused with why, in Claude's protocol
    const pre = hook(
      repo,
      'Write',
      { file_path: path.join(repo.dir, 'app.py'), content: 'x\n' },
      'w2',
    );
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(
      /of guard's refs were removed outside guard/,
    );
    expect(repo.read('app.py')).toContain('LINE 1');
    // doctor fails (exit 1) and names it
    const doctor = repo.guardJson(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.json.checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:refs', ok: false, severity: 'error' }),
    );
    // log and rewind warn on stderr
    expect(repo.guard(['log']).stderr).toMatch(
      /WARNING: \d+ of guard's refs were removed outside guard/,
    );
    expect(repo.guard(['rewind', 'net-1']).stderr).toMatch(
      /WARNING: \d+ of guard's refs were removed/,
    );

    const rec = repo.guardJson(['recover']);
    expect(rec.code).toBe(0);
    expect(rec.json.lost).toEqual([]);
    const after = repo.git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/guard/']);
    for (const line of before.trim().split('\n')) expect(after).toContain(line);
    // quiet again, and the session can be rewound
    expect(
      repo.guardJson(['doctor']).json.checks.some((c: any) => c.id.startsWith('integrity')),
    ).toBe(false);
    const rw = repo.guard(['rewind', 'net-1']);
    expect(rw.code).toBe(0);
    expect(rw.stderr).toBe('');
    expect(repo.read('app.py')).toBe(lines(120));
  });

  it('after gc --prune=now the objects are gone: recover names what is lost, exits 1, and the doors stop repeating it', () => {
    const repo = makeRepo({ 'app.py': lines(120) });
    session(repo);
    wipeRefs(repo);
    repo.git(['-c', 'gc.reflogExpireUnreachable=now', 'gc', '-q', '--prune=now']);
    const rec = repo.guardJson(['recover']);
    expect(rec.code).toBe(1);
    expect(rec.json.lost.length).toBeGreaterThan(0);
    expect(rec.json.restored).toEqual([]);
    expect(repo.guard(['log']).stderr).toBe('');
  });

  it('the journal removed together with the refs: the last checkpoint is a second witness, and recover puts it back', () => {
    const repo = makeRepo({ 'app.py': lines(120) });
    session(repo);
    wipeRefs(repo);
    rmSync(path.join(repo.dir, '.git', 'guard'), { recursive: true, force: true });
    const pre = hook(repo, 'Bash', { command: 'ls' }, 'x1');
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(repo.guardJson(['recover']).json.restored).toHaveLength(1);
    expect(repo.git(['for-each-ref', 'refs/guard/checkpoints/'])).not.toBe('');
    expect(repo.guard(['log']).stderr).toBe('');
  });

  it("the journal's own bookkeeping: guard's pruning is not an attack", () => {
    const repo = makeRepo({ 'app.py': lines(120) });
    session(repo);
    expect(repo.guard(['log', '--prune', '--keep', '0']).code).toBe(0);
    const doctor = repo.guardJson(['doctor']);
    expect(doctor.json.checks.some((c: any) => c.id === 'integrity:refs')).toBe(false);
  });
});

describe('.husky/_ removed by git clean -fdX', () => {
  it("doctor and log say the hooks are gone; the next hook call puts them back from guard's copy and says so once; guard init also does", () => {
    const repo = makeRepo({
      'package.json': '{ "name": "app", "private": true }\n',
      'app.py': lines(200),
    });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init']).code).toBe(0);
    expect(existsSync(path.join(repo.dir, '.husky', '_', 'pre-commit'))).toBe(true);
    repo.git(['clean', '-fdXq']);
    expect(existsSync(path.join(repo.dir, '.husky', '_'))).toBe(false);

    const doctor = repo.guardJson(['doctor']);
    expect(doctor.code).toBe(1);
    // (doctor's own hook checks name the missing hook; integrity:hooks stands in when they find nothing)
    expect(doctor.json.active).toBe(false);
    expect(repo.guard(['log']).stderr).toMatch(/guard's git hooks are gone/);

    // (issue 20 b) the hook door puts the folder back from .git/guard/hooks-copy and refuses this one call so the model reads it
    const pre = hook(repo, 'Bash', { command: 'git rm -q app.py && git commit -qm x' }, 'c1');
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(
      /guard's git hooks were removed outside guard \(_\/pre-commit.*guard has put them back/,
    );
    expect(existsSync(path.join(repo.dir, '.husky', '_', 'pre-commit'))).toBe(true);
    expect(repo.guard(['log']).stderr).toBe('');
    expect(
      repo.guardJson(['doctor']).json.checks.some((c: any) => c.id === 'integrity:hooks'),
    ).toBe(false);
    expect(hook(repo, 'Bash', { command: 'ls' }, 'c2').stdout).toBe('');

    repo.git(['clean', '-fdXq']);
    expect(repo.guard(['init']).code).toBe(0);
    expect(existsSync(path.join(repo.dir, '.husky', '_', 'pre-commit'))).toBe(true);
    expect(repo.guard(['log']).stderr).toBe('');
  });
});

describe("the harness's hook configuration changed through the shell", () => {
  it('disableAllHooks added to .claude/settings.local.json: the next hook call and doctor say so', () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
    repo.write('.claude/settings.local.json', '{ "disableAllHooks": true }\n');
    const pre = hook(repo, 'Bash', { command: 'ls' }, 'd1');
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(
      /settings\.local\.json sets disableAllHooks/,
    );
    expect(repo.guardJson(['doctor']).json.checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:agent', severity: 'error' }),
    );
  });

  // Claude Code reads its settings as JSON: an escaped key is the same key; and `env` reaches the
  // hooks it runs (the schema: "Environment variables to set for Claude Code sessions")
  it.each([
    [
      'disableAllHooks spelled with a JSON escape',
      '{ "disable\\u0041llHooks": true }\n',
      /settings\.local\.json sets disableAllHooks/,
    ],
    [
      "guard's checkpoint cap set to 0 through env",
      '{ "env": { "GUARD_CHECKPOINT_MAX_BYTES": "0" } }\n',
      /settings\.local\.json sets GUARD_CHECKPOINT_MAX_BYTES in env/,
    ],
  ])('%s in .claude/settings.local.json: the next hook call says so', (_, text, said) => {
    const repo = makeRepo({ 'app.py': lines(10) });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
    repo.write('.claude/settings.local.json', text);
    const pre = hook(repo, 'Bash', { command: 'ls' }, 'e1');
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(said);
  });

  // Claude Code 2.1.330's schema: `async` runs a hook without waiting for it, `once` removes it after
  // one run, `if` runs it only when a condition holds, onFailure "continue" runs the tool when it fails.
  // Each edit below leaves a hook that still names `guard hook claude`, so the old check saw nothing.
  it.each([
    ['onFailure taken off', (h: any) => delete h.onFailure, /PreToolUse onFailure removed/],
    ['async added', (h: any) => (h.async = true), /PreToolUse async true added/],
    ['once added', (h: any) => (h.once = true), /PreToolUse once true added/],
    ['an if condition added', (h: any) => (h.if = 'Bash(ls)'), /PreToolUse if "Bash\(ls\)" added/],
    ['the timeout cut to 1 s', (h: any) => (h.timeout = 1), /PreToolUse timeout 1/],
  ])(
    "guard's Claude hook changed through the shell (%s): the next hook call and doctor say so",
    (_, edit, said) => {
      const repo = makeRepo({ 'app.py': lines(10) });
      repo.git(['config', '--unset', 'core.hooksPath']);
      expect(repo.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
      // before: guard's own install is not reported, however the file is formatted
      const s = JSON.parse(repo.read('.claude/settings.json'));
      repo.write('.claude/settings.json', JSON.stringify(s));
      expect(repo.guardJson(['doctor']).json.checks).not.toContainEqual(
        expect.objectContaining({ id: 'integrity:agent' }),
      );
      edit(s.hooks.PreToolUse.at(-1).hooks[0]);
      repo.write('.claude/settings.json', JSON.stringify(s, null, 2));
      const pre = hook(repo, 'Bash', { command: 'ls' }, 'f1');
      expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
      expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(said);
      expect(repo.guardJson(['doctor']).json.checks).toContainEqual(
        expect.objectContaining({
          id: 'integrity:agent',
          severity: 'error',
          message: expect.stringMatching(said),
        }),
      );
    },
  );

  it("guard's Claude hook narrowed to Bash, or its PostToolUse entry removed: reported", () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
    const s = JSON.parse(repo.read('.claude/settings.json'));
    s.hooks.PreToolUse.at(-1).matcher = 'Bash';
    delete s.hooks.PostToolUse;
    repo.write('.claude/settings.json', JSON.stringify(s, null, 2));
    const d = repo.guardJson(['doctor']).json;
    expect(d.checks).toContainEqual(
      expect.objectContaining({
        id: 'integrity:agent',
        message: expect.stringMatching(
          /PreToolUse matcher "Bash".*no entry for PostToolUse|no entry for PostToolUse.*PreToolUse matcher "Bash"/,
        ),
      }),
    );
  });

  it("disableAllHooks written into the person's own ~/.claude/settings.json through the shell: the next door says so", () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
    const home = outsideDir();
    mkdirSync(path.join(home, '.claude'), { recursive: true });
    writeFileSync(path.join(home, '.claude', 'settings.json'), '{ "disableAllHooks": true }\n');
    // Claude Code then runs no hook: the next door guard still has (a commit, doctor, a hook of a
    // session that started before) names the file
    const d = repo.guardJson(['doctor'], { env: { HOME: home } });
    expect(d.json.checks).toContainEqual(
      expect.objectContaining({
        id: 'integrity:agent',
        severity: 'error',
        message: expect.stringContaining(path.join(home, '.claude', 'settings.json')),
      }),
    );
    const pre = repo.guard(['hook', 'claude'], {
      input: claudePayload(repo, 'h1', 'Bash', { command: 'ls' }, 'h1'),
      env: { HOME: home },
    });
    expect(JSON.parse(pre.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(
      /disableAllHooks/,
    );
  });

  it("guard's hooks removed from .claude/settings.json: reported by doctor", () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
    repo.write('.claude/settings.json', '{ "hooks": {} }\n');
    const d = repo.guardJson(['doctor']);
    expect(d.code).toBe(1);
    expect(d.json.checks).toContainEqual(
      expect.objectContaining({
        id: 'integrity:agent',
        message: expect.stringMatching(/no longer runs guard hook claude/),
      }),
    );
    rmSync(path.join(repo.dir, '.claude'), { recursive: true });
    expect(repo.guardJson(['doctor']).json.checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:agent', message: expect.stringMatching(/is gone/) }),
    );
  });
});

describe('journal (unit)', () => {
  it('the last word on each ref wins; a removal by guard forgets it', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const text = `${a} refs/guard/x\n${b} refs/guard/y\n- refs/guard/x\n${a} refs/guard/y\ngarbage\n${b} not-a-ref\n`;
    expect(liveTips(text)).toEqual([{ ref: 'refs/guard/y', oid: a }]);
  });
});
