/**
 * cat-file's output read while git writes it (`onProgress`, which check uses to
 * classify each file as its blobs come in) must give what reading it after git
 * exited gives: objects across chunk boundaries, empty, missing and over-cap ones,
 * in request order, and progress only ever sees a growing prefix of them.
 */
import { describe, expect, it } from 'vitest';
import {
  READ_CAP,
  catFileBatch,
  catFileRead,
  catFileRounds,
  type CatResult,
} from '../../src/git/catfile.js';
import { collectFacts } from '../../src/git/changes.js';
import { stagedDiffSplit } from '../../src/git/diff.js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeRepo } from '../helpers.js';

describe('catFileBatch read while git runs', () => {
  it('gives the same results as reading after git exited, and progress sees growing prefixes', async () => {
    const big = Buffer.from('x'.repeat(99) + '\n')
      .toString()
      .repeat(30_000); // 3 MB: several chunks
    const repo = makeRepo({
      'big.txt': big,
      'empty.txt': '',
      'small.txt': 'a\nb',
      'bin.dat': Buffer.from([0, 1, 2, 10, 255]),
    });
    const names = [
      'HEAD:big.txt',
      'HEAD:empty.txt',
      'HEAD:nothing-here',
      'HEAD:small.txt',
      'HEAD:bin.dat',
      'HEAD:big.txt',
      'HEAD',
    ];
    const after = await catFileBatch(repo.dir, names, 2_000_000, (i) => i === 6);
    const seen: number[] = [];
    let prefixes = true;
    const streamed = await catFileRead(repo.dir, names, {
      maxBytes: 2_000_000,
      infoOnly: (i) => i === 6,
      onProgress: (so) => {
        seen.push(so.length);
        prefixes &&= so.every((r: CatResult, i) => r === null || r.oid === after[i]?.oid);
      },
    });
    expect(streamed).toEqual(after);
    expect(
      after.map((r) => r && { size: r.size, lines: r.lines, held: r.data !== undefined }),
    ).toEqual([
      { size: big.length, lines: 30_000, held: false },
      { size: 0, lines: 0, held: true },
      null,
      { size: 3, lines: 2, held: true },
      { size: 5, lines: 2, held: true },
      { size: big.length, lines: 30_000, held: false },
      expect.objectContaining({ held: false }),
    ]);
    expect(after[3]!.data!.toString()).toBe('a\nb');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(prefixes).toBe(true);
  });

  it('a git that fails is reported as git failing, read while it runs or after', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = `${repo.dir}/no-such-git-dir`;
    try {
      for (const progress of [undefined, () => {}])
        await expect(
          catFileRead(repo.dir, ['HEAD:a.txt'], { maxBytes: 100, onProgress: progress }),
        ).rejects.toThrow(/git cat-file failed/);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
  });
});

describe('collectFacts with maxBytes known only later (guard check reads the policy beside the blobs)', () => {
  it('an object read before maxBytes was known and larger than it is not data: not sniffed, not text, too large', async () => {
    // git counts lines of a file with a NUL (a `diff` attribute): only guard's own sniff calls it binary
    const nul = (tail: string) =>
      Buffer.concat([Buffer.from([0]), Buffer.from(`${'x'.repeat(150)}\n${tail}\n`)]);
    const repo = makeRepo({
      '.gitattributes': '*.dat diff\n',
      'a.dat': nul('one'),
      'b.dat': nul('two'),
    });
    repo.write('a.dat', nul('three'));
    repo.write('b.dat', 'short\n');
    repo.git(['add', '-A']);
    const diff = stagedDiffSplit(repo.dir);
    const entries = await diff.entries;
    const factsWith = async (later?: boolean) => {
      const settings = { maxBytes: 100 };
      const { facts } = later
        ? await collectFacts(
            repo.dir,
            entries,
            { maxBytes: READ_CAP, countsReady: diff.counts },
            // settles once cat-file has read everything: every object was read under READ_CAP
            new Promise((r) => setTimeout(() => r(settings), 400)),
          )
        : await collectFacts(repo.dir, entries, { ...settings, countsReady: diff.counts });
      return facts.map((f) => ({
        path: f.path,
        binary: f.binary,
        tooLarge: f.tooLarge,
        text: f.newText !== undefined || f.oldText !== undefined,
      }));
    };
    const direct = await factsWith(false);
    expect(direct).toEqual([
      { path: 'a.dat', binary: false, tooLarge: { bytes: 156 }, text: false },
      { path: 'b.dat', binary: false, tooLarge: { bytes: 156 }, text: true },
    ]);
    expect(await factsWith(true)).toEqual(direct);
  });

  it('two rounds in one cat-file: the first answered before the second is known, each as a cat-file of its own gives', async () => {
    const repo = makeRepo({ 'a.txt': 'a\nb\n', 'b.txt': 'x'.repeat(300) + '\n', 'c.txt': '' });
    const first = ['HEAD:a.txt', 'HEAD:missing', 'HEAD'];
    const rest = ['HEAD:b.txt', 'HEAD:c.txt', 'HEAD:a.txt'];
    const alone = [
      await catFileBatch(repo.dir, first, READ_CAP),
      await catFileBatch(repo.dir, rest, 100, (i) => i === 2),
    ];
    const trace = path.join(mkdtempSync(path.join(tmpdir(), 'guard-trace-')), 'trace');
    process.env.GUARD_TRACE_GIT = trace;
    try {
      const cat = catFileRounds(repo.dir, first, READ_CAP);
      // the first round is answered while the second is still unknown (git is still running)
      expect(await cat.first).toEqual(alone[0]);
      const seen: number[] = [];
      const second = await cat.rest(rest, {
        maxBytes: 100,
        infoOnly: (i) => i === 2,
        onProgress: (so) => seen.push(so.length),
      });
      expect(second).toEqual(alone[1]);
      expect(second[0]!.data).toBeUndefined(); // over the second round's maxBytes
      expect(seen.every((n) => n <= rest.length)).toBe(true);
      // none: git answers the first round and is let go; fail: the read ends with the error
      const none = catFileRounds(repo.dir, first, READ_CAP);
      none.none();
      expect(await none.first).toEqual(alone[0]);
      const failed = catFileRounds(repo.dir, first, READ_CAP);
      failed.fail(new Error('no staged list'));
      await expect(failed.rest(rest, { maxBytes: 100 })).rejects.toThrow('no staged list');
    } finally {
      delete process.env.GUARD_TRACE_GIT;
    }
    // one process for both rounds
    expect(readFileSync(trace, 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
  });
});
