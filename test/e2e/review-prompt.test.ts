import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupRepos,
  fixture,
  laneWrite,
  lines,
  makeRepo,
  snapshotTree as snapshot,
  startLane,
  type TestRepo,
} from '../helpers.js';
import { spawnGuard, type Session } from '../pty.js';

afterAll(cleanupRepos);

/** A repo with `files` committed (small rewrites need approval: lineThreshold 3) and lane "agent". */
function withLane(
  files: Record<string, string>,
  config: object = { lineThreshold: 3 },
): { repo: TestRepo; lane: string } {
  const repo = makeRepo({ ...files, 'guard.config.json': JSON.stringify(config) });
  return { repo, lane: startLane(repo) };
}

const staged = (repo: TestRepo) =>
  repo.git(['diff', '--cached', '--name-only']).split('\n').filter(Boolean).sort();

/** Added and removed lines of `git diff REF^ REF`, without headers. */
function changedLines(repo: TestRepo, ref: string): string[] {
  return repo
    .git(['diff', '--no-color', `${ref}^`, ref])
    .split('\n')
    .filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l));
}

/** The latest decision record's decisions, by path. */
function recorded(repo: TestRepo): Record<string, any> {
  const [ref] = repo.refs('refs/guard/decisions/').sort().reverse();
  const body = repo.git(['log', '-1', '--format=%B', ref!]);
  const json = JSON.parse(body.slice(body.indexOf('{')));
  return Object.fromEntries(json.decisions.map((d: any) => [d.path, d]));
}

const HUNK = /Take this hunk \[[^\]]*\]\? $/;
const CONFIRM = /Merge now \[y,n\]\? $/;

async function answer(s: Session, prompt: RegExp | string, text: string): Promise<string> {
  const screen = await s.waitFor(prompt);
  s.type(`${text}\r`);
  return screen;
}

const FOUR = 'one\ntwo\nthree\nfour\n';

describe('guard review at a terminal: strategies for a whole-file rewrite', () => {
  it('b (both) appends: the header, what would be lost and the strategy keys are shown; the old content stays first', async () => {
    const { repo, lane } = withLane({ 'cfg.txt': FOUR });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    const s = spawnGuard(['review', 'agent'], repo.dir);
    const screen = await answer(s, HUNK, 'b');
    expect(screen).toMatch(/cfg\.txt\s+replace\s+4 lines, 4 deleted \(100%\), 1 added/);
    expect(screen).toContain('Would be lost: 4 of 4 lines');
    expect(screen).toMatch(/\(1\/1\) Take this hunk \[y,n,q,a,d,e,v,r,b,i,x,\?\]\? $/);
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(0);
    expect(repo.read('cfg.txt')).toBe(FOUR + 'NEW\n');
    expect(staged(repo)).toEqual(['cfg.txt']);
    expect(recorded(repo)['cfg.txt']).toMatchObject({
      decision: 'approved',
      decider: 'person',
      strategy: 'append',
    });
  });

  it('i inserts at the chosen line after an invalid answer, showing the old file numbered', async () => {
    const { repo, lane } = withLane({ 'cfg.txt': FOUR });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, HUNK, 'i');
    const listing = await answer(s, /after which line \(0-4; empty cancels\)\? $/, 'abc');
    expect(listing).toMatch(/^\s+1  one\r?$/m);
    expect(listing).toMatch(/^\s+4  four\r?$/m);
    expect(await answer(s, /after which line \(0-4; empty cancels\)\? $/, '9')).toContain(
      '"abc" is not a line between 0 and 4, try again',
    );
    expect(await answer(s, /after which line \(0-4; empty cancels\)\? $/, '2')).toContain(
      '"9" is not a line between 0 and 4, try again',
    );
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(0);
    expect(repo.read('cfg.txt')).toBe('one\ntwo\nNEW\nthree\nfour\n');
    expect(recorded(repo)['cfg.txt']).toMatchObject({ decision: 'approved', strategy: 'insert' });
  });

  it('i then an empty answer cancels: a rejection, nothing written, the proposal kept', async () => {
    const { repo, lane } = withLane({ 'cfg.txt': FOUR });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    const before = snapshot(repo.dir);
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, HUNK, 'i');
    await answer(s, /empty cancels\)\? $/, '');
    expect(await answer(s, CONFIRM, 'y')).toContain('Cancelled: the change is rejected.');
    expect(await s.exit).toBe(1);
    expect(snapshot(repo.dir)).toEqual(before);
    const d = recorded(repo)['cfg.txt'];
    expect(d).toMatchObject({ decision: 'rejected', decider: 'person' });
    expect(changedLines(repo, d.ref)).toEqual(['-one', '-two', '-three', '-four', '+NEW']);
  });

  it('three invalid lines reject the change', async () => {
    const { repo, lane } = withLane({ 'cfg.txt': FOUR });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, HUNK, 'i');
    for (const a of ['5', '-1', 'x']) await answer(s, /empty cancels\)\? $/, a);
    expect(await answer(s, CONFIRM, 'y')).toContain(
      'No valid line after 3 tries: the change is rejected.',
    );
    expect(await s.exit).toBe(1);
    expect(repo.read('cfg.txt')).toBe(FOUR);
  });

  it('x extends a Python class with the new methods', async () => {
    const old =
      'class Store:\n    def get(self, key):\n        return self.items.get(key)\n\n    def size(self):\n        return len(self.items)\n';
    const neu = 'class Store:\n    def put(self, key, value):\n        self.items[key] = value\n';
    const { repo, lane } = withLane({ 'store.py': old });
    laneWrite(lane, 'store.py', neu);
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, HUNK, 'x');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(0);
    const out = repo.read('store.py');
    for (const def of ['def get(self, key):', 'def size(self):', 'def put(self, key, value):'])
      expect(out).toContain(def);
    expect(out.match(/^class Store:/gm)).toHaveLength(1);
    expect(recorded(repo)['store.py']).toMatchObject({ decision: 'approved', strategy: 'extend' });
  });

  it('x on a file that does not parse falls back to append and says so', async () => {
    const { repo, lane } = withLane({
      'retry.py': 'def a():\n    return 1\n\ndef b():\n    return 2\n',
    });
    laneWrite(lane, 'retry.py', fixture('syntax_error.py'));
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, HUNK, 'x');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(0);
    expect(s.output()).toMatch(/retry\.py: extend fell back to append/);
    expect(repo.read('retry.py')).toBe(
      'def a():\n    return 1\n\ndef b():\n    return 2\n' + fixture('syntax_error.py'),
    );
    expect(recorded(repo)['retry.py']).toMatchObject({ decision: 'approved', strategy: 'append' });
  });
});

describe('guard review at a terminal: the keys of git add -p', () => {
  const base = lines(40);
  const three = base
    .replace('line 2\n', 'two\n')
    .replace('line 20\n', 'twenty\n')
    .replace('line 38\n', 'thirty-eight\n');
  /** A protected file with three hunks (a modify: no strategy keys). */
  const threeHunks = () => {
    const { repo, lane } = withLane({ 'doc.txt': base }, { protect: ['doc.txt'] });
    laneWrite(lane, 'doc.txt', three);
    return { repo, lane };
  };

  it('? helps, j and k move, y and n decide; what is left is kept in a ref', async () => {
    const { repo } = threeHunks();
    const s = spawnGuard(['review', 'agent'], repo.dir);
    const first = await answer(s, HUNK, '?');
    expect(first).toMatch(/doc\.txt\s+modify/);
    expect(first).toMatch(/\(1\/3\) Take this hunk \[y,n,q,a,d,j,J,g,\/,e,v,\?\]\? $/);
    expect(first).toContain('+two');
    const help = await answer(s, /\(1\/3\) Take this hunk/, 'j');
    for (const k of [
      'y - take this hunk',
      'n - leave this hunk out',
      'a - take this hunk and all later',
      'd - leave out this hunk and all later',
      'j - ',
      'J - ',
      'g - ',
      '/ - ',
      'v - ',
      'q - quit',
      '? - print help',
    ]) {
      expect(help).toContain(k);
    }
    expect(await answer(s, /\(2\/3\) Take this hunk/, 'k')).toContain('+twenty');
    expect(await answer(s, /\(1\/3\) Take this hunk/, 'y')).toContain('+two');
    expect(await answer(s, /\(2\/3\) Take this hunk/, 'n')).toContain('+twenty');
    expect(await answer(s, /\(3\/3\) Take this hunk/, 'y')).toContain('+thirty-eight');
    const summary = await answer(s, CONFIRM, 'y');
    expect(summary).toMatch(/1 file: 1 to merge/);
    expect(summary).toMatch(/doc\.txt\s+taken in part \(2 of 3 hunks\)/);
    expect(await s.exit).toBe(1);
    expect(repo.read('doc.txt')).toBe(three.replace('twenty\n', 'line 20\n'));
    const d = recorded(repo)['doc.txt'];
    expect(d.decision).toBe('approved');
    expect(changedLines(repo, d.ref)).toEqual(['-line 20', '+twenty']);
  });

  it('a takes this hunk and the rest of the file', async () => {
    const { repo } = threeHunks();
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, /\(1\/3\) Take this hunk/, 'n');
    await answer(s, /\(2\/3\) Take this hunk/, 'a');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(1);
    expect(repo.read('doc.txt')).toBe(three.replace('two\n', 'line 2\n'));
  });

  it('d leaves this hunk and the rest of the file', async () => {
    const { repo } = threeHunks();
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, /\(1\/3\) Take this hunk/, 'y');
    await answer(s, /\(2\/3\) Take this hunk/, 'd');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(1);
    expect(repo.read('doc.txt')).toBe(base.replace('line 2\n', 'two\n'));
    expect(changedLines(repo, recorded(repo)['doc.txt'].ref)).toEqual([
      '-line 20',
      '+twenty',
      '-line 38',
      '+thirty-eight',
    ]);
  });

  it("y on every hunk takes the lane's version whole; exit 0", async () => {
    const { repo } = threeHunks();
    const s = spawnGuard(['review', 'agent'], repo.dir);
    for (const n of [1, 2, 3]) await answer(s, new RegExp(`\\(${n}/3\\) Take this hunk`), 'y');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(0);
    expect(repo.read('doc.txt')).toBe(three);
    expect(recorded(repo)['doc.txt'].ref).toBeUndefined();
  });

  it('s splits a hunk with unchanged lines inside', async () => {
    const { repo, lane } = withLane({ 'doc.txt': base }, { protect: ['doc.txt'] });
    const two = base.replace('line 10\n', 'ten\n').replace('line 13\n', 'thirteen\n');
    laneWrite(lane, 'doc.txt', two);
    const s = spawnGuard(['review', 'agent'], repo.dir);
    expect(await answer(s, /\(1\/1\) Take this hunk \[y,n,q,a,d,s,e,v,\?\]/, 's')).toMatch(
      /\+ten[\s\S]*\+thirteen/,
    );
    const split = await answer(s, /\(1\/2\) Take this hunk/, 'n');
    expect(split).toContain('Split into 2 hunks.');
    expect(split).toContain('+ten');
    expect(split).not.toContain('+thirteen');
    expect(await answer(s, /\(2\/2\) Take this hunk/, 'y')).toContain('+thirteen');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(1);
    expect(repo.read('doc.txt')).toBe(base.replace('line 13\n', 'thirteen\n'));
    expect(changedLines(repo, recorded(repo)['doc.txt'].ref)).toEqual(['-line 10', '+ten']);
  });

  it("e takes the hunk as the person edited it: that is what is merged, the lane's own change is kept as a ref", async () => {
    const { repo, lane } = withLane({ 'doc.txt': base }, { protect: ['doc.txt'] });
    const proposal = base.replace('line 5\n', 'line 5\nadded one\nadded two\n');
    laneWrite(lane, 'doc.txt', proposal);
    const script = `${repo.dir}/.git/edit.cjs`;
    writeFileSync(
      script,
      "const fs = require('fs'); const f = process.argv[2]; fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('+added one\\n', ''));\n",
    );
    const s = spawnGuard(['review', 'agent'], repo.dir, {
      EDITOR: `'${process.execPath}' '${script}'`,
      VISUAL: undefined,
    });
    expect(await answer(s, /\(1\/1\) Take this hunk \[y,n,q,a,d,e,v,\?\]\? $/, 'e')).toContain(
      '+added two',
    );
    const summary = await answer(s, CONFIRM, 'y');
    expect(summary).toMatch(/doc\.txt\s+taken in part \(1 of 1 hunk, 1 edited by hand\)/);
    await s.exit;
    expect(repo.read('doc.txt')).toBe(base.replace('line 5\n', 'line 5\nadded two\n'));
    const r = recorded(repo)['doc.txt'];
    expect(r).toMatchObject({ decision: 'approved', decider: 'person', strategy: 'hunks' });
    expect(repo.git(['show', `${r.ref}:doc.txt`])).toBe(proposal);
  });

  it('q keeps what was decided in this file and asks about nothing more: the rest is blocked as in auto mode', async () => {
    const { repo, lane } = withLane(
      { 'doc.txt': base, 'z.txt': base },
      { protect: ['doc.txt', 'z.txt'] },
    );
    laneWrite(lane, 'doc.txt', three);
    laneWrite(lane, 'z.txt', base.replace('line 5\n', 'five\n'));
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, /\(1\/3\) Take this hunk/, 'y');
    await answer(s, /\(2\/3\) Take this hunk/, 'q');
    const rest = await answer(s, CONFIRM, 'y');
    expect(rest).toMatch(/z\.txt\s+blocked \(needs a person\)/);
    expect(await s.exit).toBe(1);
    expect(repo.read('doc.txt')).toBe(base.replace('line 2\n', 'two\n'));
    expect(repo.read('z.txt')).toBe(base);
    const r = recorded(repo);
    expect(r['z.txt']).toMatchObject({ decision: 'blocked', decider: 'auto' });
    expect(repo.git(['show', `${r['z.txt'].ref}:z.txt`])).toBe(base.replace('line 5\n', 'five\n'));
  });

  it('n at the confirm writes nothing: no file, no index entry, no ref', async () => {
    const { repo, lane } = withLane({ 'doc.txt': base, 'a.txt': 'a\n' }, { protect: ['doc.txt'] });
    laneWrite(lane, 'doc.txt', three);
    laneWrite(lane, 'a.txt', 'a\nb\n');
    laneWrite(lane, 'new.txt', 'new\n');
    const before = { files: snapshot(repo.dir), index: repo.git(['ls-files', '-s']) };
    const s = spawnGuard(['review', 'agent'], repo.dir);
    await answer(s, /\(1\/3\) Take this hunk/, 'a');
    const summary = await answer(s, CONFIRM, 'n');
    expect(summary).toMatch(/3 files: 3 to merge into the main tree, 0 left out/);
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain('review cancelled: nothing was merged or recorded');
    expect({ files: snapshot(repo.dir), index: repo.git(['ls-files', '-s']) }).toEqual(before);
    expect(repo.refs('refs/guard/rejected/')).toEqual([]);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);
  });
});

describe('guard review at a terminal: the summary', () => {
  it('names the files taken in part and the conflicts to come before anything is written', async () => {
    const base = lines(40);
    const { repo, lane } = withLane(
      { 'doc.txt': base, 'b.txt': base },
      { protect: ['doc.txt', 'b.txt'] },
    );
    laneWrite(lane, 'doc.txt', base.replace('line 2\n', 'two\n').replace('line 30\n', 'thirty\n'));
    laneWrite(lane, 'b.txt', base.replace('line 7\n', 'lane 7\n'));
    repo.write('b.txt', base.replace('line 7\n', 'main 7\n'));
    const s = spawnGuard(['review', 'agent'], repo.dir);
    expect(await answer(s, /\(1\/1\) Take this hunk/, 'y')).toContain('b.txt');
    await answer(s, /\(1\/2\) Take this hunk/, 'y');
    await answer(s, /\(2\/2\) Take this hunk/, 'n');
    const summary = await answer(s, CONFIRM, 'y');
    expect(summary).toContain('2 files: 2 to merge into the main tree, 0 left out');
    expect(summary).toMatch(/b\.txt\s+conflicts with later changes \(conflict markers; exit 1\)/);
    expect(summary).toMatch(/doc\.txt\s+taken in part \(1 of 2 hunks\)/);
    expect(await s.exit).toBe(1);
    expect(repo.read('b.txt')).toContain('<<<<<<< main\n');
    expect(repo.read('doc.txt')).toBe(base.replace('line 2\n', 'two\n'));
  });
});

describe('guard review at a terminal: what is asked', () => {
  it('by default only what needs approval is asked about; the rest is taken', async () => {
    const { repo, lane } = withLane({ 'cfg.txt': FOUR, 'small.txt': lines(10) });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    laneWrite(lane, 'small.txt', lines(10).replace('line 5\n', 'five\n'));
    const s = spawnGuard(['review', 'agent'], repo.dir);
    const screen = await answer(s, HUNK, 'n');
    expect(screen).toContain('cfg.txt');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(1);
    expect(s.output()).not.toContain('+five');
    expect(repo.read('small.txt')).toBe(lines(10).replace('line 5\n', 'five\n'));
    expect(repo.read('cfg.txt')).toBe(FOUR);
    expect(staged(repo)).toEqual(['small.txt']);
  });

  it('--all asks about every hunk, allowed ones too', async () => {
    const { repo, lane } = withLane({ 'cfg.txt': FOUR, 'small.txt': lines(10) });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    laneWrite(lane, 'small.txt', lines(10).replace('line 5\n', 'five\n'));
    laneWrite(lane, 'new.txt', 'new\n');
    const s = spawnGuard(['review', 'agent', '--all'], repo.dir);
    expect(await answer(s, HUNK, 'y')).toContain('cfg.txt');
    expect(await answer(s, HUNK, 'y')).toContain('+new');
    expect(await answer(s, HUNK, 'n')).toContain('+five');
    await answer(s, CONFIRM, 'y');
    expect(await s.exit).toBe(1);
    expect(repo.read('cfg.txt')).toBe('NEW\n');
    expect(repo.read('new.txt')).toBe('new\n');
    expect(repo.read('small.txt')).toBe(lines(10));
    expect(recorded(repo)['small.txt']).toMatchObject({ decision: 'rejected', decider: 'person' });
  });

  it('with nothing that needs approval there is no prompt at all', async () => {
    const { repo, lane } = withLane({ 'small.txt': lines(10) });
    laneWrite(lane, 'small.txt', lines(10).replace('line 5\n', 'five\n'));
    const s = spawnGuard(['review', 'agent'], repo.dir);
    expect(await s.exit).toBe(0);
    expect(s.output()).not.toMatch(/Take this hunk|Merge now/);
    expect(repo.read('small.txt')).toBe(lines(10).replace('line 5\n', 'five\n'));
  });
});
