import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  fixture,
  installGuard,
  lanePath,
  lines,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/** git in a lane, as an agent would run it. */
function laneGit(
  repo: TestRepo,
  name: string,
  args: string[],
  env: Record<string, string | undefined> = {},
) {
  const r = spawnSync('git', args, {
    cwd: lanePath(repo, name),
    env: cleanEnv(env),
    detached: true,
  } as Parameters<typeof spawnSync>[2]); // detached: no controlling terminal, as an agent runs
  return { code: r.status ?? 128, out: r.stdout.toString() + r.stderr.toString() };
}

/** Everything that makes a lane exist, as git sees it. */
function laneState(repo: TestRepo) {
  return {
    refs: repo.git(['for-each-ref', '--format=%(refname)', 'refs/heads/', 'refs/guard/lanes/']),
    worktrees: repo.git(['worktree', 'list', '--porcelain']),
    status: repo.git(['status', '--porcelain', '--ignored']),
  };
}

describe('guard start', () => {
  it('creates the worktree, the branch, the base ref and the exclude entry, and leaves the main tree clean', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const { code, json } = repo.guardJson(['start', 'agent-1']);
    expect(code).toBe(0);
    const p = lanePath(repo, 'agent-1');
    expect(json).toMatchObject({
      ok: true,
      command: 'start',
      name: 'agent-1',
      path: p,
      branch: 'guard/agent-1',
      base: head,
    });
    expect(repo.git(['worktree', 'list', '--porcelain'])).toContain(`worktree ${p}\n`);
    expect(repo.git(['rev-parse', 'refs/heads/guard/agent-1']).trim()).toBe(head);
    expect(repo.git(['rev-parse', 'refs/guard/lanes/agent-1']).trim()).toBe(head);
    expect(repo.git(['-C', p, 'symbolic-ref', 'HEAD']).trim()).toBe('refs/heads/guard/agent-1');
    expect(repo.read('.git/info/exclude')).toMatch(/^\/\.guard\/$/m);
    expect(repo.git(['status', '--porcelain'])).toBe('');
    expect(repo.git(['symbolic-ref', 'HEAD']).trim()).toBe('refs/heads/main');
  });

  it('prints only the path on stdout, so cd "$(guard start x)" works', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['start', 'x']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(lanePath(repo, 'x') + '\n');
    expect(r.stderr).toContain('guard review x');
  });

  it('starts from --from and keeps that base while main moves on', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const first = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('b.txt', 'b\n');
    repo.commitAll('second');
    expect(repo.guardJson(['start', 'old', '--from', 'HEAD~1']).json.base).toBe(first);
    expect(repo.read('.guard/lanes/old/a.txt')).toBe('a\n');
    expect(existsSync(path.join(lanePath(repo, 'old'), 'b.txt'))).toBe(false);
    repo.write('c.txt', 'c\n');
    repo.commitAll('main moves on');
    const { json } = repo.guardJson(['lanes']);
    expect(json.lanes).toEqual([
      expect.objectContaining({
        name: 'old',
        base: first,
        filesChanged: 0,
        needsApproval: 0,
        broken: false,
      }),
    ]);
  });

  it('refuses a taken name with exit 1 and changes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expect(repo.guard(['start', 'dup']).code).toBe(0);
    writeFileSync(path.join(lanePath(repo, 'dup'), 'work.txt'), 'agent work\n');
    const before = laneState(repo);
    const { code, json } = repo.guardJson(['start', 'dup']);
    expect(code).toBe(1);
    expect(json).toEqual({
      ok: false,
      error: {
        code: 'E_LANE_EXISTS',
        message: 'lane "dup" already exists',
        hint: expect.stringContaining('guard discard dup'),
      },
    });
    expect(laneState(repo)).toEqual(before);
    expect(repo.read('.guard/lanes/dup/work.txt')).toBe('agent work\n');
  });

  it("refuses a name whose branch guard/NAME is already someone else's", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.git(['branch', 'guard/mine']);
    const before = laneState(repo);
    const { code, json } = repo.guardJson(['start', 'mine']);
    expect(code).toBe(1);
    expect(json.error.code).toBe('E_LANE_EXISTS');
    expect(laneState(repo)).toEqual(before);
  });

  it.each(['../x', 'a/b', '.hidden', 'a..b', 'x.lock', 'sp ace', 'x:y', 'trailing.'])(
    'refuses the invalid name %j with exit 2 and creates nothing',
    (name) => {
      const repo = makeRepo({ 'a.txt': 'a\n' });
      const before = laneState(repo);
      const { code, json } = repo.guardJson(['start', name]);
      expect(code).toBe(2);
      expect(json.ok).toBe(false);
      expect(json.error.code).toBe('E_USAGE');
      expect(json.error.message).toContain('invalid lane name');
      expect(laneState(repo)).toEqual(before);
      expect(existsSync(path.join(repo.dir, '.guard'))).toBe(false);
      expect(repo.refs()).toEqual([]);
    },
  );

  it('refuses a --from that is not a commit, creating nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const before = laneState(repo);
    const { code, json } = repo.guardJson(['start', 'x', '--from', 'no-such-branch']);
    expect(code).toBe(2);
    expect(json.error).toMatchObject({
      code: 'E_USAGE',
      message: 'cannot start from "no-such-branch": not a commit',
    });
    expect(laneState(repo)).toEqual(before);
    expect(repo.refs()).toEqual([]);
  });

  it('leaves nothing half created when git cannot make the worktree', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    mkdirSync(path.join(repo.dir, '.guard'));
    writeFileSync(
      path.join(repo.dir, '.guard', 'lanes'),
      'a file where the lanes folder should be\n',
    );
    const r = repo.guardJson(['start', 'x']);
    expect(r.code).not.toBe(0);
    expect(r.json.ok).toBe(false);
    expect(repo.refs('refs/guard/lanes/')).toEqual([]);
    expect(repo.git(['branch', '--list', 'guard/*'])).toBe('');
    expect(repo.git(['worktree', 'list', '--porcelain']).match(/^worktree /gm)).toHaveLength(1);
  });

  it('finds the main tree when run from inside a lane', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expect(repo.guard(['start', 'one']).code).toBe(0);
    const r = repo.guard(['start', 'two', '--json'], { cwd: lanePath(repo, 'one') });
    expect(JSON.parse(r.stdout).path).toBe(lanePath(repo, 'two'));
    const listed = JSON.parse(
      repo.guard(['lanes', '--json'], { cwd: lanePath(repo, 'two') }).stdout,
    );
    expect(listed.lanes.map((l: { name: string }) => l.name)).toEqual(['one', 'two']);
  });
});

describe('guard run', () => {
  it('runs the command in the lane, passes its exit code on and checkpoints the lane although it failed', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'big.txt': lines(300) });
    const r = repo.guard([
      'run',
      'agent',
      '--',
      'sh',
      '-c',
      'pwd; seq 1 10 > big.txt; echo made > new.txt; exit 7',
    ]);
    expect(r.code).toBe(7);
    const p = lanePath(repo, 'agent');
    expect(r.stdout.split('\n')[0]).toBe(p);
    // written in the lane, not in the main tree
    expect(repo.read('.guard/lanes/agent/new.txt')).toBe('made\n');
    expect(existsSync(path.join(repo.dir, 'new.txt'))).toBe(false);
    expect(repo.read('big.txt')).toBe(lines(300));
    // the lane's checkpoint holds the untracked file and the rewrite (the other one is the main tree's, taken before)
    const refs = repo
      .refs('refs/guard/checkpoints/')
      .filter((ref) => repo.git(['log', '-1', '--format=%s', ref]).includes('after guard run'));
    expect(refs).toHaveLength(1);
    expect(repo.git(['show', `${refs[0]}:new.txt`])).toBe('made\n');
    expect(repo.git(['show', `${refs[0]}:big.txt`]).split('\n')).toHaveLength(11);
    // the summary
    expect(r.stdout).toContain(
      'guard: lane agent: the command exited with 7; 2 files changed since',
    );
    expect(r.stdout).toContain('1 needs approval');
    expect(r.stdout).toMatch(/replace\s+big\.txt\s+needs approval: replaces/);
    expect(r.stdout).toMatch(/new\s+new\.txt/);
    expect(r.stdout).toContain('next: guard review agent');
  });

  it('reuses an existing lane and keeps --json stdout to one document', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const start = repo.guardJson(['start', 'l']).json;
    const r = repo.guard(['run', 'l', '--json', '--', 'sh', '-c', 'echo noise; echo b >> a.txt']);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(r.stderr).toContain('noise');
    expect(json).toMatchObject({
      ok: true,
      command: 'run',
      name: 'l',
      created: false,
      base: start.base,
      exitCode: 0,
      signal: null,
      filesChanged: 1,
      needsApproval: 0,
    });
    expect(json.files[0]).toMatchObject({ path: 'a.txt', status: 'modify', linesAdded: 1 });
    expect(repo.git(['show', `${json.checkpoint.ref}:a.txt`])).toBe('a\nb\n');
  });

  it('passes a signal on to the command and still checkpoints', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const script =
      'trap "echo interrupted > after.txt; exit 5" TERM; echo started > before.txt; echo ready; while :; do sleep 0.05; done';
    const child = spawn(process.execPath, [CLI, 'run', 'sig', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true' }),
    });
    let stdout = '';
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (b: Buffer) => {
        stdout += b.toString();
        if (stdout.includes('ready')) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    await ready;
    child.kill('SIGTERM');
    expect(await exited).toBe(5);
    expect(stdout).toContain('the command exited with 5');
    const [ref] = repo
      .refs('refs/guard/checkpoints/')
      .filter((r) => repo.git(['log', '-1', '--format=%s', r]).includes('after guard run')); // not the main tree's
    expect(repo.git(['show', `${ref}:after.txt`])).toBe('interrupted\n');
    expect(repo.git(['show', `${ref}:before.txt`])).toBe('started\n');
  });

  it('passes SIGINT on when there is no terminal to have sent it', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const script =
      'trap "echo int > after.txt; exit 130" INT; echo ready; while :; do sleep 0.05; done';
    const child = spawn(process.execPath, [CLI, 'run', 'int', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true' }),
    });
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (b: Buffer) => b.toString().includes('ready') && resolve()),
    );
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    await ready;
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const [ref] = repo
      .refs('refs/guard/checkpoints/')
      .filter((r) => repo.git(['log', '-1', '--format=%s', r]).includes('after guard run')); // not the main tree's
    expect(repo.git(['show', `${ref}:after.txt`])).toBe('int\n');
  });

  it('reports a command that does not exist as a usage error', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['run', 'x', '--json', '--', 'no-such-command-here']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'E_USAGE',
      message: 'cannot run "no-such-command-here": not found',
    });
    expect(repo.guardJson(['run', 'y']).json.error.message).toBe('no command to run');
    // a lane made for a command that never started is removed again (issue 13 item 26)
    expect(repo.refs('refs/guard/lanes/')).toEqual([]);
  });
});

describe('guard lanes', () => {
  it('counts committed, uncommitted and untracked changes, and what needs approval', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'state.py': fixture('state.py') });
    expect(repo.guardJson(['lanes']).json).toEqual({ ok: true, command: 'lanes', lanes: [] });
    repo.guard(['start', 'busy']);
    repo.guard(['start', 'idle']);
    const p = lanePath(repo, 'busy');
    writeFileSync(path.join(p, 'a.txt'), 'a changed\n');
    expect(laneGit(repo, 'busy', ['commit', '-q', '--no-verify', '-am', 'agent commit']).code).toBe(
      0,
    );
    writeFileSync(path.join(p, 'b.txt'), 'b changed\n');
    writeFileSync(path.join(p, 'untracked.txt'), 'new\n');
    writeFileSync(path.join(p, 'state.py'), fixture('state_replacement.py'));
    const { code, json } = repo.guardJson(['lanes']);
    expect(code).toBe(0);
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    expect(json.lanes).toEqual([
      {
        name: 'busy',
        path: p,
        branch: 'guard/busy',
        base,
        filesChanged: 4,
        needsApproval: 1,
        broken: false,
      },
      {
        name: 'idle',
        path: lanePath(repo, 'idle'),
        branch: 'guard/idle',
        base,
        filesChanged: 0,
        needsApproval: 0,
        broken: false,
      },
    ]);
    // measuring again with nothing changed reuses the checkpoint
    const count = repo.refs('refs/guard/checkpoints/').length;
    repo.guardJson(['lanes']);
    expect(repo.refs('refs/guard/checkpoints/')).toHaveLength(count);
    const human = repo.guard(['lanes']);
    expect(human.stdout).toMatch(/^LANE\s+BASE\s+FILES\s+APPROVAL\s+PATH$/m);
    expect(human.stdout).toMatch(/^busy\s+[0-9a-f]{10}\s+4\s+1\s+\.guard\/lanes\/busy$/m);
  });

  it('runs a constant number of git processes per lane', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const count = (n: number) => {
      for (let i = 0; i < n; i++) {
        const name = `l${repo.refs('refs/guard/lanes/').length}`;
        repo.guard(['start', name]);
        for (let f = 0; f < 20; f++)
          writeFileSync(path.join(lanePath(repo, name), `f${f}.txt`), `${f}\n`);
      }
      const trace = path.join(repo.dir, '.git', `trace-${n}`);
      repo.guard(['lanes'], { env: { GUARD_TRACE_GIT: trace } });
      const calls = spawnSync('wc', ['-l', trace]).stdout.toString();
      rmSync(trace);
      return Number(calls.trim().split(' ')[0]);
    };
    const one = count(1);
    const three = count(2); // now three lanes, with 20 files each
    // 16, plus the two a checkpoint spends keeping raw bytes when files were hashed anew (diff-tree, ls-files --eol)
    expect(one).toBeLessThanOrEqual(18);
    expect(three - one).toBeLessThanOrEqual(2 * (one - 3));
  });
});

describe('hooks in a lane', () => {
  /** A repository with guard installed by `guard init` (husky, relative core.hooksPath). */
  function installed() {
    const repo = installGuard({ 'state.py': fixture('state.py'), 'small.py': fixture('small.py') });
    return repo;
  }

  it('blocks an agent commit that rewrites a large file, with no terminal (auto mode)', () => {
    const repo = installed();
    expect(repo.guard(['start', 'agent']).code).toBe(0);
    const p = lanePath(repo, 'agent');
    expect(existsSync(path.join(p, '.husky', '_', 'pre-commit'))).toBe(true);
    expect(repo.git(['-C', p, 'status', '--porcelain'])).toBe('');
    // guard installed globally, as far as the lane can see: a bin folder on PATH
    const bin = path.join(repo.dir, '.git', 'test-bin');
    mkdirSync(bin);
    symlinkSync(CLI, path.join(bin, 'guard'));
    const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}`, CI: undefined };

    writeFileSync(path.join(p, 'state.py'), fixture('state_replacement.py'));
    const blocked = laneGit(repo, 'agent', ['commit', '-q', '-am', 'agent: simplify state'], env);
    expect(blocked.code).not.toBe(0);
    expect(blocked.out).toContain('guard: blocked 1 change');
    expect(repo.git(['log', '--format=%s', 'guard/agent'])).not.toContain('agent: simplify state');
    const [rejected] = repo.refs('refs/guard/rejected/');
    expect(repo.git(['show', `${rejected}:state.py`])).toBe(fixture('state_replacement.py'));
    // the decision knows its lane
    expect(repo.git(['log', '-1', '--format=%B', rejected!])).toContain('"lane":"agent"');

    laneGit(repo, 'agent', ['checkout', '--', 'state.py']);
    writeFileSync(path.join(p, 'small.py'), fixture('small.py') + '# one more line\n');
    const ok = laneGit(repo, 'agent', ['commit', '-q', '-am', 'agent: small change'], env);
    expect(ok.out).toBe('');
    expect(ok.code).toBe(0);
    expect(repo.git(['log', '-1', '--format=%s', 'guard/agent']).trim()).toBe(
      'agent: small change',
    );
  });

  it('under guard run the hook finds the guard installed in the main tree', () => {
    const repo = installed();
    // node_modules/.bin/guard exists only in the main tree (the lane has no node_modules)
    const r = repo.guard(
      [
        'run',
        'agent',
        '--',
        'sh',
        '-c',
        'echo short > state.py && git commit -q -am "agent: rewrite"',
      ],
      { env: { CI: 'true' } },
    );
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('guard: blocked 1 change');
    expect(repo.git(['log', '--format=%s', 'guard/agent'])).not.toContain('agent: rewrite');
    expect(r.stdout).toMatch(/replace\s+state\.py\s+needs approval/);
  });

  it('does nothing special when the repository has no hooksPath', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guardJson(['start', 'x']).json.hooks).toBeNull();
    expect(existsSync(path.join(lanePath(repo, 'x'), '.husky'))).toBe(false);
  });
});

describe('guard discard', () => {
  it("removes worktree, branch and base ref; the lane's commits and files (untracked too) stay in a checkpoint", () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    repo.guard(['start', 'gone']);
    const p = lanePath(repo, 'gone');
    writeFileSync(path.join(p, 'a.txt'), 'committed\n');
    laneGit(repo, 'gone', ['commit', '-q', '--no-verify', '-am', 'agent commit']);
    const laneCommit = repo.git(['rev-parse', 'guard/gone']).trim();
    writeFileSync(path.join(p, 'b.txt'), 'uncommitted\n');
    writeFileSync(path.join(p, 'untracked.txt'), 'untracked\n');

    const { code, json } = repo.guardJson(['discard', 'gone']);
    expect(code).toBe(0);
    expect(json).toMatchObject({
      ok: true,
      command: 'discard',
      name: 'gone',
      path: p,
      branch: 'guard/gone',
      broken: false,
    });
    expect(existsSync(p)).toBe(false);
    expect(repo.git(['worktree', 'list', '--porcelain'])).not.toContain(p);
    expect(repo.git(['branch', '--list', 'guard/*'])).toBe('');
    expect(repo.refs('refs/guard/lanes/')).toEqual([]);
    expect(repo.git(['status', '--porcelain'])).toBe('');

    const cp = json.checkpoint;
    expect(repo.refs('refs/guard/checkpoints/')).toContain(cp.ref);
    expect(repo.git(['rev-parse', cp.ref]).trim()).toBe(cp.commit);
    expect(repo.git(['show', `${cp.commit}:a.txt`])).toBe('committed\n');
    expect(repo.git(['show', `${cp.commit}:b.txt`])).toBe('uncommitted\n');
    expect(repo.git(['show', `${cp.commit}:untracked.txt`])).toBe('untracked\n');
    expect(repo.gitRun(['merge-base', '--is-ancestor', laneCommit, cp.commit]).code).toBe(0);
    // and it can be brought back as a branch
    repo.git(['branch', 'back', cp.commit]);
    expect(repo.git(['show', 'back:untracked.txt'])).toBe('untracked\n');
  });

  it('tells a person how to get the lane back', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.guard(['start', 'x']);
    writeFileSync(path.join(lanePath(repo, 'x'), 'a.txt'), 'changed\n');
    writeFileSync(path.join(lanePath(repo, 'x'), '.gitignore'), '*.log\n');
    writeFileSync(path.join(lanePath(repo, 'x'), 'debug.log'), 'ignored\n');
    const r = repo.guard(['discard', 'x']);
    expect(r.code).toBe(0);
    const [ref] = repo.refs('refs/guard/checkpoints/');
    const id = ref!.slice('refs/guard/checkpoints/'.length);
    const commit = repo.git(['rev-parse', ref!]).trim();
    expect(r.stdout).toBe(
      [
        'guard: discarded lane x (worktree, branch guard/x)',
        `its last state is kept as checkpoint ${id}`,
        `  see what it held:        git show --stat ${commit}`,
        `  get it back as a branch: git branch x ${commit}`,
        'not kept (ignored by git, never in a checkpoint): debug.log',
        '',
      ].join('\n'),
    );
    // the printed command works
    repo.git(['branch', 'x', commit]);
    expect(repo.git(['show', 'x:a.txt'])).toBe('changed\n');
  });

  it('an unknown lane is exit 2, E_NO_LANE, with a hint', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { code, json } = repo.guardJson(['discard', 'nope']);
    expect(code).toBe(2);
    expect(json).toEqual({
      ok: false,
      error: {
        code: 'E_NO_LANE',
        message: 'lane "nope" does not exist',
        hint: 'guard lanes lists them',
      },
    });
    const human = repo.guard(['discard', 'nope']);
    expect(human.stderr).toBe('guard: lane "nope" does not exist\nhint: guard lanes lists them\n');
  });

  it('handles a worktree folder deleted by hand: listed as broken, discarded with its branch tip kept', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.guard(['start', 'lost']);
    repo.guard(['start', 'fine']);
    const p = lanePath(repo, 'lost');
    writeFileSync(path.join(p, 'a.txt'), 'committed in the lane\n');
    laneGit(repo, 'lost', ['commit', '-q', '--no-verify', '-am', 'agent commit']);
    rmSync(p, { recursive: true, force: true });

    const listed = repo.guardJson(['lanes']);
    expect(listed.code).toBe(0);
    expect(listed.json.lanes).toEqual([
      expect.objectContaining({ name: 'fine', broken: false, filesChanged: 0 }),
      expect.objectContaining({ name: 'lost', broken: true, filesChanged: 1 }),
    ]);
    expect(repo.guard(['lanes']).stdout).toMatch(/^lost .*broken.*guard discard lost/m);
    const run = repo.guard(['run', 'lost', '--json', '--', 'true']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: 'E_NO_LANE',
      hint: expect.stringContaining('guard discard lost'),
    });

    const { code, json } = repo.guardJson(['discard', 'lost']);
    expect(code).toBe(0);
    expect(json.broken).toBe(true);
    expect(repo.git(['show', `${json.checkpoint.ref}:a.txt`])).toBe('committed in the lane\n');
    expect(repo.git(['worktree', 'list', '--porcelain'])).not.toContain(p);
    expect(repo.git(['branch', '--list', 'guard/lost'])).toBe('');
    expect(repo.refs('refs/guard/lanes/')).toEqual(['refs/guard/lanes/fine']);
    // the name can be used again
    expect(repo.guard(['start', 'lost']).code).toBe(0);
  });
});
