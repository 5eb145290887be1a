/**
 * The diff-based gates read a modified file's old side for its size only where its new side is
 * read whole (git/changes.ts sizedFacts): its lines are git's (the new side's, less numstat's
 * added, plus its deleted), binary is git's word, and its text is read when first asked for,
 * every such old side at once in one more cat-file (the placeholder rule, guard ci's first line).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { READ_CAP } from '../../src/git/catfile.js';
import { collectFacts } from '../../src/git/changes.js';
import { stagedDiffSplit } from '../../src/git/diff.js';
import { countLines } from '../../src/core/lines.js';
import { makeRepo, type TestRepo } from '../helpers.js';

afterEach(() => {
  delete process.env.GUARD_TRACE_GIT;
});

async function stagedFacts(repo: TestRepo, maxBytes = READ_CAP) {
  const trace = path.join(mkdtempSync(path.join(tmpdir(), 'guard-trace-')), 'trace');
  process.env.GUARD_TRACE_GIT = trace;
  const diff = stagedDiffSplit(repo.dir);
  const entries = await diff.entries;
  const { facts } = await collectFacts(repo.dir, entries, {
    maxBytes,
    countsReady: diff.counts,
  });
  const processes = () => readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  return { facts, processes };
}

describe("an old side read for its size: git's lines, its text on demand", () => {
  it('existing lines are the old blob counted, whatever its last line, its line ends or a rename', async () => {
    const sides: Record<string, [string, string]> = {
      'no-eol.txt': ['a\nb\nc', 'a\nB\nc\nd'],
      'crlf.txt': ['one\r\ntwo\r\nthree\r\n', 'one\ntwo\nthree\nfour\n'],
      'emptied.txt': ['x\ny\n', ''],
      'from-empty.txt': ['', 'p\nq\n'],
      'lines.txt': [
        Array.from({ length: 120 }, (_, i) => `line ${i}`).join('\n') + '\n',
        'short\n',
      ],
      'moved-from.txt': [Array.from({ length: 40 }, (_, i) => `keep ${i}`).join('\n') + '\n', ''],
    };
    const repo = makeRepo(Object.fromEntries(Object.entries(sides).map(([p, [o]]) => [p, o])));
    for (const [p, [, n]] of Object.entries(sides)) if (p !== 'moved-from.txt') repo.write(p, n);
    repo.git(['mv', 'moved-from.txt', 'moved-to.txt']);
    repo.write('moved-to.txt', sides['moved-from.txt']![0] + 'one more\n');
    repo.git(['add', '-A']);
    const { facts, processes } = await stagedFacts(repo);
    for (const f of facts) {
      const old = sides[f.oldPath ?? f.path]![0];
      expect(f.existingLines, f.path).toBe(countLines(Buffer.from(old)));
      expect(f.existingBytes, f.path).toBe(Buffer.byteLength(old));
    }
    // no text asked for: the two diffs and one cat-file
    expect(processes().map((l) => l.split(' ')[0])).toEqual(['diff', 'diff', 'cat-file']);
    // asked for: every old text at once, in one more cat-file, each its blob's
    for (const f of facts) expect(f.oldText, f.path).toBe(sides[f.oldPath ?? f.path]![0]);
    expect(processes().filter((l) => l.startsWith('cat-file'))).toHaveLength(2);
  });

  it("binary is git's word: a `diff` attribute that makes git count an old side's lines makes guard count them; without one, git's '-' is binary", async () => {
    const nul = Buffer.concat([Buffer.from('head\n'), Buffer.from([0]), Buffer.from('\ntail\n')]);
    const repo = makeRepo({ '.gitattributes': 'text.dat diff\n', 'text.dat': nul, 'bin.dat': nul });
    repo.write('text.dat', 'head\nnew\ntail\n');
    repo.write('bin.dat', 'head\nnew\ntail\n');
    repo.git(['add', '-A']);
    const { facts } = await stagedFacts(repo);
    const by = Object.fromEntries(facts.map((f) => [f.path, f]));
    // as `git diff --numstat` shows it: 3 lines, one replaced
    expect(by['text.dat']).toMatchObject({ binary: false, existingLines: 3, linesDeleted: 1 });
    expect(by['bin.dat']).toMatchObject({ binary: true, existingLines: 0 });
  });

  it('an old side over maxBytes is too large and never read for its text', async () => {
    const repo = makeRepo({ 'big.txt': 'x'.repeat(300) + '\n' });
    repo.write('big.txt', 'y\n');
    repo.git(['add', '-A']);
    const { facts, processes } = await stagedFacts(repo, 100);
    expect(facts[0]).toMatchObject({ existingLines: 1, tooLarge: { bytes: 301 } });
    expect(facts[0]!.oldText).toBeUndefined();
    expect(processes().filter((l) => l.startsWith('cat-file'))).toHaveLength(1);
  });
});
