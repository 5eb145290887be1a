/**
 * The gate's integrity (issue 13, items 1, 3-8): each test performs the
 * attack the way an agent would (real git commands, the built CLI, the real
 * hooks that `guard init` installs) and asserts through git and the file
 * system that nothing destructive got in. docs/reliability/backdoors.md
 * lists each with what a local gate can and cannot stop.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  cleanupRepos,
  installGuard,
  laneWrite,
  lines,
  startLane,
  type TestRepo,
} from '../helpers.js';

import { AUTO, BIG, bigAt, drop, head, laneGit, repoWithBig } from './backdoors-shared.js';

afterAll(cleanupRepos);

describe('1. the lane cannot move its own base or policy', () => {
  it('refs/guard/lanes/NAME pointed at a commit with a loose config: review still measures against main and blocks the deletion', () => {
    const repo = repoWithBig();
    const lane = startLane(repo, 'agent');
    // the agent makes a commit of its own: HEAD's tree with a config that allows anything
    laneWrite(lane, 'guard.config.json', JSON.stringify({ lineThreshold: 1000000 }) + '\n');
    laneGit(lane, ['add', 'guard.config.json']);
    const tree = laneGit(lane, ['write-tree']).stdout.trim();
    const forged = laneGit(
      lane,
      ['commit-tree', tree, '-p', 'HEAD', '-m', 'base'],
      {},
    ).stdout.trim();
    laneGit(lane, ['reset', '-q', 'HEAD', '--', 'guard.config.json']);
    laneGit(lane, ['checkout', '--', 'guard.config.json']);
    expect(laneGit(lane, ['update-ref', 'refs/guard/lanes/agent', forged]).code).toBe(0);
    expect(head(repo, 'refs/guard/lanes/agent')).toBe(forged);
    // then deletes the 200-line file
    laneGit(lane, ['rm', '-q', 'big.txt']);

    const { code, json } = repo.guardJson(['review', 'agent', '--auto']);
    expect(code).toBe(1);
    expect(json.base).toBe(head(repo));
    expect(json.files.find((f: any) => f.path === 'big.txt')).toMatchObject({
      status: 'delete',
      decision: 'blocked',
    });
    expect(repo.read('big.txt')).toBe(BIG);
    expect(repo.git(['diff', '--cached', '--name-only'])).toBe('');
    // guard lanes shows the base from main's history too
    expect(repo.guardJson(['lanes']).json.lanes[0].base).toBe(head(repo));
  });
});

describe('1. interactively too', () => {
  it('review at a terminal asks about the deletion although the lane loosened its own ref and policy', async () => {
    const { makeRepo } = await import('../helpers.js');
    const { spawnGuard } = await import('../pty.js');
    const repo = makeRepo({ 'big.txt': BIG, 'a.txt': 'a\n' });
    const lane = startLane(repo, 'agent');
    laneWrite(lane, 'guard.config.json', JSON.stringify({ lineThreshold: 1000000 }) + '\n');
    laneGit(lane, ['add', 'guard.config.json']);
    const forged = laneGit(lane, [
      'commit-tree',
      laneGit(lane, ['write-tree']).stdout.trim(),
      '-p',
      'HEAD',
      '-m',
      'base',
    ]).stdout.trim();
    laneGit(lane, ['rm', '-q', '--cached', 'guard.config.json']);
    spawnSync('rm', [path.join(lane, 'guard.config.json')]);
    laneGit(lane, ['update-ref', 'refs/guard/lanes/agent', forged]);
    laneGit(lane, ['rm', '-q', 'big.txt']);
    const s = spawnGuard(['review', 'agent'], repo.dir);
    const screen = await s.waitFor(/Take this hunk \[[^\]]*\]\? $/);
    expect(screen).toMatch(/big\.txt\s+delete/);
    s.type('n\r');
    const rest = await s.waitFor(/Merge now \[y,n\]\? $|\$ $/).catch(() => '');
    if (/Merge now/.test(rest)) s.type('y\r');
    await s.exit;
    expect(repo.read('big.txt')).toBe(BIG);
    expect(repo.git(['diff', '--cached', '--name-only'])).toBe('');
  }, 60_000);
});

describe('3. staging during the hook', () => {
  it('a deletion staged after guard check ran (before git reads the index again) is not committed', () => {
    const repo = repoWithBig();
    // what a concurrent agent does in the window, made deterministic: staged right after guard check returns
    appendFileSync(path.join(repo.dir, '.husky', 'pre-commit'), 'git rm -q --cached big.txt\n');
    repo.write('a.txt', 'a\nb\n');
    repo.git(['add', 'a.txt']);
    const before = head(repo);
    const r = repo.gitRun(['commit', '-q', '-m', 'small change'], AUTO);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('big.txt');
    expect(head(repo)).toBe(before);
    expect(bigAt(repo)).toBe(BIG);
  });
});

describe('4. no approval through the environment', () => {
  function stageDeletion(repo: TestRepo): void {
    repo.git(['rm', '-q', 'big.txt']);
  }
  const recordMessage = (blob: string | null) =>
    `guard review: 1 approved\n\n${JSON.stringify({
      v: 1,
      kind: 'decisions',
      command: 'review',
      lane: 'agent',
      time: new Date().toISOString(),
      base: null,
      decisions: [
        {
          path: 'big.txt',
          status: 'delete',
          existingLines: 200,
          linesAdded: 0,
          linesDeleted: 200,
          changeRatio: 1,
          needsApproval: true,
          reasons: [],
          decision: 'approved',
          decider: 'person',
          ...(blob ? { blob } : {}),
        },
      ],
    })}\n`;

  it('a hand-made record named in GUARD_APPROVED_RECORD does not approve anything', () => {
    const repo = repoWithBig();
    stageDeletion(repo);
    const empty = repo.git(['hash-object', '-t', 'tree', '--stdin', '-w'], { input: '' }).trim();
    const record = repo.git(['commit-tree', empty], { input: recordMessage(null) }).trim();
    const before = head(repo);
    const r = repo.gitRun(['commit', '-q', '-m', 'approved, honest'], {
      ...AUTO,
      GUARD_APPROVED_RECORD: record,
    });
    expect(r.code).not.toBe(0);
    expect(head(repo)).toBe(before);
    expect(bigAt(repo)).toBe(BIG);
    // nor one hung under refs/guard/decisions/ by hand with another identity
    repo.git(['update-ref', 'refs/guard/decisions/20990101T000000Z-00000000', record]);
    expect(
      repo.gitRun(['commit', '-q', '-m', 'approved, honest'], {
        ...AUTO,
        GUARD_APPROVED_RECORD: record,
      }).code,
    ).not.toBe(0);
    expect(head(repo)).toBe(before);
    const log = repo.guardJson(['log']).json.entries.filter((e: any) => e.kind === 'decision');
    expect(
      log
        .flatMap((e: any) => e.decisions ?? e.files ?? [])
        .filter(
          (d: any) => d.path === 'big.txt' && d.decision === 'approved' && d.decider === 'person',
        ),
    ).toEqual([]);
  });

  it('guard review --commit still commits what the person approved (through both hooks)', () => {
    const repo = repoWithBig();
    const lane = startLane(repo, 'agent');
    laneGit(lane, ['rm', '-q', 'big.txt']);
    const decisions = path.join(repo.dir, '.git', 'decisions.json');
    writeFileSync(decisions, JSON.stringify([{ path: 'big.txt', action: 'approve' }]));
    const before = head(repo);
    const { code, json } = repo.guardJson([
      'review',
      'agent',
      '--decisions',
      decisions,
      '--commit',
      '-m',
      'drop big.txt',
    ]);
    expect(json.commitFailed).toBeUndefined();
    expect(code).toBe(0);
    expect(head(repo, 'HEAD^')).toBe(before);
    expect(repo.gitRun(['cat-file', '-e', 'HEAD:big.txt']).code).not.toBe(0);
  });
});

describe('5. amend and squash are measured against the commit before them', () => {
  it('three amends that each delete a little do not add up to an unapproved rewrite', () => {
    const repo = repoWithBig();
    const parent = head(repo);
    let text = BIG;
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      text = drop(text, 59);
      repo.write('big.txt', text);
      const args =
        i === 0 ? ['commit', '-q', '-am', 'trim'] : ['commit', '-q', '--amend', '-am', 'trim'];
      codes.push(repo.gitRun(args, AUTO).code);
    }
    expect(codes[0]).toBe(0);
    expect(codes.slice(1).every((c) => c !== 0)).toBe(true);
    expect(head(repo, 'HEAD^')).toBe(parent);
    expect(bigAt(repo).split('\n').length - 1).toBeGreaterThanOrEqual(140);
  });

  it('a squash through reset --soft is measured as a whole', () => {
    const repo = repoWithBig();
    const start = head(repo);
    let text = BIG;
    for (let i = 0; i < 3; i++) {
      text = drop(text, 40);
      repo.write('big.txt', text);
      // the third small step is already refused: the day's commits add up (issue 20, step by step)
      const r = repo.gitRun(['commit', '-q', '-am', `trim ${i}`], AUTO);
      if (i < 2) expect(r.code).toBe(0);
      else expect(r.stderr).toContain('step by step');
    }
    // the squash into one commit on top of start is 120 of 200 lines
    repo.git(['add', 'big.txt']);
    repo.git(['reset', '-q', '--soft', start]);
    const r = repo.gitRun(['commit', '-q', '-m', 'squashed'], AUTO);
    expect(r.code).not.toBe(0);
    expect(head(repo)).toBe(start);
    expect(bigAt(repo)).toBe(BIG);
  });
});

describe('6. every way a branch moves is checked', () => {
  function destructive(repo: TestRepo): void {
    repo.write('big.txt', 'gone\n');
    repo.git(['add', 'big.txt']);
  }

  it('--no-verify and HUSKY=0 commits are refused', () => {
    const repo = repoWithBig();
    const before = head(repo);
    destructive(repo);
    expect(repo.gitRun(['commit', '-q', '--no-verify', '-m', 'x'], AUTO).code).not.toBe(0);
    expect(repo.gitRun(['commit', '-q', '-m', 'x'], { ...AUTO, HUSKY: '0' }).code).not.toBe(0);
    expect(head(repo)).toBe(before);
    expect(bigAt(repo)).toBe(BIG);
  });

  it("a lane's --no-verify commit does not reach main through git merge (fast-forward or merge commit)", () => {
    const repo = repoWithBig();
    const lane = startLane(repo, 'agent');
    // in the lane the same gate refuses it; with every hook off it gets onto the lane's branch
    laneWrite(lane, 'big.txt', 'gone\n');
    expect(laneGit(lane, ['commit', '-q', '--no-verify', '-am', 'agent']).code).not.toBe(0);
    expect(
      laneGit(lane, [
        '-c',
        'core.hooksPath=/dev/null',
        'commit',
        '-q',
        '--no-verify',
        '-am',
        'agent',
      ]).code,
    ).toBe(0);
    const before = head(repo);
    expect(repo.gitRun(['merge', '-q', '--ff-only', 'guard/agent'], AUTO).code).not.toBe(0);
    expect(head(repo)).toBe(before);
    // git wrote the work tree before the refused ref update
    repo.git(['reset', '-q', '--hard', 'HEAD']);
    repo.write('a.txt', 'a\nmain moved\n');
    expect(repo.gitRun(['commit', '-q', '-am', 'main work'], AUTO).code).toBe(0);
    const moved = head(repo);
    const merge = repo.gitRun(['merge', '-q', '--no-ff', '-m', 'merge agent', 'guard/agent'], AUTO);
    expect(merge.code).not.toBe(0);
    repo.gitRun(['merge', '--abort']);
    expect(head(repo)).toBe(moved);
    expect(bigAt(repo)).toBe(BIG);
  });

  it('update-ref, reset, checkout -B, cherry-pick, branch -f to a commit made with commit-tree, and rebase are refused', () => {
    const repo = repoWithBig();
    const before = head(repo);
    destructive(repo);
    const tree = repo.git(['write-tree']).trim();
    repo.git(['reset', '-q', 'HEAD', '--', 'big.txt']);
    repo.git(['checkout', '--', 'big.txt']);
    const evil = repo.git(['commit-tree', tree, '-p', 'HEAD', '-m', 'evil'], { input: '' }).trim();
    expect(repo.gitRun(['update-ref', 'refs/heads/main', evil], AUTO).code).not.toBe(0);
    expect(repo.gitRun(['update-ref', 'refs/heads/main', evil, before], AUTO).code).not.toBe(0);
    expect(repo.gitRun(['reset', '-q', '--hard', evil], AUTO).code).not.toBe(0);
    // git rewrote the work tree and index before the refused ref update: HEAD did not move, so put them back
    expect(head(repo)).toBe(before);
    repo.git(['reset', '-q', '--hard', 'HEAD']);
    expect(repo.gitRun(['checkout', '-q', '-B', 'main', evil], AUTO).code).not.toBe(0);
    repo.git(['checkout', '-q', '-f', 'main']);
    expect(repo.gitRun(['cherry-pick', evil], AUTO).code).not.toBe(0);
    repo.gitRun(['cherry-pick', '--abort']);
    repo.git(['reset', '-q', '--hard', 'HEAD']);
    expect(head(repo)).toBe(before);
    repo.git(['branch', 'side', before]);
    expect(repo.gitRun(['branch', '-f', 'side', evil], AUTO).code).not.toBe(0);
    expect(head(repo, 'side')).toBe(before);
    // a rebase that replays the evil commit onto main
    repo.git(['-c', 'core.hooksPath=/dev/null', 'branch', 'topic', evil]);
    repo.write('a.txt', 'a\nmore\n');
    expect(repo.gitRun(['commit', '-q', '-am', 'main work'], AUTO).code).toBe(0);
    const moved = head(repo);
    const rebase = repo.gitRun(['rebase', '-q', 'topic'], AUTO);
    expect(rebase.code).not.toBe(0);
    repo.gitRun(['rebase', '--abort']);
    expect(head(repo, 'main')).toBe(moved);
    expect(bigAt(repo, 'main')).toBe(BIG);
  });

  it('moving past every hook is reported by the next guard command and by doctor, and the next move is refused', () => {
    const repo = repoWithBig();
    destructive(repo);
    expect(
      repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'past it'], AUTO).code,
    ).toBe(0);
    const bypassed = head(repo);
    const check = repo.guard(['check']);
    expect(check.stderr).toMatch(/past this gate .* big\.txt/);
    const doctor = repo.guardJson(['doctor']).json;
    expect(doctor.checks.find((c: any) => c.id === 'branch-bypass')).toMatchObject({
      severity: 'warning',
    });
    expect(doctor.checks.find((c: any) => c.id === 'branch-bypass').message).toContain('big.txt');
    repo.write('a.txt', 'a\nnext\n');
    expect(repo.gitRun(['commit', '-q', '-am', 'next'], AUTO).code).not.toBe(0);
    expect(head(repo)).toBe(bypassed);
  });
});

describe('7. the warning cannot be silenced', () => {
  it('not by a Guard-Approved line, one more commit on top, or a line in .git/guard-checked-trees', () => {
    const repo = repoWithBig();
    destructive(repo);
    const blob = repo.git(['hash-object', 'big.txt']).trim();
    const off = ['-c', 'core.hooksPath=/dev/null'];
    expect(
      repo.gitRun([...off, 'commit', '-q', '-m', `x\n\nGuard-Approved: big.txt ${blob}`], AUTO)
        .code,
    ).toBe(0);
    repo.write('a.txt', 'a\non top\n');
    expect(repo.gitRun([...off, 'commit', '-q', '-am', 'on top'], AUTO).code).toBe(0);
    appendFileSync(
      path.join(repo.dir, '.git', 'guard-checked-trees'),
      repo.git(['rev-parse', 'HEAD^{tree}']),
    );
    appendFileSync(
      path.join(repo.dir, '.git', 'guard-checked-trees'),
      repo.git(['rev-parse', 'HEAD^^{tree}']),
    );
    for (let i = 0; i < 2; i++) {
      const json = repo.guardJson(['check']).json;
      expect(json.bypassed?.paths).toEqual(['big.txt']);
    }
  });

  function destructive(repo: TestRepo): void {
    repo.write('big.txt', 'gone\n');
    repo.git(['add', 'big.txt']);
  }
});

describe('8. doctor says "active" only when the hook really blocks', () => {
  const HOOKS: Record<string, string> = {
    'an early exit 0': 'exit 0\nguard check\n',
    '|| true': 'guard check || true\n',
    'in the background': 'guard check &\n',
    echoed: 'echo guard check\n',
    'inside a heredoc': 'cat <<EOF >/dev/null\nguard check\nEOF\n',
    'under if false': 'if false; then\n  guard check\nfi\n',
    'piped (the pipeline ends with the status of cat)': 'guard check | cat\n',
  };
  for (const [name, script] of Object.entries(HOOKS)) {
    it(`guard check ${name}: not active, and git indeed commits past it when the branch gate is gone`, () => {
      const repo = repoWithBig();
      writeFileSync(path.join(repo.dir, '.husky', 'pre-commit'), script);
      const { code, json } = repo.guardJson(['doctor']);
      expect(code).toBe(1);
      expect(json.active).toBe(false);
      expect(json.checks.find((c: any) => c.id === 'hook')).toMatchObject({
        ok: false,
        severity: 'error',
      });
    });
  }

  it('a hook that does block, written oddly, is active; the probe leaves the index alone', () => {
    const repo = repoWithBig();
    writeFileSync(
      path.join(repo.dir, '.husky', 'pre-commit'),
      'G=guard\nset -e\n"$G" check --quiet\n',
    );
    repo.write('a.txt', 'staged\n');
    repo.git(['add', 'a.txt']);
    const index = readFileSync(path.join(repo.dir, '.git', 'index'));
    const { code, json } = repo.guardJson(['doctor']);
    expect(json.checks.find((c: any) => c.id === 'hook')).toMatchObject({ ok: true });
    expect(json.checks.find((c: any) => c.id === 'branch-gate')).toMatchObject({ ok: true });
    expect(code).toBe(0);
    expect(readFileSync(path.join(repo.dir, '.git', 'index')).equals(index)).toBe(true);
    expect(repo.git(['diff', '--cached', '--name-only']).trim()).toBe('a.txt');
  });

  it('HUSKY=0 with the branch gate removed is an error, not a warning', () => {
    const repo = repoWithBig();
    chmodSync(path.join(repo.dir, '.husky', '_', 'reference-transaction'), 0o644);
    const { code, json } = repo.guardJson(['doctor'], { env: { HUSKY: '0' } });
    expect(code).toBe(1);
    expect(json.checks.find((c: any) => c.id === 'husky-env')).toMatchObject({ severity: 'error' });
  });
});

/* New attacks tried beyond the issue (docs/reliability/backdoors.md lists them all). */
