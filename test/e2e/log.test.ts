import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, lines, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

/** A checkpoint commit made by hand, dated `daysAgo`, so pruning by age can be tested. */
function oldCheckpoint(repo: TestRepo, id: string, daysAgo: number): string {
  const when = `${Math.floor(Date.now() / 1000) - daysAgo * 86400} +0000`;
  const tree = repo.git(['write-tree']).trim();
  const time = new Date(Date.now() - daysAgo * 86400_000).toISOString();
  const msg = `guard checkpoint: old\n\n${JSON.stringify({ v: 1, kind: 'checkpoint', reason: `old ${daysAgo}d`, command: 'test', lane: null, worktree: repo.dir, time })}\n`;
  const commit = repo
    .git(['commit-tree', tree], {
      input: msg,
      env: { GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when },
    })
    .trim();
  const ref = `refs/guard/checkpoints/${id}`;
  repo.git(['update-ref', ref, commit]);
  return ref;
}

describe('guard log', () => {
  it('lists checkpoints and decisions newest first, one line each', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    oldCheckpoint(repo, '20200101T000000Z-00000000', 400);
    expect(repo.guard(['write', 'notes.txt'], { input: 'n\n' }).code).toBe(0);
    expect(repo.guard(['write', 'state.py'], { input: fixture('state_replacement.py') }).code).toBe(
      1,
    );

    const { code, json } = repo.guardJson(['log']);
    expect(code).toBe(0);
    const kinds = json.entries.map((e: any) => [
      e.kind,
      e.kind === 'checkpoint' ? e.reason : `${e.path} ${e.decision}`,
    ]);
    expect(kinds).toEqual([
      ['decision', 'state.py blocked'],
      ['decision', 'notes.txt allowed'],
      ['checkpoint', 'before guard write notes.txt'],
      ['checkpoint', 'old 400d'],
    ]);
    const times = json.entries.map((e: any) => e.time);
    expect([...times].sort().reverse()).toEqual(times);
    const blocked = json.entries[0];
    expect(blocked).toMatchObject({
      status: 'replace',
      existingLines: 270,
      decider: 'auto',
      command: 'write',
    });
    expect(blocked.ref).toMatch(/^refs\/guard\/rejected\//);
    expect(repo.git(['show', `${blocked.ref}:state.py`])).toBe(fixture('state_replacement.py'));
    // a checkpoint's id is what restore takes
    const cp = json.entries[2];
    expect(repo.git(['rev-parse', `refs/guard/checkpoints/${cp.id}`]).trim()).toBe(cp.commit);
    expect(repo.guard(['restore', cp.id]).code).toBe(0);

    const human = repo.guard(['log', '--limit', '3']);
    const text = human.stdout
      .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/g, 'TIME')
      .replace(/\d{8}T\d{6}Z-[0-9a-f]{8}/g, 'ID');
    expect(text).toBe(
      [
        'TIME  checkpoint  before guard restore ID  ID',
        'TIME  decision    state.py replace  blocked by auto in write  refs/guard/rejected/ID',
        'TIME  decision    notes.txt new  allowed by policy in write',
        '(2 older entries not shown: --limit 5)',
        '',
      ].join('\n'),
    );
  });

  it('skips a hand-edited record with a warning; the rest works', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expect(repo.guard(['write', 'b.txt'], { input: 'b\n' }).code).toBe(0);
    const tree = repo.git(['write-tree']).trim();
    const junk = repo
      .git(['commit-tree', tree], { input: 'guard check: edited\n\n{not json\n' })
      .trim();
    repo.git(['update-ref', 'refs/guard/decisions/20990101T000000Z-deadbeef', junk]);
    const r = repo.guardJson(['log']);
    expect(r.code).toBe(0);
    expect(r.json.skipped).toEqual(['refs/guard/decisions/20990101T000000Z-deadbeef']);
    expect(r.json.entries.map((e: any) => e.kind)).toEqual(['decision', 'checkpoint']);
    expect(r.stderr).toContain('skipped refs/guard/decisions/20990101T000000Z-deadbeef');
  });

  it('--prune --older-than deletes only old checkpoints; rejected refs and records stay', () => {
    const repo = makeRepo({ 'big.txt': lines(300) });
    const old1 = oldCheckpoint(repo, '20200101T000000Z-00000001', 40);
    const old2 = oldCheckpoint(repo, '20200101T000000Z-00000002', 31);
    const young = oldCheckpoint(repo, '20200101T000000Z-00000003', 2);
    expect(repo.guard(['write', 'big.txt'], { input: 'gone\n' }).code).toBe(1);
    const rejected = repo.refs('refs/guard/rejected/');
    const decisions = repo.refs('refs/guard/decisions/');
    expect(rejected).toHaveLength(1);

    const r = repo.guard(['log', '--prune', '--older-than', '30d']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('guard: pruned 2 checkpoints\n');
    const left = repo.refs('refs/guard/checkpoints/');
    expect(left).toEqual([young]);
    expect(left).not.toContain(old1);
    expect(left).not.toContain(old2);
    expect(repo.refs('refs/guard/rejected/')).toEqual(rejected);
    expect(repo.refs('refs/guard/decisions/')).toEqual(decisions);
  });

  it('--prune --keep N keeps the newest N; --include-rejected prunes rejected refs and records too', () => {
    const repo = makeRepo({ 'big.txt': lines(300) });
    for (let i = 1; i <= 4; i++) oldCheckpoint(repo, `20200101T00000${i}Z-0000000${i}`, 10 - i);
    expect(repo.guard(['write', 'big.txt'], { input: 'gone\n' }).code).toBe(1);
    const { code, json } = repo.guardJson(['log', '--prune', '--keep', '1', '--include-rejected']);
    expect(code).toBe(0);
    expect(json.pruned).toEqual({ checkpoints: 3, rejected: 0, decisions: 0 });
    expect(repo.refs('refs/guard/checkpoints/')).toEqual([
      'refs/guard/checkpoints/20200101T000004Z-00000004',
    ]);
    const all = repo.guardJson(['log', '--prune', '--keep', '0', '--include-rejected']);
    expect(all.json.pruned).toEqual({ checkpoints: 1, rejected: 1, decisions: 1 });
    expect(repo.refs()).toEqual([]);
  });

  it('--prune without an age or a count is a usage error that deletes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    oldCheckpoint(repo, '20200101T000000Z-00000001', 100);
    for (const args of [
      ['log', '--prune'],
      ['log', '--prune', '--older-than', 'soon'],
    ]) {
      const r = repo.guardJson(args);
      expect(r.code).toBe(2);
      expect(r.json.error.code).toBe('E_USAGE');
    }
    expect(repo.refs()).toHaveLength(1);
  });

  it('reads every ref with one cat-file (messages) and no more than one for-each-ref (names: from the ref store files, git/ref-list.ts), however many there are', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    for (let i = 0; i < 30; i++)
      oldCheckpoint(repo, `20200101T000000Z-${String(i).padStart(8, '0')}`, 1);
    const trace = `${repo.dir}/.git/trace-git`;
    const r = repo.guardJson(['log'], { env: { GUARD_TRACE_GIT: trace } });
    expect(r.json.entries).toHaveLength(30);
    const calls = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    expect(calls.filter((l) => l.startsWith('for-each-ref')).length).toBeLessThanOrEqual(1);
    expect(calls.filter((l) => l.startsWith('cat-file'))).toHaveLength(1);
    expect(calls.length).toBeLessThanOrEqual(3);
  });

  it('with thousands of records, --limit N reads only the newest N (issue 22: 100,000 refs)', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    // 2,100 checkpoints in one fast-import, the newest last
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    let stream = '';
    for (let i = 0; i < 2100; i++) {
      const time = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
      const msg = `guard checkpoint: n${i}\n\n${JSON.stringify({ v: 1, kind: 'checkpoint', reason: `n${i}`, command: 'test', lane: null, worktree: repo.dir, time })}\n`;
      const id =
        time.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z') + '-' + String(i).padStart(8, '0');
      stream += `commit refs/guard/checkpoints/${id}\ncommitter g <g@l> ${1735689600 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}from ${head}\n\n`;
    }
    repo.git(['fast-import', '--quiet'], { input: stream });
    const trace = `${repo.dir}/.git/trace-git`;
    const r = repo.guardJson(['log', '--limit', '3'], { env: { GUARD_TRACE_GIT: trace } });
    expect(r.json.entries.map((e: any) => e.reason)).toEqual(['n2099', 'n2098', 'n2097']);
    expect(r.json).toMatchObject({ total: 2100, truncated: true, totalAtLeast: true });
    const calls = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    expect(calls.length).toBeLessThanOrEqual(3);
    const human = repo.guard(['log', '--limit', '3']);
    expect(human.stdout).toContain('(at least 2097 older entries not shown');
  });
});
