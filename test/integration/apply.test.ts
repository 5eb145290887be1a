import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Classification } from '../../src/core/classify.js';
import type { FileOutcome, Plan, PlanFile } from '../../src/core/plan.js';
import { makeDeadline } from '../../src/runtime/deadline.js';
import type { DiffEntry } from '../../src/git/diff.js';
import { REFS, newRef, type RecordCommit } from '../../src/git/records.js';
import { openRepo } from '../../src/git/repo.js';
import { stageWrite } from '../../src/worktree/atomic.js';
import { apply, type TreeFile, type TreeTarget } from '../../src/apply/apply.js';
import { cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

/** flows/apply takes typed targets built from a plan's outcomes and does every step itself; asserted through git and the disk. */

const checkpoints = (repo: TestRepo) => repo.refs('refs/guard/checkpoints/');
const aRecord = (now: Date): RecordCommit => ({
  ref: newRef(REFS.decisions, now),
  parent: null,
  message: 'guard test record\n',
  changes: [],
});
const blob = (repo: TestRepo, text: string) =>
  repo.git(['hash-object', '-w', '--stdin'], { input: text }).trim();

function cls(p: string, status: Classification['status']): Classification {
  return {
    path: p,
    status,
    needsApproval: false,
    existingLines: 1,
    linesAdded: 1,
    linesDeleted: 1,
    changeRatio: 1,
    binary: false,
    symlink: false,
    modeOnly: false,
    protected: false,
    submodule: false,
    ignored: false,
    whitespaceOnly: false,
    reasons: [],
    rules: [],
  };
}

describe('apply: typed targets, one way past the point of no return', () => {
  it('index (check): records, then a checkpoint of the index as it was, then unstage and stage', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    repo.write('a.txt', 'a2\n');
    repo.write('b.txt', 'b2\n');
    repo.git(['add', '-A']);
    const r = await openRepo(repo.dir);
    const now = new Date();
    const rec = aRecord(now);
    const unstage: DiffEntry = {
      path: 'a.txt',
      letter: 'M',
      added: 1,
      deleted: 1,
      oldMode: '100644',
      newMode: '100644',
      oldOid: blob(repo, 'a\n'),
      newOid: blob(repo, 'a2\n'),
    } as DiffEntry;
    const out = await apply({
      gate: 'check',
      repo: r,
      now,
      deadline: makeDeadline(60),
      records: [rec],
      target: {
        kind: 'index',
        checkpoint: { reason: 'test', command: 'check', lane: null },
        unstage: [unstage],
        stage: [
          {
            path: 'b.txt',
            mode: '100644',
            content: Buffer.from('b\nb2\n'),
            worktreeIfHolds: blob(repo, 'b2\n'),
          },
        ],
      },
    });
    expect(repo.refs('refs/guard/decisions/')).toEqual([rec.ref]);
    expect(checkpoints(repo)).toHaveLength(1);
    expect(out.checkpoint?.commit).toBe(repo.git(['rev-parse', checkpoints(repo)[0]!]).trim());
    expect(repo.git(['show', ':a.txt'])).toBe('a\n'); // unstaged: HEAD's again
    expect(repo.read('a.txt')).toBe('a2\n'); // the work tree keeps it
    expect(repo.git(['show', ':b.txt'])).toBe('b\nb2\n');
    expect(repo.read('b.txt')).toBe('b\nb2\n'); // it held what was staged, so it gets the result too
  });

  it('index with nothing to change: the records only, no checkpoint', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const now = new Date();
    const out = await apply({
      gate: 'check',
      repo: await openRepo(repo.dir),
      now,
      records: [aRecord(now)],
      target: {
        kind: 'index',
        checkpoint: { reason: 't', command: 'check', lane: null },
        unstage: [],
        stage: [],
      },
    });
    expect(out.checkpoint).toBeNull();
    expect(repo.refs('refs/guard/decisions/')).toHaveLength(1);
    expect(checkpoints(repo)).toEqual([]);
  });

  it('a deadline already passed stops before anything: no records, no checkpoint', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const deadline = makeDeadline(0.001);
    await new Promise((res) => setTimeout(res, 20));
    const now = new Date();
    const run = apply({
      gate: 'check',
      repo: await openRepo(repo.dir),
      now,
      deadline,
      records: [aRecord(now)],
      target: null,
    });
    await expect(run).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    expect(repo.refs()).toEqual([]);
  });

  it('file (write): checkpoint and records, then the prepared file renamed over the judged one; the lock is released', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = await openRepo(repo.dir);
    const now = new Date();
    const staged = await stageWrite(r.root, 'a.txt', Buffer.from('new\n'));
    const judged = {
      abs: path.join(r.root, 'a.txt'),
      rel: 'a.txt',
      old: { mode: '100644' } as never,
      content: Buffer.from('a\n'),
    };
    const out = await apply({
      gate: 'write',
      repo: r,
      now,
      records: [aRecord(now)],
      target: {
        kind: 'file',
        checkpoint: { reason: 't', command: 'write', lane: null, paths: ['a.txt'], now },
        lock: { holder: 'test' },
        warnings: [],
        staged,
        judged,
        session: [{ id: 's1', path: 'a.txt', worktree: r.root, outcome: 'allowed' }],
      },
    });
    expect(repo.read('a.txt')).toBe('new\n');
    expect(repo.git(['show', `${out.checkpoint!.commit}:a.txt`])).toBe('a\n');
    expect(repo.refs('refs/guard/decisions/')).toHaveLength(1);
    expect(repo.refs('refs/guard/').filter((x) => x.includes('session'))).toHaveLength(1); // the session's first touch names the checkpoint
    expect(existsSync(path.join(r.gitDir, 'guard.lock'))).toBe(false);
  });

  it('file whose content changed since it was judged: E_CHANGED, nothing recorded or written; the lock is released', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = await openRepo(repo.dir);
    const now = new Date();
    const attempt = async () =>
      apply({
        gate: 'write',
        repo: r,
        now,
        records: [aRecord(now)],
        target: {
          kind: 'file',
          checkpoint: { reason: 't', command: 'write', lane: null, paths: ['a.txt'] },
          lock: { holder: 'test' },
          warnings: [],
          staged: await stageWrite(r.root, 'a.txt', Buffer.from('new\n')),
          judged: {
            abs: path.join(r.root, 'a.txt'),
            rel: 'a.txt',
            old: { mode: '100644' } as never,
            content: Buffer.from('something else\n'),
          },
        },
      });
    await expect(attempt()).rejects.toMatchObject({ code: 'E_CHANGED' });
    await expect(attempt()).rejects.toMatchObject({ code: 'E_CHANGED' }); // released: no wait the second time
    expect(repo.read('a.txt')).toBe('a\n');
    expect(repo.refs()).toEqual([]);
    expect(existsSync(path.join(r.gitDir, 'guard.lock'))).toBe(false);
  });

  it('tree (review): write, delete, and a file changed since it was read left as a conflict; staged; one decision record', async () => {
    const repo = makeRepo({ 'w.txt': 'w\n', 'd.txt': 'd\n', 'c.txt': 'c\n' });
    const r = await openRepo(repo.dir);
    repo.write('c.txt', 'changed by the person after the read\n');
    const now = new Date();
    const held = (s: string) => ({ content: Buffer.from(s), mode: '100644' });
    const one = (p: string, action: FileOutcome['action'], content: Buffer | null): TreeFile => {
      const file: PlanFile = {
        c: cls(p, action === 'delete' ? 'delete' : 'modify'),
        hunks: [],
        base: Buffer.from(`${p[0]}\n`),
        proposed: content,
        baseMode: '100644',
        proposedMode: content ? '100644' : null,
        current: { at: held(`${p[0]}\n`) },
      };
      const outcome: FileOutcome = {
        path: p,
        decision: 'allowed',
        decider: 'policy',
        content,
        mode: content ? '100644' : null,
        action,
        keep: null,
      };
      return {
        outcome,
        file,
        entry: {
          path: p,
          oldMode: '100644',
          newMode: content ? '100644' : null,
          oldOid: 'x',
          newOid: content ? 'y' : null,
        } as DiffEntry,
      };
    };
    const files = [
      one('w.txt', 'write', Buffer.from('w2\n')),
      one('d.txt', 'delete', null),
      one('c.txt', 'write', Buffer.from('c2\n')),
    ];
    const plan: Plan = { gate: 'review', files: files.map((f) => f.outcome) };
    const target: TreeTarget = {
      kind: 'tree',
      checkpoint: { reason: 't', command: 'review', lane: 'x' },
      lock: { holder: 'test' },
      warnings: [],
      lane: { name: 'x', base: repo.git(['rev-parse', 'HEAD']).trim() },
      ctx: { command: 'review', lane: 'x', time: now.toISOString(), base: null },
      files,
      refs: new Map(),
      record: newRef(REFS.decisions, now),
      plan,
    };
    const out = await apply({ gate: 'review', repo: r, now, records: [], target });
    expect(repo.read('w.txt')).toBe('w2\n');
    expect(existsSync(path.join(repo.dir, 'd.txt'))).toBe(false);
    expect(repo.read('c.txt')).toBe('changed by the person after the read\n');
    expect(repo.git(['diff', '--cached', '--name-status']).trim().split('\n').sort()).toEqual([
      'D\td.txt',
      'M\tw.txt',
    ]);
    expect(out.done).toMatchObject({
      merged: 2,
      staged: ['w.txt', 'd.txt'],
      conflicts: new Set(['c.txt']),
    });
    expect(repo.refs('refs/guard/decisions/')).toEqual([target.record]);
    const body = repo.git(['log', '-1', '--format=%B', target.record]);
    expect(
      JSON.parse(body.slice(body.indexOf('{'))).decisions.find(
        (d: { path: string }) => d.path === 'c.txt',
      ).conflict,
    ).toBe(true);
    expect(checkpoints(repo)).toHaveLength(1);
  });
});
