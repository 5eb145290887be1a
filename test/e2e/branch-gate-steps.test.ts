/**
 * Through git, past the branch gate (issue 20, "What to build" item 3). Each
 * test performs the attack the way an agent would (real git, the built CLI,
 * the hooks `guard init` installs) and asserts through git that the work is
 * still there, refused or kept. docs/reliability/backdoors.md lists them.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { noteGone } from '../../src/git/journal.js';
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

describe('5. step by step', () => {
  const keep = (n: number) => BIG.split('\n').slice(0, n).join('\n') + '\n';

  it('three allowed commits that empty a 200-line file: refused once they add up', () => {
    const repo = installGuard({ 'big.txt': BIG, 'a.txt': 'a\n' });
    const results: number[] = [];
    for (const n of [140, 80, 20]) {
      repo.write('big.txt', keep(n));
      repo.git(['add', 'big.txt']);
      const r = repo.gitRun(['commit', '-q', '-m', `keep ${n}`], AUTO);
      results.push(r.code === 0 ? 0 : 1);
      if (r.code !== 0) {
        expect(r.stderr).toContain('step by step');
        break;
      }
    }
    expect(results).toContain(1);
    // never fewer than 80 of the 200 lines on the branch (the first step alone is allowed)
    expect(
      repo.git(['cat-file', 'blob', 'HEAD:big.txt']).split('\n').length,
    ).toBeGreaterThanOrEqual(80);
  });

  it('a rename first does not hide the steps: git mv, then trims of the renamed file', () => {
    const repo = installGuard({ 'big.txt': BIG, 'a.txt': 'a\n' });
    repo.git(['mv', 'big.txt', 'moved.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 'rename'], AUTO).code).toBe(0);
    const codes: number[] = [];
    for (const n of [140, 80]) {
      repo.write('moved.txt', keep(n));
      repo.git(['add', 'moved.txt']);
      codes.push(repo.gitRun(['commit', '-q', '-m', `keep ${n}`], AUTO).code === 0 ? 0 : 1);
    }
    expect(codes).toEqual([0, 1]);
    expect(repo.git(['cat-file', 'blob', 'HEAD:moved.txt'])).toBe(keep(140));
  });

  it('ordinary small edits to the same file, commit after commit, never ask', () => {
    const repo = installGuard({ 'big.txt': BIG, 'a.txt': 'a\n' });
    for (let i = 0; i < 6; i++) {
      repo.write('big.txt', BIG.replace(`line ${i * 10 + 1}\n`, `line ${i * 10 + 1} changed\n`));
      repo.git(['add', 'big.txt']);
      expect(repo.gitRun(['commit', '-q', '-m', `edit ${i}`], AUTO).code).toBe(0);
    }
  });

  it("other days' anchors, of every branch (a discarded lane's too), are deleted with the next move", () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    repo.git(['update-ref', 'refs/guard/anchor/2000-01-01/heads/guard/gone', 'HEAD']);
    repo.git(['update-ref', 'refs/guard/anchor/2000-01-01/heads/main', 'HEAD']);
    repo.write('b.txt', 'b\n');
    repo.git(['add', 'b.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 'b'], AUTO).code).toBe(0);
    expect(repo.refs('refs/guard/anchor/').filter((r) => r.includes('2000-01-01'))).toEqual([]);
    expect(repo.refs('refs/guard/anchor/')).toHaveLength(1);
  });

  it('a commit redone after a reset is measured from what the branch keeps, not from the dropped commit', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    repo.write('x.txt', lines(150, 'first'));
    repo.git(['add', 'x.txt']);
    expect(repo.gitRun(['commit', '-q', '-m', 'x'], AUTO).code).toBe(0);
    // a new day: the reset is the branch's first move, so its tip was the day's base
    // (as guard's own clean-up of other days' anchors does: the ref and its journal line go together)
    for (const ref of repo.refs('refs/guard/anchor/')) {
      repo.git(['update-ref', '-d', ref]);
      noteGone(path.join(repo.dir, '.git'), [ref]);
    }
    expect(repo.gitRun(['reset', '-q', '--hard', 'HEAD~1'], AUTO).code).toBe(0);
    repo.write('x.txt', lines(150, 'second'));
    repo.git(['add', 'x.txt']);
    const r = repo.gitRun(['commit', '-q', '-m', 'x again'], AUTO);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('three guard write --auto calls outside a session that empty a 200-line file: blocked once they add up', () => {
    const repo = installGuard({ 'big.txt': BIG, 'a.txt': 'a\n' });
    const codes: number[] = [];
    for (const n of [140, 80, 20]) {
      const w = repo.guardJson(['write', 'big.txt', '--auto'], { input: keep(n) });
      codes.push(w.code);
      if (w.code !== 0) {
        expect(w.json.files[0].reasons.join('\n')).toContain('first saw it today');
        break;
      }
    }
    expect(codes).toContain(1);
    expect(repo.read('big.txt').split('\n').length).toBeGreaterThanOrEqual(80);
    // not a session: rewind and log --session know nothing of it
    expect(repo.refs('refs/guard/sessions/')).toEqual([]);
  });

  it('a fresh --session for every write does not make each write its own base', () => {
    const repo = installGuard({ 'big.txt': BIG, 'a.txt': 'a\n' });
    const codes = [140, 80].map(
      (n, i) =>
        repo.guardJson(['write', 'big.txt', '--auto', '--session', `s${i}`], { input: keep(n) })
          .code,
    );
    expect(codes).toEqual([0, 1]);
    expect(repo.read('big.txt')).toBe(keep(140));
  });
});
