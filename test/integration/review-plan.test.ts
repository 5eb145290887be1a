import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GuardError } from '../../src/core/errors.js';
import { review, type Prompter } from '../../src/flows/review/review.js';
import { aborted } from '../../src/ui/terminal.js';
import type { Asked, Prompt, PromptFile } from '../../src/ui/prompt.js';
import {
  cleanupRepos,
  laneWrite,
  lines,
  makeRepo,
  snapshotTree,
  startLane,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/** The review flow in process, without the built CLI and without a terminal. */

const base = lines(40);
const five = base
  .replace('line 2\n', 'two\n')
  .replace('line 10\n', 'ten\n')
  .replace('line 18\n', 'eighteen\n')
  .replace('line 26\n', 'twenty-six\n')
  .replace('line 34\n', 'thirty-four\n');

function setup(): { repo: TestRepo; lane: string } {
  const repo = makeRepo({
    'doc.txt': base,
    'gone.py': lines(150),
    'a.txt': 'a\n',
    'guard.config.json': JSON.stringify({ protect: ['doc.txt'] }),
  });
  const lane = startLane(repo);
  laneWrite(lane, 'doc.txt', five);
  laneWrite(lane, 'a.txt', 'a\nb\n');
  rmSync(path.join(lane, 'gone.py')); // the lane deletes a 150-line file: that needs approval
  return { repo, lane };
}

const state = (repo: TestRepo) => ({
  tree: snapshotTree(repo.dir),
  index: repo.git(['ls-files', '-s']),
});
const made = (repo: TestRepo) => [
  ...repo.refs('refs/guard/rejected/'),
  ...repo.refs('refs/guard/decisions/'),
];

/** A person who answers from a script, and remembers what they were shown. */
function scripted(
  answers: Record<string, Asked | 'abort'>,
  confirm = true,
): { prompter: Prompter; seen: PromptFile[]; confirmed: string[] } {
  const seen: PromptFile[] = [];
  const confirmed: string[] = [];
  const prompt: Prompt = {
    async ask(f) {
      seen.push(f);
      const a = answers[f.c.path];
      if (a === 'abort') throw aborted();
      return a ?? { quit: false };
    },
    async confirm(text) {
      confirmed.push(text);
      return confirm;
    },
    close() {},
  };
  return { prompter: async () => prompt, seen, confirmed };
}

describe('review in process: the plan', () => {
  it('--dry-run gives files, hunks with ids and what would happen, and writes nothing into the main tree', async () => {
    const { repo } = setup();
    const before = state(repo);
    const r = await review({
      cwd: repo.dir,
      color: false,
      name: 'agent',
      auto: true,
      all: false,
      dryRun: true,
    });
    expect(r.dryRun).toBe(true);
    const by = Object.fromEntries(r.files.map((f) => [f.path, f]));
    expect(by['a.txt']).toMatchObject({ decision: 'allowed', action: 'write', outcome: 'allowed' });
    expect(by['doc.txt']).toMatchObject({
      decision: 'blocked',
      action: 'blocked',
      outcome: 'blocked (needs a person)',
    });
    expect(by['doc.txt']!.hunks).toHaveLength(5);
    expect(by['doc.txt']!.hunks[0]).toMatchObject({
      index: 0,
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      header: expect.stringMatching(/^@@ -1,5 \+1,5 @@/),
    });
    expect(by['gone.py']).toMatchObject({ decision: 'blocked', action: 'blocked' });
    expect(r.summary).toMatchObject({ files: 3, taken: 1, left: 2, kept: 2 });
    expect(r.record).toBeNull();
    expect(state(repo)).toEqual(before);
    expect(made(repo)).toEqual([]);
  });

  it('a person takes 3 of 5 hunks: the confirm names every file, and "3 of 5" is what the report and record say', async () => {
    const { repo } = setup();
    const take = { take: 'hunks' as const, indices: new Set([0, 2, 4]) };
    const { prompter, seen, confirmed } = scripted({
      'doc.txt': { answer: take, quit: false },
      'gone.py': { answer: { take: 'none' }, quit: false },
    });
    const r = await review(
      { cwd: repo.dir, color: false, name: 'agent', auto: false, all: false },
      prompter,
    );
    expect(seen.map((f) => f.c.path).sort()).toEqual(['doc.txt', 'gone.py']);
    expect(seen.find((f) => f.c.path === 'gone.py')!.strategies).toEqual([]); // a deletion: no append, insert or extend
    expect(confirmed[0]).toMatch(/3 files: 2 to merge into the main tree, 1 left out/);
    expect(confirmed[0]).toMatch(/doc\.txt\s+taken in part \(3 of 5 hunks\)/);
    expect(confirmed[0]).toMatch(/gone\.py\s+rejected/);
    expect(confirmed[0]).toMatch(/a\.txt\s+allowed/);
    const doc = r.files.find((f) => f.path === 'doc.txt')!;
    expect(doc).toMatchObject({ outcome: 'taken in part (3 of 5 hunks)', hunkCount: 5 });
    expect(repo.read('doc.txt')).toBe(
      base
        .replace('line 2\n', 'two\n')
        .replace('line 18\n', 'eighteen\n')
        .replace('line 34\n', 'thirty-four\n'),
    );
    expect(repo.read('gone.py')).toBe(lines(150));
    const body = repo.git(['log', '-1', '--format=%B', r.record!]);
    expect(
      JSON.parse(body.slice(body.indexOf('{'))).decisions.find(
        (d: { path: string }) => d.path === 'doc.txt',
      ).hunks,
    ).toHaveLength(3);
  });

  it('reviewing a lane already merged merges nothing and makes no new refs', async () => {
    const { repo } = setup();
    const all = scripted({
      'doc.txt': { answer: { take: 'all' }, quit: false },
      'gone.py': { answer: { take: 'all' }, quit: false },
    });
    const first = await review(
      { cwd: repo.dir, color: false, name: 'agent', auto: false, all: false },
      all.prompter,
    );
    expect(first.merged).toBe(3);
    const refs = repo.refs('refs/guard/');
    const again = scripted({});
    const second = await review(
      { cwd: repo.dir, color: false, name: 'agent', auto: false, all: false },
      again.prompter,
    );
    expect(again.seen).toEqual([]); // nothing to ask
    expect(second.merged).toBe(0);
    expect(
      second.files.every(
        (f) => f.already && f.action === 'none' && f.outcome === 'already in the main tree',
      ),
    ).toBe(true);
    expect(second.record).toBeNull();
    expect(repo.refs('refs/guard/')).toEqual(refs);
  });

  it('Ctrl-C at the prompt stops the review: nothing written, no ref, no record', async () => {
    const { repo } = setup();
    const before = state(repo);
    const { prompter } = scripted({ 'doc.txt': 'abort', 'gone.py': 'abort' });
    const err = await review(
      { cwd: repo.dir, color: false, name: 'agent', auto: false, all: false },
      prompter,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GuardError);
    expect((err as GuardError).code).toBe('E_ABORTED');
    expect((err as GuardError).exitCode).toBe(1);
    expect(state(repo)).toEqual(before);
    expect(made(repo)).toEqual([]);
  });

  it('a decisions file cannot extend a deletion: a usage error that changes nothing', async () => {
    const { repo } = setup();
    const file = path.join(repo.dir, '.git', 'decisions.json');
    writeFileSync(
      file,
      JSON.stringify([{ path: 'gone.py', action: 'approve', strategy: 'extend' }]),
    );
    const before = state(repo);
    const err = await review({
      cwd: repo.dir,
      color: false,
      name: 'agent',
      auto: true,
      all: false,
      decisionsFile: file,
    }).catch((e: unknown) => e);
    expect((err as GuardError).code).toBe('E_USAGE');
    expect((err as GuardError).message).toContain(
      'strategy extend cannot merge "gone.py" (a deletion)',
    );
    expect(state(repo)).toEqual(before);
    expect(made(repo)).toEqual([]);
  });

  it('a decisions file edits a hunk by hand: the same answer as `e`, the same report and record', async () => {
    const { repo } = setup();
    const file = path.join(repo.dir, '.git', 'decisions.json');
    const edit = [' line 1', '-line 2', '+two, edited by hand', ' line 3', ' line 4', ' line 5'];
    writeFileSync(
      file,
      JSON.stringify([
        { path: 'doc.txt', action: 'approve', hunks: [2], edits: [{ hunk: 0, lines: edit }] },
        { path: 'gone.py', action: 'reject' },
      ]),
    );
    const r = await review({
      cwd: repo.dir,
      color: false,
      name: 'agent',
      auto: true,
      all: false,
      decisionsFile: file,
    });
    expect(repo.read('doc.txt')).toBe(
      base.replace('line 2\n', 'two, edited by hand\n').replace('line 18\n', 'eighteen\n'),
    );
    expect(repo.git(['show', ':doc.txt'])).toBe(repo.read('doc.txt'));
    const doc = r.files.find((f) => f.path === 'doc.txt')!;
    expect(doc).toMatchObject({
      decision: 'approved',
      decider: 'person',
      strategy: 'hunks',
      outcome: 'taken in part (2 of 5 hunks, 1 edited by hand)',
    });
    expect(repo.git(['show', `${doc.ref}:doc.txt`])).toBe(five); // the lane's version whole is kept
    const body = repo.git(['log', '-1', '--format=%B', r.record!]);
    expect(
      JSON.parse(body.slice(body.indexOf('{'))).decisions.find(
        (d: { path: string }) => d.path === 'doc.txt',
      ).hunks,
    ).toHaveLength(2);
  });
});
