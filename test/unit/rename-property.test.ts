/**
 * Renames against git: files moved with and without edits, staged, measured
 * by guard's check pipeline and by `git diff --cached --numstat -M`. Where git
 * pairs a rename, guard reports the new path with its old one and git's line
 * counts; where git does not, guard sees a delete and an add as git does.
 * GUARD_PROPERTY_RUNS sets the batches (npm run soak).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { collectFacts } from '../../src/git/changes.js';
import { stagedDiffSplit } from '../../src/git/diff.js';
import { cleanEnv, cleanupRepos, makeRepo } from '../helpers.js';

Object.assign(process.env, cleanEnv());
const RUNS = Number(process.env.GUARD_PROPERTY_RUNS ?? 4);
afterAll(() => cleanupRepos());

const line = fc.constantFrom('a', 'b', 'alpha beta', '  indented', 'x = 1', '', 'return y');
const move = fc.record({
  lines: fc.array(line, { minLength: 1, maxLength: 30 }),
  edits: fc.array(fc.tuple(fc.nat(), line), { maxLength: 8 }),
});

describe('renames agree with git diff --numstat -M', () => {
  it(`${RUNS} batches of 20 moves, with and without edits`, async ({ task }) => {
    const seen = { renamed: 0, split: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(move, { minLength: 20, maxLength: 20 }), async (moves) => {
        const repo = makeRepo();
        moves.forEach((m, i) =>
          repo.write(`old${i}.txt`, m.lines.map((l, k) => `${l} ${i}.${k}\n`).join('')),
        );
        repo.commitAll('base');
        moves.forEach((m, i) => {
          const ls = m.lines.map((l, k) => `${l} ${i}.${k}`);
          for (const [at, l] of m.edits) ls[at % ls.length] = l;
          rmSync(path.join(repo.dir, `old${i}.txt`));
          repo.write(`d/new${i}.txt`, ls.map((l) => `${l}\n`).join(''));
        });
        repo.git(['add', '-A']);
        const want = new Map<string, { oldPath?: string; added: number; deleted: number }>();
        const out = repo.git(['diff', '--cached', '--numstat', '-z', '-M']).split('\0');
        for (let i = 0; i < out.length; i++) {
          if (!out[i]) continue;
          const [a, d, p] = out[i]!.split('\t');
          if (p === '')
            (want.set(out[i + 2]!, { oldPath: out[i + 1]!, added: Number(a), deleted: Number(d) }),
              (i += 2));
          else want.set(p!, { added: Number(a), deleted: Number(d) });
        }
        const split = stagedDiffSplit(repo.dir);
        const facts = (
          await collectFacts(repo.dir, await split.entries, {
            maxBytes: 50 * 1024 * 1024,
            countsReady: split.counts,
          })
        ).facts;
        const got = new Map(
          facts.map((f) => [
            f.path,
            {
              ...(f.oldPath !== undefined ? { oldPath: f.oldPath } : {}),
              added: f.linesAdded,
              deleted: f.linesDeleted,
            },
          ]),
        );
        expect(got).toEqual(want);
        for (const w of want.values()) if (w.oldPath !== undefined) seen.renamed++;
        seen.split += 20 - [...want.values()].filter((w) => w.oldPath !== undefined).length;
      }),
      { numRuns: RUNS },
    );
    // the generator makes both kinds: moves git pairs (similar enough) and ones it sees as delete + add
    console.log(`renames: ${JSON.stringify(seen)}`);
    task.meta.renames = seen; // npm run soak reads it from vitest's JSON report
    expect(seen.renamed).toBeGreaterThan(0);
  }, 600_000);
});
