/**
 * Issue 20, the holes left open by the last round (docs/reliability/holes-newest.md,
 * "Still open") and the adversary on the hook entry's fingerprint: each test
 * performs the attack through plain git, the shell or `guard hook claude`
 * with Claude Code's payload shapes, and fails on the main it was written
 * against (2d09c03). docs/reliability/hook-holes.md lists them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, laneWrite, lines, startLane } from '../helpers.js';
import { AUTO, BIG, bigAt, head, repoWithBig } from './backdoors-shared.js';

afterAll(cleanupRepos);

describe('a person approval in a decision record names the kind of thing approved', () => {
  it('a review approval of a regular file does not let the same blob in as a symlink past the branch gate', () => {
    const repo = repoWithBig();
    const lane = startLane(repo, 'agent');
    const short = lines(10);
    laneWrite(lane, 'big.txt', short);
    const decisions = path.join(repo.dir, '.git', 'decisions.json');
    writeFileSync(decisions, JSON.stringify([{ path: 'big.txt', action: 'approve' }]));
    // the person approves the 200 -> 10 line rewrite of the regular file (no commit yet)
    expect(repo.guardJson(['review', 'agent', '--decisions', decisions]).code).toBe(0);
    expect(repo.read('big.txt')).toBe(short);
    const blob = repo.git(['hash-object', 'big.txt']).trim();
    // the agent commits that same blob as a symlink (whose target is the text), past pre-commit
    repo.git(['update-index', '--cacheinfo', `120000,${blob},big.txt`]);
    const before = head(repo);
    const r = repo.gitRun(['commit', '-q', '--no-verify', '-m', 'same text, now a link'], AUTO);
    expect(r.code).not.toBe(0);
    expect(head(repo)).toBe(before);
    expect(bigAt(repo)).toBe(BIG);
    // nor through pre-commit with the review's own record named, as `guard review --commit` does
    const record = repo
      .git([
        'for-each-ref',
        '--sort=-refname',
        '--count=1',
        '--format=%(refname)',
        'refs/guard/decisions/',
      ])
      .trim();
    expect(repo.git(['log', '-1', '--format=%B', record])).toMatch(/"command":"review"/);
    const viaRecord = repo.gitRun(['commit', '-q', '-m', 'approved in review'], {
      ...AUTO,
      GUARD_APPROVED_RECORD: record,
    });
    expect(viaRecord.code).not.toBe(0);
    expect(head(repo)).toBe(before);
    // the regular file the person approved does go in
    repo.git(['update-index', '--cacheinfo', `100644,${blob},big.txt`]);
    const ok = repo.gitRun(['commit', '-q', '--no-verify', '-m', 'the approved rewrite'], AUTO);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(bigAt(repo)).toBe(short);
    expect(repo.git(['ls-tree', 'HEAD', '--', 'big.txt'])).toMatch(/^100644 /);
  });
});
