import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countLines, surelyReplaces } from '../../src/core/lines.js';
import { numstatPairs } from '../../src/git/measure.js';

/*
 * numstatPairs (the hook's measure of every file of a call): git's counts for each pair, and which
 * would-be replacements are whitespace only. A pair certain to be one (surelyReplaces) has its
 * `-w` count started beside the first; the answers are the same as when it waits for the counts.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'guard-pairs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = Array.from({ length: 12 }, (_, i) => `  value_${i} = compute(${i})`).join('\n') + '\n';
const pairs = [
  // a reindent: every line changed, none when whitespace is ignored
  { i: 0, base: Buffer.from(body), next: Buffer.from(body.replace(/^ {2}/gm, '    ')) },
  // a rewrite
  { i: 1, base: Buffer.from(body), next: Buffer.from(body.replace(/compute/g, 'other')) },
  // one line of twelve
  { i: 2, base: Buffer.from(body), next: Buffer.from(body.replace('compute(3)', 'compute(33)')) },
  // binary to git
  { i: 3, base: Buffer.from('a\0b\n'), next: Buffer.from('c\0d\n') },
];
const ratio = 0.5;
const wouldReplace = (counts: Map<number, { deleted: number | null }>) =>
  pairs
    .filter(({ i, base }) => (counts.get(i)?.deleted ?? 0) / countLines(base) >= ratio)
    .map((x) => x.i);

describe('numstatPairs', () => {
  it('the same counts and whitespace answers with the -w count started early as after the counts, and no folder left', async () => {
    expect(pairs.map((p) => surelyReplaces(p.base, p.next, ratio))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const waited = await numstatPairs(dir, pairs, wouldReplace);
    const early = await numstatPairs(dir, pairs, wouldReplace, (p) =>
      surelyReplaces(p.base, p.next, ratio),
    );
    expect(early).toEqual(waited);
    expect([...early.whitespaceOnly]).toEqual([0]);
    expect(early.counts.get(1)).toEqual({ added: 12, deleted: 12 });
    expect(early.counts.get(2)).toEqual({ added: 1, deleted: 1 });
    expect(early.counts.get(3)).toEqual({ added: null, deleted: null });
    // the -w count alone, asked for every pair early while the counts ask for none
    const none = await numstatPairs(
      dir,
      pairs,
      () => [],
      () => true,
    );
    expect([...none.whitespaceOnly]).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
