/**
 * The branch gate's verified tips (refs/guard/verified/heads/NAME) are what
 * every later move and check are measured from. An agent that commits past
 * every hook and then moves the verified tip onto its commit would make the
 * ungated commit look measured. guard journals each verified tip it writes
 * (git/journal.ts), and the journaled tip wins over the ref store, as for
 * the day's anchors.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos } from '../helpers.js';
import { AUTO, BIG, bigAt, head, repoWithBig } from './backdoors-shared.js';

afterAll(cleanupRepos);

describe('a verified tip moved outside guard', () => {
  it('an ungated commit, then the verified tip forged onto it: check still reports the bypass, and the next move is measured from the real tip', () => {
    const repo = repoWithBig();
    const before = head(repo);
    // first, a gated move today, so the gate has written (and journaled) a verified tip
    repo.write('a.txt', 'a\nb\n');
    expect(repo.gitRun(['commit', '-q', '-am', 'small'], AUTO).code).toBe(0);
    const verified = head(repo);
    expect(repo.git(['rev-parse', 'refs/guard/verified/heads/main']).trim()).toBe(verified);
    // past every hook: big.txt gone
    repo.git(['rm', '-q', 'big.txt']);
    expect(
      repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'gone'], AUTO).code,
    ).toBe(0);
    const evil = head(repo);
    // the forgery: the verified tip moved onto the ungated commit, and today's anchor too
    repo.git(['update-ref', 'refs/guard/verified/heads/main', evil]);
    for (const ref of repo.refs('refs/guard/anchor/')) repo.git(['update-ref', ref, evil]);
    repo.write('a.txt', 'a\nb\nc\n');
    repo.git(['add', 'a.txt']);
    const check = repo.guardJson(['check']);
    expect(check.json.bypassed?.paths).toEqual(['big.txt']);
    expect(check.stderr).toMatch(/moved to another commit outside guard/);
    // and the next gated move does not go through as if the loss had been measured
    const r = repo.gitRun(['commit', '-q', '-m', 'more'], AUTO);
    expect(r.code).not.toBe(0);
    expect(head(repo)).toBe(evil);
    expect(bigAt(repo, before)).toBe(BIG);
  });

  it('a verified tip deleted outside guard is taken from the journal', () => {
    const repo = repoWithBig();
    repo.write('a.txt', 'a\nb\n');
    expect(repo.gitRun(['commit', '-q', '-am', 'small'], AUTO).code).toBe(0);
    repo.git(['rm', '-q', 'big.txt']);
    expect(
      repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'gone'], AUTO).code,
    ).toBe(0);
    repo.git(['update-ref', '-d', 'refs/guard/verified/heads/main']);
    repo.write('a.txt', 'x\n');
    repo.git(['add', 'a.txt']);
    expect(repo.guardJson(['check']).json.bypassed?.paths).toEqual(['big.txt']);
  });
});

describe('the verified tip where the gate left it', () => {
  it('a check on a branch at its journaled verified tip starts no process to resolve it; one with a tip elsewhere does', () => {
    const repo = repoWithBig();
    repo.write('a.txt', 'a\nb\n');
    expect(repo.gitRun(['commit', '-q', '-am', 'small'], AUTO).code).toBe(0);
    expect(repo.git(['rev-parse', 'refs/guard/verified/heads/main']).trim()).toBe(head(repo));
    const traced = () => {
      const trace = path.join(mkdtempSync(path.join(tmpdir(), 'guard-trace-')), 'trace');
      repo.write('a.txt', `a\nb\n${Math.random()}\n`);
      repo.git(['add', 'a.txt']);
      const r = repo.guardJson(['check'], { env: { GUARD_TRACE_GIT: trace } });
      return { r, git: readFileSync(trace, 'utf8').split('\n').filter(Boolean) };
    };
    // HEAD is the journaled tip: HEAD's commit, read with the policy, is the answer
    const at = traced();
    expect(at.r.json.bypassed).toBeUndefined();
    expect(at.git.filter((l) => l.startsWith('rev-parse'))).toEqual([]);
    // the policy and the staged blobs in one cat-file: the two diffs, cat-file, fast-import
    expect(at.git.map((l) => l.split(' ')[0])).toEqual(['diff', 'diff', 'cat-file', 'fast-import']);
    // past every hook: the tip is resolved (and the move reported) as before
    repo.git(['rm', '-q', 'big.txt']);
    expect(
      repo.gitRun(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'gone'], AUTO).code,
    ).toBe(0);
    const moved = traced();
    expect(moved.r.json.bypassed?.paths).toEqual(['big.txt']);
    expect(moved.git.some((l) => /^rev-parse .*\^\{commit\}$/.test(l))).toBe(true);
  });
});
