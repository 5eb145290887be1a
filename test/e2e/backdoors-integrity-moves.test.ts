/**
 * The gate's integrity (issue 13, items 1, 3-8): each test performs the
 * attack the way an agent would (real git commands, the built CLI, the real
 * hooks that `guard init` installs) and asserts through git and the file
 * system that nothing destructive got in. docs/reliability/backdoors.md
 * lists each with what a local gate can and cannot stop. (Split from
 * backdoors-integrity.test.ts so the two files run at once: from "more ways
 * to move a branch" on.)
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

describe('more ways to move a branch', () => {
  function evilCommit(repo: TestRepo): string {
    const tree = repo
      .git(['mktree'], {
        input:
          repo
            .git(['ls-tree', 'HEAD'])
            .replace(/\tbig\.txt\n/, '\tbig.txt\n')
            .split('\n')
            .filter((l) => l && !l.endsWith('\tbig.txt'))
            .join('\n') + '\n',
      })
      .trim();
    return repo.git(['commit-tree', tree, '-p', 'HEAD', '-m', 'evil'], { input: '' }).trim();
  }

  it('deleting the branch and making it again at another commit is measured from its verified tip', () => {
    const repo = repoWithBig();
    const before = head(repo);
    const evil = evilCommit(repo);
    repo.git(['checkout', '-q', '--detach']);
    expect(repo.gitRun(['branch', '-D', 'main'], AUTO).code).toBe(0);
    expect(repo.gitRun(['branch', 'main', evil], AUTO).code).not.toBe(0);
    expect(repo.gitRun(['cat-file', '-e', 'refs/heads/main']).code).not.toBe(0);
    repo.git(['branch', 'main', before]);
    expect(bigAt(repo, 'main')).toBe(BIG);
  });

  it('a ref file written by hand, a rename over the branch, a symbolic ref, a worktree without hooks: no hook runs, so the next check and doctor report it', () => {
    const attacks: Array<(repo: TestRepo, evil: string) => void> = [
      (repo, evil) =>
        writeFileSync(path.join(repo.dir, '.git', 'refs', 'heads', 'main'), evil + '\n'),
      (repo, evil) => {
        repo.git(['-c', 'core.hooksPath=/dev/null', 'branch', 'evil', evil]);
        repo.git(['checkout', '-q', '--detach']);
        expect(repo.gitRun(['branch', '-M', 'evil', 'main'], AUTO).code).toBe(0); // git 2.39 shows the hook a deletion only
        repo.git(['checkout', '-q', 'main']);
      },
      (repo, evil) => {
        // main made a symbolic ref to a branch at the evil commit (git 2.39 shows the hook no symref change)
        repo.git(['-c', 'core.hooksPath=/dev/null', 'branch', 'evil', evil]);
        repo.git(['checkout', '-q', '--detach']);
        repo.git(['symbolic-ref', 'refs/heads/main', 'refs/heads/evil']);
        repo.git(['checkout', '-q', 'main']);
      },
      (repo, evil) => {
        // a worktree made by hand: relative core.hooksPath finds no .husky/_ there
        const wt = path.join(repo.dir, '..', path.basename(repo.dir) + '-wt');
        repo.git(['worktree', 'add', '-q', '--detach', wt]);
        expect(
          spawnSync('git', ['update-ref', 'refs/heads/main', evil], {
            cwd: wt,
            env: cleanEnv(AUTO),
          }).status,
        ).toBe(0);
        repo.git(['worktree', 'remove', '--force', wt]);
      },
    ];
    for (const attack of attacks) {
      const repo = repoWithBig();
      const evil = evilCommit(repo);
      attack(repo, evil);
      expect(head(repo, 'refs/heads/main')).toBe(evil);
      repo.git(['reset', '-q', '--hard', 'HEAD']).toString();
      const check = repo.guardJson(['check']).json;
      expect(check.bypassed?.paths).toEqual(['big.txt']);
      const doctor = repo.guardJson(['doctor']).json;
      expect(doctor.checks.find((c: any) => c.id === 'branch-bypass')?.message).toContain(
        'big.txt',
      );
    }
  });

  it('a config loosened past every hook does not become the policy for the next move', () => {
    const repo = repoWithBig();
    repo.write('guard.config.json', JSON.stringify({ lineThreshold: 1000000 }) + '\n');
    expect(
      repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-am', 'tune'], AUTO).code,
    ).toBe(0);
    const loose = head(repo);
    repo.git(['rm', '-q', 'big.txt']);
    const r = repo.gitRun(['commit', '-q', '-m', 'drop it'], AUTO);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('big.txt');
    expect(head(repo)).toBe(loose);
    expect(bigAt(repo)).toBe(BIG);
  });

  it('a forged verified tip does not let the move itself through', () => {
    const repo = repoWithBig();
    const before = head(repo);
    const evil = evilCommit(repo);
    repo.git(['update-ref', 'refs/guard/verified/heads/main', evil]);
    expect(repo.gitRun(['update-ref', 'refs/heads/main', evil], AUTO).code).not.toBe(0);
    expect(head(repo)).toBe(before);
  });

  it('git push . and git fetch . into a local branch go through the same gate', () => {
    const repo = repoWithBig();
    const before = head(repo);
    const evil = evilCommit(repo);
    repo.git(['-c', 'core.hooksPath=/dev/null', 'branch', 'evil', evil]);
    repo.git(['branch', 'side', before]);
    expect(repo.gitRun(['push', '-q', '.', 'evil:side'], AUTO).code).not.toBe(0);
    expect(repo.gitRun(['fetch', '-q', '.', '+evil:side'], AUTO).code).not.toBe(0);
    expect(head(repo, 'side')).toBe(before);
  });

  it('a branch name built to break the shell filter is only a name', () => {
    const repo = repoWithBig();
    const evil = evilCommit(repo);
    const name = '$(touch${IFS}pwned)`touch${IFS}pwned2`';
    repo.git(['branch', name, 'HEAD']);
    expect(repo.gitRun(['update-ref', `refs/heads/${name}`, evil], AUTO).code).not.toBe(0);
    expect(repo.gitRun(['ls-files', '--others', 'pwned', 'pwned2']).stdout).toBe('');
    expect(spawnSync('ls', ['pwned', 'pwned2'], { cwd: repo.dir }).status).not.toBe(0);
  });

  it('.git/info/grafts does not give the move another merge-base', () => {
    const repo = repoWithBig();
    const before = head(repo);
    const evil = evilCommit(repo);
    const tree = repo.git(['rev-parse', `${evil}^{tree}`]).trim();
    const orphan = repo.git(['commit-tree', tree, '-m', 'orphan'], { input: '' }).trim();
    // both the tip and the evil commit "descend" from a commit that never had big.txt
    writeFileSync(
      path.join(repo.dir, '.git', 'info', 'grafts'),
      `${before} ${orphan}\n${evil} ${orphan}\n`,
    );
    expect(repo.gitRun(['update-ref', 'refs/heads/main', evil], AUTO).code).not.toBe(0);
    expect(head(repo)).toBe(before);
  });

  it('.git/shallow does not hide the merge-base of an amend', () => {
    const repo = repoWithBig();
    const parent = head(repo);
    repo.write('big.txt', drop(BIG, 59));
    expect(repo.gitRun(['commit', '-q', '-am', 'trim'], AUTO).code).toBe(0);
    const first = head(repo);
    // the amend made by hand, and declared shallow so that it seems to have no parent
    repo.write('big.txt', drop(BIG, 118));
    repo.git(['add', 'big.txt']);
    const tree = repo.git(['write-tree']).trim();
    const amended = repo
      .git(['commit-tree', tree, '-p', parent, '-m', 'trim'], { input: '' })
      .trim();
    writeFileSync(path.join(repo.dir, '.git', 'shallow'), amended + '\n');
    const r = repo.gitRun(['update-ref', 'refs/heads/main', amended], AUTO);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('.git/shallow');
    expect(head(repo)).toBe(first);
  });

  it('git replace does not make the gate see another commit than git writes', () => {
    const repo = repoWithBig();
    const before = head(repo);
    const evil = evilCommit(repo);
    // the evil commit pretends to be HEAD for every reader that honours replace refs
    repo.git(['replace', evil, before]);
    expect(repo.gitRun(['update-ref', 'refs/heads/main', evil], AUTO).code).not.toBe(0);
    expect(head(repo)).toBe(before);
  });
});

describe('lanes live with the branch gate', () => {
  it('a lane that committed, was discarded, and is started again after main deleted a file starts cleanly', () => {
    const repo = repoWithBig();
    const lane = startLane(repo, 'agent');
    laneWrite(lane, 'a.txt', 'a\nlane\n');
    // (--no-verify: the lane's pre-commit finds no guard on PATH; the branch gate finds the main tree's)
    expect(laneGit(lane, ['commit', '-q', '--no-verify', '-am', 'lane work']).code).toBe(0);
    expect(repo.refs('refs/guard/verified/heads/guard/')).toEqual([
      'refs/guard/verified/heads/guard/agent',
    ]);
    expect(repo.guard(['discard', 'agent']).code).toBe(0);
    // main moves on with an approved-looking deletion made past the hooks, then adopted by a person
    repo.git(['-c', 'core.hooksPath=/dev/null', 'rm', '-q', 'big.txt']);
    repo.git(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'drop big']);
    repo.git(['update-ref', 'refs/guard/verified/heads/main', 'HEAD']);
    expect(repo.refs('refs/guard/verified/heads/guard/')).toEqual([]);
    const again = repo.guard(['start', 'agent']);
    expect(again.stderr).not.toContain('refused');
    expect(again.code).toBe(0);
  });
});

describe('from inside a lane, and with a fake guard', () => {
  it("a lane cannot move the main tree's branch", () => {
    const repo = repoWithBig();
    const lane = startLane(repo, 'agent');
    const before = head(repo);
    laneGit(lane, ['rm', '-q', 'big.txt']);
    const tree = laneGit(lane, ['write-tree']).stdout.trim();
    const evil = laneGit(lane, ['commit-tree', tree, '-p', before, '-m', 'evil']).stdout.trim();
    expect(laneGit(lane, ['update-ref', 'refs/heads/main', evil]).code).not.toBe(0);
    expect(laneGit(lane, ['branch', '-f', 'main', evil]).code).not.toBe(0);
    expect(head(repo)).toBe(before);
    expect(bigAt(repo)).toBe(BIG);
  });

  it('node_modules/.bin/guard replaced by a script that says yes: doctor finds that guard never runs', () => {
    const repo = repoWithBig();
    const fake = path.join(repo.dir, 'node_modules', '.bin', 'guard');
    spawnSync('rm', [fake]);
    writeFileSync(fake, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const { code, json } = repo.guardJson(['doctor']);
    expect(code).toBe(1);
    expect(json.checks.find((c: any) => c.id === 'hook')).toMatchObject({
      ok: false,
      severity: 'error',
    });
    expect(json.checks.find((c: any) => c.id === 'branch-gate')).toMatchObject({ ok: false });
  });
});

describe('a person at a terminal is asked instead of refused', () => {
  async function amendInPty(
    repo: TestRepo,
    answer: string,
  ): Promise<{ code: number; out: string }> {
    const pty = await import('node-pty');
    const p = pty.spawn('git', ['commit', '-q', '--amend', '-am', 'trim more'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: undefined, NO_COLOR: '1' }) as Record<string, string>,
    });
    let out = '';
    let answered = false;
    const exit = new Promise<number>((r) => p.onExit((e) => r(e.exitCode)));
    p.onData((d) => {
      out += d;
      if (!answered && /brings in big\.txt[\s\S]*Take this change/.test(out)) {
        answered = true;
        p.write(`${answer}\r`);
      }
    });
    const code = await Promise.race([
      exit,
      new Promise<number>((_, rej) =>
        setTimeout(() => rej(new Error(`no answer:\n${out}`)), 30_000),
      ),
    ]);
    return { code, out };
  }

  it('an amend that adds up to a rewrite is put to the person; y lets it through and is recorded, n refuses it', async () => {
    const repo = repoWithBig();
    const parent = head(repo);
    repo.write('big.txt', drop(BIG, 59));
    expect(repo.gitRun(['commit', '-q', '-am', 'trim'], AUTO).code).toBe(0);
    const first = head(repo);

    repo.write('big.txt', drop(BIG, 118));
    const no = await amendInPty(repo, 'n');
    expect(no.out).toContain('moving the branch brings in big.txt, which needs approval');
    expect(no.code).not.toBe(0);
    expect(head(repo)).toBe(first);

    const yes = await amendInPty(repo, 'y');
    expect(yes.code).toBe(0);
    expect(head(repo, 'HEAD^')).toBe(parent);
    expect(bigAt(repo)).toBe(drop(BIG, 118));
    const records = repo.git([
      'log',
      '--no-walk',
      '--format=%B',
      ...repo.refs('refs/guard/decisions/'),
    ]);
    expect(records).toMatch(
      /"command":"verify-refs".*"path":"big.txt".*"decision":"approved","decider":"person"/,
    );
    // the person's yes starts the day's count afresh (issue 20, step by step): the next small
    // step is measured from what was approved, not from the 200 lines of the morning
    repo.write('big.txt', drop(BIG, 119));
    const next = repo.gitRun(['commit', '-q', '-am', 'one line more'], AUTO);
    expect(next.stderr).toBe('');
    expect(next.code).toBe(0);
  }, 90_000);
});
