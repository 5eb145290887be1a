/**
 * Issue 20, the holes left open by the last round (docs/reliability/holes-newest.md,
 * "Still open") and the adversary on the hook entry's fingerprint: each test
 * performs the attack through plain git, the shell or `guard hook claude`
 * with Claude Code's payload shapes, and fails on the main it was written
 * against (2d09c03). docs/reliability/hook-holes.md lists them.
 */
import { writeFileSync } from 'node:fs';
import { journalCheck, noteTips } from '../../src/git/journal.js';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeHook,
  cleanupRepos,
  laneWrite,
  lines,
  makeRepo,
  startLane,
  type TestRepo,
} from '../helpers.js';
import { AUTO, BIG, bigAt, head, laneGit, repoWithBig } from './backdoors-shared.js';

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
      .git(['for-each-ref', '--format=%(refname) %(contents:subject)', 'refs/guard/decisions/'])
      .split('\n')
      .find((l) => l.includes(' guard review: '))!
      .split(' ')[0]!;
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

describe("a lane's base ref is journaled", () => {
  const lanesOf = (repo: TestRepo) =>
    repo.guardJson(['lanes']).json.lanes.map((l: any) => l.name) as string[];
  const preBash = (repo: TestRepo, id: string) =>
    claudeHook(repo, 'lane-net', 'Bash', { command: 'ls' }, id).json?.hookSpecificOutput ?? {};

  it('deleted through the shell: the lane vanished from guard lanes; every door says so, the hook refuses, guard recover brings it back', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    const lane = startLane(repo, 'agent');
    laneWrite(lane, 'new.py', lines(30));
    expect(lanesOf(repo)).toEqual(['agent']);
    repo.git(['update-ref', '-d', 'refs/guard/lanes/agent']);
    // what the deletion does: guard no longer knows the lane (review, discard, lanes)
    expect(lanesOf(repo)).toEqual([]);
    const pre = preBash(repo, 'l1');
    expect(pre.permissionDecision).toBe('deny');
    expect(pre.permissionDecisionReason).toMatch(
      /removed outside guard \(refs\/guard\/lanes\/agent/,
    );
    const doctor = repo.guardJson(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.json.checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:refs', severity: 'error' }),
    );
    expect(repo.guard(['log']).stderr).toMatch(/refs\/guard\/lanes\/agent/);
    expect(repo.guardJson(['recover']).code).toBe(0);
    expect(lanesOf(repo)).toEqual(['agent']);
    expect(repo.guardJson(['review', 'agent', '--auto']).json.files).toContainEqual(
      expect.objectContaining({ path: 'new.py' }),
    );
    expect(preBash(repo, 'l2').permissionDecision).not.toBe('deny');
  });

  it("is checked at every door however many refs guard wrote after it (the journal's newest 64 are all a door reads)", async () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    startLane(repo, 'agent');
    const commit = head(repo);
    const refs = Array.from({ length: 200 }, (_, i) => `refs/guard/checkpoints/t-${i}`);
    repo.git(['update-ref', '--stdin'], {
      input: refs.map((r) => `create ${r} ${commit}\n`).join(''),
    });
    const common = path.join(repo.dir, '.git');
    noteTips(
      common,
      refs.map((ref) => ({ ref, oid: commit })),
    );
    expect((await journalCheck(common)).gone).toEqual([]);
    repo.git(['update-ref', '-d', 'refs/guard/lanes/agent']);
    expect((await journalCheck(common)).gone.map((t) => t.ref)).toEqual(['refs/guard/lanes/agent']);
  });

  it('moved through the shell (from inside the lane): reported; recover points it back; discard is not an attack', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    const lane = startLane(repo, 'agent');
    const base = head(repo, 'refs/guard/lanes/agent');
    laneWrite(lane, 'new.py', lines(30));
    laneGit(lane, ['add', 'new.py']);
    laneGit(lane, ['commit', '-q', '--no-verify', '-m', 'work']);
    expect(laneGit(lane, ['update-ref', 'refs/guard/lanes/agent', 'HEAD']).code).toBe(0);
    const d = repo.guardJson(['doctor']).json;
    expect(d.checks).toContainEqual(
      expect.objectContaining({
        id: 'integrity:refs',
        message: expect.stringMatching(
          /moved to another commit outside guard \(refs\/guard\/lanes\/agent/,
        ),
      }),
    );
    expect(repo.guardJson(['recover']).code).toBe(0);
    expect(head(repo, 'refs/guard/lanes/agent')).toBe(base);
    // guard's own removal of the lane is not reported
    expect(repo.guard(['discard', 'agent']).code).toBe(0);
    expect(lanesOf(repo)).toEqual([]);
    expect(
      repo.guardJson(['doctor']).json.checks.some((c: any) => c.id.startsWith('integrity')),
    ).toBe(false);
  });
});
