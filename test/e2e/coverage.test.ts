/**
 * Issue 20, "Outside the checkpoint, so gone after one shell command": each
 * attack performed as an agent would, through `guard hook claude` and plain
 * git in a real repository; asserted through the file system and git.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, startLane, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

type Env = Record<string, string | undefined>;

function payload(repo: TestRepo, command: string, id: string, post = false): string {
  return JSON.stringify({
    session_id: 'cov-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: 'bypassPermissions',
    hook_event_name: post ? 'PostToolUse' : 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: id,
    ...(post ? { tool_response: {} } : {}),
  });
}

/** One shell call as Claude Code runs it: the pre hook, the command, the post hook; the report (or ''). */
function shell(repo: TestRepo, command: string, act: () => void, env: Env = {}): string {
  const id = `t${Math.random().toString(16).slice(2, 10)}`;
  const pre = repo.guard(['hook', 'claude'], { input: payload(repo, command, id), env });
  expect(pre.code).toBe(0);
  expect(pre.stdout).toBe('');
  act();
  const post = repo.guard(['hook', 'claude'], { input: payload(repo, command, id, true), env });
  expect(post.code).toBe(0);
  return post.stdout.trim()
    ? (JSON.parse(post.stdout).hookSpecificOutput.additionalContext as string)
    : '';
}

const restoreCommand = (msg: string) => /run: (guard restore \S+ -- .+?)\.(?: |$)/.exec(msg)?.[1];

describe('ignored files: git clean -fdX and rm', () => {
  it('keeps .env and config/local.json, reports them, and brings them back byte for byte', () => {
    const repo = makeRepo({
      '.gitignore': '.env\nconfig/local.json\n',
      'config/app.json': '{}\n',
      'a.txt': 'a\n',
    });
    repo.write('.env', 'SECRET=1\nTOKEN=abc\n');
    repo.write('config/local.json', '{"db":"local"}\n');
    const msg = shell(repo, 'git clean -fdX', () => repo.git(['clean', '-fdXq']));
    expect(existsSync(path.join(repo.dir, '.env'))).toBe(false);
    expect(msg).toContain('.env (ignored, removed)');
    expect(msg).toContain('config/local.json (ignored, removed)');
    const cmd = restoreCommand(msg)!;
    expect(cmd).toMatch(
      /^guard restore \S+ -- (\.env config\/local\.json|config\/local\.json \.env)$/,
    );
    const r = repo.guard(cmd.split(' ').slice(1));
    expect(r.code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\nTOKEN=abc\n');
    expect(repo.read('config/local.json')).toBe('{"db":"local"}\n');
  });

  it('an .env overwritten by the command is reported and its old content restorable', () => {
    const repo = makeRepo({ '.gitignore': '.env\n', 'a.txt': 'a\n' });
    repo.write('.env', 'SECRET=real\n');
    const msg = shell(repo, 'cp .env.example .env', () => repo.write('.env', 'SECRET=changeme\n'));
    expect(msg).toContain('.env (ignored, overwritten)');
    expect(repo.guard(restoreCommand(msg)!.split(' ').slice(1)).code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=real\n');
  });

  it('an unchanged .env costs nothing: the checkpoint is reused and nothing is reported', () => {
    const repo = makeRepo({ '.gitignore': '.env\n', 'a.txt': 'a\n' });
    repo.write('.env', 'SECRET=1\n');
    expect(shell(repo, 'ls', () => {})).toBe('');
    expect(shell(repo, 'ls -la', () => {})).toBe('');
    expect(repo.git(['for-each-ref', 'refs/guard/checkpoints/']).trim().split('\n')).toHaveLength(
      1,
    );
    // the kept tree is a parent of the checkpoint: git holds .env, reachable (gc keeps it)
    const cp = repo
      .git(['for-each-ref', '--format=%(objectname)', 'refs/guard/checkpoints/'])
      .trim();
    const parents = repo.git(['rev-list', '--parents', '-n1', cp]).trim().split(' ').slice(1);
    expect(parents.some((p) => repo.git(['ls-tree', '--name-only', p]).includes('.env'))).toBe(
      true,
    );
  });

  it('a whole-tree restore puts kept ignored files back and never touches one it did not keep', () => {
    const repo = makeRepo({ '.gitignore': '.env\n*.local\n', 'a.txt': 'a\n' });
    repo.write('.env', 'OLD=1\n');
    shell(repo, 'true', () => {});
    const id = repo
      .git(['for-each-ref', '--format=%(refname:lstrip=3)', 'refs/guard/checkpoints/'])
      .trim();
    rmSync(path.join(repo.dir, '.env'));
    repo.write('new.local', 'made after the checkpoint\n');
    const r = repo.guard(['restore', id]);
    expect(r.code).toBe(0);
    expect(repo.read('.env')).toBe('OLD=1\n');
    expect(repo.read('new.local')).toBe('made after the checkpoint\n');
  });

  it('does not descend into an ignored folder larger than the walk limit: names it, and says it is gone for good', () => {
    const repo = makeRepo({ '.gitignore': 'node_modules/\n.env\n', 'a.txt': 'a\n' });
    repo.write('.env', 'K=1\n');
    for (let i = 0; i < 8; i++)
      repo.write(`node_modules/p${i}/index.js`, `module.exports = ${i}\n`);
    const env = { GUARD_KEPT_WALK_MAX: '5' };
    const msg = shell(repo, 'git clean -fdX', () => repo.git(['clean', '-fdXq']), env);
    expect(msg).toContain('.env (ignored, removed)');
    expect(msg).toMatch(/GONE FOR GOOD[^.]*node_modules \(an ignored folder too large to keep\)/);
    // the checkpoint before names it as not kept (guard log --json)
    const log = repo.guardJson(['log']).json;
    const pre = log.entries.find((e: any) => e.kind === 'checkpoint' && /^before/.test(e.reason));
    expect(pre.skipped).toContainEqual(
      expect.objectContaining({ path: 'node_modules', reason: 'folder', kind: 'ignored' }),
    );
  });

  it('past the budget, ignored files are named, not kept; the report says they are gone for good', () => {
    const repo = makeRepo({ '.gitignore': '*.key\n', 'a.txt': 'a\n' });
    repo.write('a.key', 'A'.repeat(100));
    repo.write('b.key', 'B'.repeat(100));
    const msg = shell(
      repo,
      'rm *.key',
      () => {
        rmSync(path.join(repo.dir, 'a.key'));
        rmSync(path.join(repo.dir, 'b.key'));
      },
      { GUARD_KEPT_TOTAL_MAX: '150' },
    );
    expect(msg).toContain('a.key (ignored, removed)');
    expect(msg).toMatch(/GONE FOR GOOD[^.]*b\.key \(an ignored file, past the checkpoint's budget/);
  });
});

describe('ignored files: odd names and a crowded budget', () => {
  it('names with spaces, unicode and a leading dash are kept and restored by name', () => {
    const repo = makeRepo({ '.gitignore': '*.key\n', 'a.txt': 'a\n' });
    const names = ['my key.key', '-dash.key', 'clé ü.key'];
    for (const n of names) repo.write(n, `${n}\n`);
    const msg = shell(repo, 'git clean -fdXq', () => repo.git(['clean', '-fdXq']));
    for (const n of names) expect(msg).toContain(`${n} (ignored, removed)`);
    const id = /guard restore (\S+) --/.exec(msg)![1]!;
    const r = repo.guard(['restore', id, '--', ...names]);
    expect(r.code).toBe(0);
    for (const n of names) expect(repo.read(n)).toBe(`${n}\n`);
  });

  it('many larger ignored files cannot push a small .env out of the budget', () => {
    const repo = makeRepo({ '.gitignore': '*.bin\n.env\n', 'a.txt': 'a\n' });
    for (let i = 0; i < 4; i++) repo.write(`${i}.bin`, 'x'.repeat(100));
    repo.write('.env', 'K=1\n');
    const msg = shell(repo, 'rm .env', () => rmSync(path.join(repo.dir, '.env')), {
      GUARD_KEPT_TOTAL_MAX: '250',
    });
    expect(msg).toContain('.env (ignored, removed)');
  });
});

describe('untracked files over the size cap', () => {
  it('an rm-ed file over the cap is named in the report, not only in the checkpoint message', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('model.bin', Buffer.alloc(4096, 1));
    const msg = shell(repo, 'rm model.bin', () => rmSync(path.join(repo.dir, 'model.bin')), {
      GUARD_CHECKPOINT_MAX_BYTES: '1024',
    });
    expect(msg).toMatch(
      /GONE FOR GOOD, guard could not keep them: model\.bin \(an untracked file of 0\.0 MB, over the checkpoint's size cap\)/,
    );
    const log = repo.guard(['log', '--session', 'cov-1']);
    expect(log.stdout).toContain('GONE, NOT KEPT: model.bin');
    // was a gap: plain `guard log` listed the after checkpoint without naming the loss
    expect(repo.guard(['log']).stdout).toMatch(
      /after \S+ shell: rm model\.bin +GONE, NOT KEPT: model\.bin/,
    );
  });

  it('plain guard log names what a shell call destroyed beside its after checkpoint (text and --json)', () => {
    const repo = makeRepo({ 'a.txt': lines(150), 'b.txt': 'b\n' });
    shell(repo, 'rm a.txt', () => rmSync(path.join(repo.dir, 'a.txt')));
    expect(repo.guard(['log']).stdout).toMatch(/after \S+ shell: rm a\.txt +LOST: a\.txt/);
    const after = repo
      .guardJson(['log'])
      .json.entries.find((e: any) => e.kind === 'checkpoint' && /^after /.test(e.reason));
    expect(after.lost).toEqual(['a.txt']);
    // the before checkpoint names nothing
    expect(repo.guard(['log']).stdout).not.toMatch(/before \S+ shell: rm a\.txt +LOST/);
  });
});

describe('nested repositories and submodules', () => {
  it("a nested clone's uncommitted work, reset from the shell, is kept and reported", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const sub = path.join(repo.dir, 'vendor', 'lib');
    mkdirSync(sub, { recursive: true });
    const g = (args: string[]) => repo.git(['-C', sub, ...args]);
    g(['init', '-q', '-b', 'main']);
    writeFileSync(path.join(sub, 'lib.py'), lines(10));
    g(['add', '.']);
    g(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
    writeFileSync(path.join(sub, 'lib.py'), lines(10) + lines(30, 'mine'));
    const msg = shell(repo, 'cd vendor/lib && git reset --hard', () =>
      g(['reset', '-q', '--hard']),
    );
    expect(readFileSync(path.join(sub, 'lib.py'), 'utf8')).toBe(lines(10));
    expect(msg).toContain('vendor/lib/lib.py (in a nested repository, overwritten)');
    expect(repo.guard(restoreCommand(msg)!.split(' ').slice(1)).code).toBe(0);
    expect(readFileSync(path.join(sub, 'lib.py'), 'utf8')).toBe(lines(10) + lines(30, 'mine'));
  });

  it('a submodule (from .gitmodules) removed with its uncommitted file is reported and restorable', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const sub = path.join(repo.dir, 'mod');
    mkdirSync(sub);
    repo.git(['-C', sub, 'init', '-q', '-b', 'main']);
    writeFileSync(path.join(sub, 'm.txt'), 'committed\n');
    repo.git(['-C', sub, 'add', '.']);
    repo.git(['-C', sub, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
    repo.write('.gitmodules', '[submodule "mod"]\n\tpath = mod\n\turl = ./mod\n');
    repo.git(['add', '.gitmodules', 'mod']);
    repo.git(['commit', '-qm', 'sub']);
    writeFileSync(path.join(sub, 'wip.txt'), 'uncommitted work\n');
    const msg = shell(repo, 'rm -rf mod/wip.txt', () => rmSync(path.join(sub, 'wip.txt')));
    expect(msg).toContain('mod/wip.txt (in a nested repository, removed)');
    expect(repo.guard(restoreCommand(msg)!.split(' ').slice(1)).code).toBe(0);
    expect(readFileSync(path.join(sub, 'wip.txt'), 'utf8')).toBe('uncommitted work\n');
  });
});

describe('lanes', () => {
  it("a lane's work tree wiped by git clean -ffdx in the main tree is reported", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const lane = startLane(repo, 'agent-1');
    writeFileSync(path.join(lane, 'wip.txt'), 'lane work\n');
    // the lane's own agent ran a command there: its checkpoint holds the lane's work
    const inLane = JSON.parse(
      payload(repo, 'ls', 'l1').replace(JSON.stringify(repo.dir), JSON.stringify(lane)),
    );
    expect(repo.guard(['hook', 'claude'], { input: JSON.stringify(inLane) }).code).toBe(0);
    // (issue 20) more work after the lane's own last checkpoint: kept too, by the main tree's hook before the command
    writeFileSync(path.join(lane, 'wip2.txt'), 'later lane work\n');
    const msg = shell(repo, 'git clean -ffdx', () => repo.git(['clean', '-ffdxq']));
    expect(existsSync(path.join(repo.dir, '.guard', 'lanes', 'agent-1'))).toBe(false);
    expect(msg).toMatch(
      /removed the work tree of guard lane agent-1\. guard kept it, uncommitted work included, just before the command/,
    );
    const id = /guard restore (\S+)\./.exec(msg)![1]!;
    expect(repo.git(['show', `refs/guard/checkpoints/${id}:wip.txt`])).toBe('lane work\n');
    expect(repo.git(['show', `refs/guard/checkpoints/${id}:wip2.txt`])).toBe('later lane work\n');
  });
});

describe('the harness hook configuration changed through the shell', () => {
  it('disableAllHooks added to .claude/settings.json by a shell command is reported loudly', () => {
    const repo = makeRepo({ '.claude/settings.json': '{"hooks":{}}\n', 'a.txt': 'a\n' });
    const msg = shell(repo, `echo '{"disableAllHooks":true}' > .claude/settings.json`, () =>
      repo.write('.claude/settings.json', '{"disableAllHooks":true}\n'),
    );
    expect(msg).toMatch(/also changed what guards this repository: \.claude\/settings\.json/);
  });

  it('the local settings (git-ignored) deleted through the shell are reported and kept', () => {
    const repo = makeRepo({ '.gitignore': '.claude/settings.local.json\n', 'a.txt': 'a\n' });
    repo.write('.claude/settings.local.json', '{"hooks":{"PreToolUse":[]}}\n');
    const msg = shell(repo, 'rm .claude/settings.local.json', () =>
      rmSync(path.join(repo.dir, '.claude/settings.local.json')),
    );
    expect(msg).toMatch(
      /also changed what guards this repository: [^.]*\.claude\/settings\.local\.json/,
    );
    expect(msg).toContain('.claude/settings.local.json (ignored, removed)');
  });
});
