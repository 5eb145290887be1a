/**
 * leastDeletedLines (core/lines.ts) is a lower bound of git's own numstat deletions, as
 * `guard write` measures them (`diff --no-index --ignore-cr-at-eol`): guard write starts the
 * `-b` count beside the numstat when the bound alone reaches changeRatio, so a bound above
 * git's count would start a process git's answer does not call for. Random pairs (repeated,
 * moved and CRLF lines, lone CRs, no trailing newline, empty sides) are written into one
 * folder and measured by one git process per run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { leastDeletedLines } from '../../src/core/lines.js';
import { numstatFolders } from '../../src/git/measure.js';
import { cleanEnv } from '../helpers.js';

Object.assign(process.env, cleanEnv());

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const line = fc.constantFrom('a', 'b', 'c', 'a\r', 'b\r', 'x y', '', '\r', '  a', 'a  ', '}');
const text = fc
  .tuple(fc.array(line, { maxLength: 12 }), fc.boolean())
  .map(([ls, lf]) => Buffer.from(ls.join('\n') + (lf && ls.length > 0 ? '\n' : ''), 'latin1'));

describe('leastDeletedLines', () => {
  it('never exceeds the deletions git counts for the same pair', async () => {
    const pairs = fc.sample(fc.tuple(text, text), { numRuns: 300 });
    const dir = mkdtempSync(path.join(tmpdir(), 'guard-least-'));
    dirs.push(dir);
    mkdirSync(path.join(dir, 'a'));
    mkdirSync(path.join(dir, 'b'));
    pairs.forEach(([old, next], i) => {
      writeFileSync(path.join(dir, 'a', String(i)), old);
      writeFileSync(path.join(dir, 'b', String(i)), next);
    });
    const counts = await numstatFolders(dir);
    let reached = 0;
    pairs.forEach(([old, next], i) => {
      const git = counts.get(String(i))?.deleted ?? 0;
      const bound = leastDeletedLines(old, next);
      expect(
        bound,
        JSON.stringify([old.toString('latin1'), next.toString('latin1')]),
      ).toBeLessThanOrEqual(git);
      if (bound > 0 && bound === git) reached++;
    });
    // the bound is not trivially zero: it meets git's count on many pairs
    expect(reached).toBeGreaterThan(20);
  });

  it('counts lines the new side lacks, each as often as it is missing', () => {
    const b = (s: string) => Buffer.from(s);
    expect(leastDeletedLines(b('a\nb\nc\n'), b('a\nc\n'))).toBe(1);
    expect(leastDeletedLines(b('a\na\na\n'), b('a\n'))).toBe(2);
    expect(leastDeletedLines(b('a\r\nb\r\n'), b('a\nb'))).toBe(0);
    expect(leastDeletedLines(b('bench note\nshadow 1\n'), b('bench note\nguard 1\n'))).toBe(1);
    expect(leastDeletedLines(b(''), b('x\n'))).toBe(0);
  });
});
