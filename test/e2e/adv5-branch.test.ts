import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, installGuard, lines, type TestRepo } from '../helpers.js';
import { AUTO, head } from './branch-gate-shared.js';

/**
 * adv5 (docs/reliability/adv5.md): the branch gate's deletions, attacked. A
 * deleted branch's tip is kept under refs/guard/dropped/ unless another ref
 * holds it, and a deletion is not one when packed-refs still holds the
 * branch at the same tip with no packed-refs.lock (git/moves.ts packedStill).
 */

afterAll(cleanupRepos);

const dropped = (repo: TestRepo) =>
  repo
    .git(['for-each-ref', '--format=%(objectname)', 'refs/guard/dropped/'])
    .split('\n')
    .filter(Boolean);

/** A branch `name` with one commit of its own (30 lines) that nothing else holds; its tip. */
function side(repo: TestRepo, name: string): string {
  repo.git(['checkout', '-q', '-b', name]);
  repo.write(`${name}.txt`, lines(30, name));
  repo.git(['add', `${name}.txt`]);
  expect(repo.gitRun(['commit', '-q', '-m', name], AUTO).code).toBe(0);
  repo.git(['checkout', '-q', 'main']);
  return head(repo, name);
}

/** Is `tip` still reachable from any ref (reflogs aside)? */
const reachable = (repo: TestRepo, tip: string) =>
  repo.git(['for-each-ref', '--format=%(refname)', `--contains=${tip}`]).trim() !== '';

describe('adv5: deleting a branch past the gate', () => {
  it('held: a tag made on the tip first, the branch deleted (not kept: the tag holds it), then the tag deleted (no gate): the verified tip still holds it, and a branch made again under the name keeps it as dropped', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    repo.git(['tag', 'hold', 'topic']);
    const r = repo.gitRun(['branch', '-q', '-D', 'topic'], AUTO);
    expect(r.code).toBe(0);
    repo.git(['tag', '-d', 'hold']);
    // nothing under refs/guard/dropped/ and nothing said: the deletion went unseen ...
    expect(dropped(repo)).toEqual([]);
    expect(r.stderr).not.toMatch(/went away/);
    // ... but the gate's verified tip of the branch (journaled, never removed) still holds the commits
    expect(repo.git(['rev-parse', 'refs/guard/verified/heads/topic']).trim()).toBe(tip);
    expect(reachable(repo, tip)).toBe(true);
    // and the name made again elsewhere is a move from that tip: kept and said
    const again = repo.gitRun(['branch', 'topic', 'main'], AUTO);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/drops committed work; the dropped tip is kept/);
    expect(dropped(repo)).toEqual([tip]);
  });

  it('held: the same with a made-up remote-tracking branch (update-ref refs/remotes/x/y), deleted after: the verified tip holds it', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    repo.git(['update-ref', 'refs/remotes/x/topic', tip]);
    expect(repo.gitRun(['update-ref', '-d', 'refs/heads/topic'], AUTO).code).toBe(0);
    repo.git(['update-ref', '-d', 'refs/remotes/x/topic']);
    expect(reachable(repo, tip)).toBe(true);
  });

  it('held: another branch holding the tip, deleted after (that deletion is gated in turn)', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    repo.git(['branch', 'copy', 'topic']);
    expect(repo.gitRun(['branch', '-q', '-D', 'topic'], AUTO).code).toBe(0);
    expect(dropped(repo)).toEqual([]);
    const r = repo.gitRun(['branch', '-q', '-D', 'copy'], AUTO);
    expect(r.stderr).toMatch(/branch copy went away/);
    expect(dropped(repo)).toEqual([tip]);
  });

  it("held: both branches deleted in one update-ref --stdin transaction (each the other's holder)", () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    repo.git(['branch', 'copy', 'topic']);
    repo.git(['update-ref', '--stdin'], {
      input: 'delete refs/heads/topic\ndelete refs/heads/copy\n',
      env: AUTO,
    });
    // (each deletion keeps it: two refs at one tip)
    expect(new Set(dropped(repo))).toEqual(new Set([tip]));
  });

  it('held: the branch both packed and loose at one tip (pack-refs --no-prune), then deleted: packed-refs.lock is held while the hook runs, so it is kept', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    repo.git(['pack-refs', '--all', '--no-prune']);
    expect(existsSync(path.join(repo.dir, '.git', 'refs', 'heads', 'topic'))).toBe(true);
    const r = repo.gitRun(['branch', '-q', '-D', 'topic'], AUTO);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/branch topic went away/);
    expect(dropped(repo)).toEqual([tip]);
  });

  it("held: a packed-refs.lock left behind (to make packedStill's 'no lock' case fail or git's lock fail) hides no deletion", () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    writeFileSync(path.join(repo.dir, '.git', 'packed-refs.lock'), '');
    const r = repo.gitRun(['branch', '-q', '-D', 'topic'], AUTO);
    if (r.code === 0) expect(dropped(repo)).toEqual([tip]);
    else expect(head(repo, 'topic')).toBe(tip);
  });

  it('held (known, backdoors.md): a branch deleted in a worktree made with git worktree add, where no hook runs: the verified tip still holds it', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const tip = side(repo, 'topic');
    const wt = path.join(repo.dir, '..', `${path.basename(repo.dir)}-wt`);
    repo.git(['worktree', 'add', '-q', '--detach', wt, 'main']);
    const r = repo.gitRun(['-C', wt, 'branch', '-q', '-D', 'topic'], AUTO);
    expect(r.code).toBe(0);
    // no hook ran there (core.hooksPath .husky/_ is relative; the worktree has no .husky/_)
    expect(dropped(repo)).toEqual([]);
    expect(reachable(repo, tip)).toBe(true);
    repo.git(['worktree', 'remove', '--force', wt]);
  });
});
