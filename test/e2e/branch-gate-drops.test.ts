/**
 * Through git, past the branch gate (issue 20, "What to build" item 3). Each
 * test performs the attack the way an agent would (real git, the built CLI,
 * the hooks `guard init` installs) and asserts through git that the work is
 * still there, refused or kept. docs/reliability/backdoors.md lists them.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanupRepos,
  installGuard,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

import { AUTO, BIG, globalBin, has, head, withPath } from './branch-gate-shared.js';

afterAll(cleanupRepos);

describe('2. moves that drop commits: kept under refs/guard/dropped/ and reported', () => {
  function withWork(): { repo: TestRepo; base: string; tip: string } {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const base = head(repo);
    repo.write('work.txt', lines(150, 'work'));
    repo.git(['add', 'work.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 'work 1'], AUTO).code).toBe(0);
    repo.write('more.txt', lines(30, 'more'));
    repo.git(['add', 'more.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 'work 2'], AUTO).code).toBe(0);
    return { repo, base, tip: head(repo) };
  }
  const dropped = (repo: TestRepo) =>
    repo
      .git(['for-each-ref', '--format=%(objectname)', 'refs/guard/dropped/'])
      .split('\n')
      .filter(Boolean);

  it('reset --hard HEAD~2: goes through (a person resets on purpose), says what it drops, keeps the tip', () => {
    const { repo, base, tip } = withWork();
    const r = repo.gitRun(['reset', '-q', '--hard', 'HEAD~2'], AUTO);
    expect(r.code).toBe(0);
    expect(head(repo)).toBe(base);
    expect(r.stderr).toMatch(
      /drops committed work; the dropped tip is kept as refs\/guard\/dropped\//,
    );
    expect(r.stderr).toMatch(/work\.txt\s+delete\s+150 lines/);
    expect(r.stderr).toContain('(needs approval by the same rules as a commit)');
    expect(dropped(repo)).toEqual([tip]);
    // in the audit trail too
    const log = repo
      .guardJson(['log'])
      .json.entries.filter((e: any) => e.kind === 'decision' && e.command === 'verify-refs');
    expect(JSON.stringify(log)).toContain('refs/guard/dropped/');
    // and one command brings it back
    const ref = repo.git(['for-each-ref', '--format=%(refname)', 'refs/guard/dropped/']).trim();
    expect(repo.gitRun(['reset', '-q', '--keep', ref], AUTO).code).toBe(0);
    expect(head(repo)).toBe(tip);
  });

  it('a rebase that drops a commit, branch -f and update-ref back: each kept', () => {
    const { repo, tip } = withWork();
    // rebase --onto HEAD~2 HEAD~1: replays "work 2" and drops "work 1"
    expect(repo.gitRun(['rebase', '-q', '--onto', 'HEAD~2', 'HEAD~1'], AUTO).code).toBe(0);
    expect(has(repo, 'HEAD', 'work.txt')).toBe(false);
    expect(dropped(repo)).toContain(tip);

    const w = withWork();
    w.repo.git(['checkout', '-q', '-b', 'side']);
    expect(w.repo.gitRun(['branch', '-f', 'main', 'main~2'], AUTO).code).toBe(0);
    expect(dropped(w.repo)).toContain(w.tip);

    const u = withWork();
    expect(u.repo.gitRun(['update-ref', 'refs/heads/main', 'HEAD~1'], AUTO).code).toBe(0);
    expect(dropped(u.repo)).toContain(u.tip);
  });

  it('a reset past every hook: the dropped tip is kept by the next guard check, or by the next move through the gate', () => {
    const { repo, tip } = withWork();
    expect(
      repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'reset', '-q', '--hard', 'HEAD~2']).code,
    ).toBe(0);
    expect(dropped(repo)).toEqual([]);
    expect(repo.guard(['check']).code).toBe(0);
    expect(dropped(repo)).toEqual([tip]);

    const w = withWork();
    expect(
      w.repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'reset', '-q', '--hard', 'HEAD~2']).code,
    ).toBe(0);
    w.repo.write('small.txt', 's\n');
    w.repo.git(['add', 'small.txt']);
    expect(w.repo.gitRun(['commit', '-q', '--no-verify', '-m', 'small'], AUTO).code).toBe(0);
    expect(dropped(w.repo)).toEqual([w.tip]);
  });

  it('a dropped file whose name holds a line break and a terminal escape is reported quoted', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const name = 'evil\n\x1b[2Jname.txt';
    repo.write(name, lines(20));
    repo.git(['add', '--', name]);
    expect(repo.gitRun(['commit', '-q', '-m', 'odd'], AUTO).code).toBe(0);
    const r = repo.gitRun(['reset', '-q', '--hard', 'HEAD~1'], AUTO);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('"evil\\n\\033[2Jname.txt"  delete');
    expect(r.stderr).not.toContain('\x1b');
  });

  it('a deleted branch: its tip is kept when no other ref holds it (branch -D, update-ref -d), not when one does', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const side = (name: string) => {
      repo.git(['checkout', '-q', '-b', name]);
      repo.write(`${name}.txt`, lines(30, name));
      repo.git(['add', `${name}.txt`]);
      expect(repo.gitRun(['commit', '-q', '-m', name], AUTO).code).toBe(0);
      repo.git(['checkout', '-q', 'main']);
      return head(repo, name);
    };
    const a = side('topic');
    const r = repo.gitRun(['branch', '-q', '-D', 'topic'], AUTO);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /branch topic went away \(deleted or renamed\).*kept as refs\/guard\/dropped\//,
    );
    expect(dropped(repo)).toEqual([a]);
    const b = side('other');
    expect(repo.gitRun(['update-ref', '-d', 'refs/heads/other'], AUTO).code).toBe(0);
    expect(dropped(repo).sort()).toEqual([a, b].sort());
    // merged into main first: main holds it, nothing to keep
    side('merged');
    expect(repo.gitRun(['merge', '-q', '--ff-only', 'merged'], AUTO).code).toBe(0);
    const quiet = repo.gitRun(['branch', '-q', '-d', 'merged'], AUTO);
    expect(quiet.stderr).toBe('');
    expect(dropped(repo)).toHaveLength(2);
  });

  it('git pack-refs and git gc move branches into packed-refs: nothing went away, nothing kept; a packed branch deleted is still kept', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    repo.git(['checkout', '-q', '-b', 'topic']);
    repo.write('topic.txt', lines(30, 'topic'));
    repo.git(['add', 'topic.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 'topic'], AUTO).code).toBe(0);
    const tip = head(repo, 'topic');
    repo.git(['checkout', '-q', 'main']);
    // on 1ccc3f9: "branch main went away", "branch topic went away", both kept as dropped
    const packed = repo.gitRun(['pack-refs', '--all'], AUTO);
    expect(packed.code).toBe(0);
    expect(packed.stderr).toBe('');
    const gc = repo.gitRun(['gc', '-q'], AUTO);
    expect(gc.stderr).not.toMatch(/went away/);
    expect(dropped(repo)).toEqual([]);
    // topic is packed only now: deleting it rewrites packed-refs (locked while the hook runs)
    const r = repo.gitRun(['branch', '-q', '-D', 'topic'], AUTO);
    expect(r.stderr).toMatch(/branch topic went away/);
    expect(dropped(repo)).toEqual([tip]);
  });

  it('what drops nothing keeps nothing: a rebase that replays every commit, an amend that only adds', () => {
    const { repo } = withWork();
    repo.git(['checkout', '-q', '-b', 'topic', 'HEAD~1']);
    repo.write('t.txt', 't\n');
    repo.git(['add', 't.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 't'], AUTO).code).toBe(0);
    expect(repo.gitRun(['rebase', '-q', 'main'], AUTO).code).toBe(0);
    repo.write('t.txt', 't\nu\n');
    repo.git(['add', 't.txt']);
    expect(repo.gitRun(['commit', '-q', '--amend', '--no-edit'], AUTO).code).toBe(0);
    expect(dropped(repo)).toEqual([]);
  });
});
