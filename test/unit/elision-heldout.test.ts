/**
 * The placeholder rule of issue 20 item 6 and issue 23 item 3: a comment is a
 * placeholder only where code was removed around it. The floors below are
 * the figures measured once on the fifth held-out sets (docs/reliability.md,
 * `node scripts/elision-figures.mjs --heldout`); a change that catches fewer
 * of them, or flags more real comments than 0.5%, fails here. The properties
 * hold for every placeholder and real comment of the corpora, in files small
 * enough for jsdiff and in files too large for it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { elisionFigures, findElisions, isElisionLine } from '../../src/core/elision.js';
import { MAX_JSDIFF_LINES } from '../../src/core/hunks.js';
import { ROOT } from '../helpers.js';

const corpus = (name: string) =>
  JSON.parse(readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', name), 'utf8'));
const texts = (name: string): string[] =>
  corpus(name).placeholders.map((p: string | { text: string }) =>
    typeof p === 'string' ? p : p.text,
  );
const comments = (name: string): string[] =>
  corpus(name).comments.map((c: { text: string }) => c.text);

const heldOut = texts('heldout-5-real.json');
const freshComments = comments('heldout-5-comments.json');
const tuning = [...texts('tuning-5.json'), ...texts('heldout-4-real.json')];
const realComments = [
  'real-comments.json',
  'heldout-comments.json',
  'heldout-2-comments.json',
  'heldout-3-comments.json',
].flatMap(comments);

/** A code line no placeholder or comment can equal. */
const code = (i: number) => `    total_${i} = weigh(value_${i}, ${i});`;
const file = (n: number) => Array.from({ length: n }, (_, i) => code(i));

describe('placeholders: held-out figures (measured once, 2026-11-25)', () => {
  it('catches at least 148 of the 158 real truncations of heldout-5-real.json (93.7% when measured; 156 since it became tuning data)', () => {
    expect(heldOut.length).toBe(158);
    const f = elisionFigures(heldOut, []);
    expect(f.caught).toBeGreaterThanOrEqual(156);
  });

  it('flags at most 0.5% of the 1,992 fresh real comments, and of the 8,000 earlier ones, each added in a hunk that rewrites code beside it', () => {
    expect(freshComments.length).toBeGreaterThanOrEqual(1900);
    const fresh = elisionFigures([], freshComments);
    expect(fresh.falsePositiveRate).toBeLessThanOrEqual(0.005);
    expect(fresh.flagged).toBeLessThanOrEqual(2); // as measured
    expect(elisionFigures([], realComments).falsePositiveRate).toBeLessThanOrEqual(0.005);
  });

  it("catches every phrasing of this round's tuning sets (tuning-5.json, heldout-4-real.json)", () => {
    expect(elisionFigures(tuning, []).missed).toEqual([]);
  });

  it('on set 7 (frozen before tuning on set 6) catches at least 19 of 22 (86.4%); its real near misses are never flagged where nothing was removed', () => {
    const set7 = corpus('heldout-7-real.json');
    const held7: string[] = set7.placeholders.map((p: { text: string }) => p.text);
    expect(held7.length).toBe(22);
    expect(elisionFigures(held7, []).caught).toBeGreaterThanOrEqual(19);
    // in the hard case (added beside rewritten code) 4 of 8 were flagged when measured: prose such as
    // "// same as before." reads like a placeholder line by line; only where code is kept is it told apart
    const near: string[] = set7.nearMisses.map((p: { text: string }) => p.text);
    expect(elisionFigures([], near).flagged).toBeLessThanOrEqual(4);
    const old = file(40);
    for (const c of near)
      expect(
        findElisions(
          [...old.slice(0, 20), `    ${c}`, ...old.slice(20)].join('\n'),
          old.join('\n'),
        ),
        c,
      ).toEqual([]);
  });

  it('on set 6 (frozen before tuning on set 5) catches at least 42 of 46 (91.3% when measured; 45 since it became tuning data) and flags none of 1,308 fresh real comments', () => {
    const held6 = texts('heldout-6-real.json');
    expect(held6.length).toBe(46);
    expect(elisionFigures(held6, []).caught).toBeGreaterThanOrEqual(45);
    const fresh6 = elisionFigures([], comments('heldout-6-comments.json'));
    expect(fresh6.comments).toBeGreaterThanOrEqual(1300);
    expect(fresh6.falsePositiveRate).toBeLessThanOrEqual(0.005);
    expect(fresh6.flagged).toBe(0); // as measured
  });
});

describe('placeholders: only where code was removed', () => {
  const everything = [
    ...tuning,
    ...heldOut,
    ...realComments.slice(0, 400),
    ...freshComments.slice(0, 200),
  ];

  it('a comment added where no line was removed is never a placeholder, in a small file or one too large to diff', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...everything),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(60, MAX_JSDIFF_LINES),
        fc.constantFrom('', '    ', '\t'),
        (comment, at, n, indent) => {
          const old = file(n);
          const neu = [...old.slice(0, at), `${indent}${comment}`, ...old.slice(at)];
          expect(findElisions(neu.join('\n'), old.join('\n'))).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a placeholder that replaces code is caught, in a small file or one too large to diff, mid-file or at its end', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...tuning),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 25 }),
        fc.constantFrom(60, MAX_JSDIFF_LINES),
        fc.boolean(),
        (placeholder, at, cut, n, atEnd) => {
          const old = file(n);
          const neu = atEnd
            ? [...old.slice(0, n - cut), `    ${placeholder}`]
            : [...old.slice(0, at), `    ${placeholder}`, ...old.slice(at + cut)];
          expect(findElisions(neu.join('\n'), old.join('\n'))).toHaveLength(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('in a file too large to diff, a placeholder between two lines that were not neighbours is caught; between neighbours it is not', () => {
    const old = file(MAX_JSDIFF_LINES);
    const added = [...old.slice(0, 3000), '  // All the rest stays unchanged.', ...old.slice(3000)];
    expect(findElisions(added.join('\n'), old.join('\n'))).toEqual([]);
    const cut = [...old.slice(0, 3000), '  // All the rest stays unchanged.', ...old.slice(3001)];
    expect(findElisions(cut.join('\n'), old.join('\n'))).toHaveLength(1);
    // at the very start and the very end
    expect(findElisions(['// ... rest unchanged ...', ...old].join('\n'), old.join('\n'))).toEqual(
      [],
    );
    expect(findElisions([...old, '// ... rest unchanged ...'].join('\n'), old.join('\n'))).toEqual(
      [],
    );
    expect(
      findElisions([...old.slice(0, -5), '// ... rest unchanged ...'].join('\n'), old.join('\n')),
    ).toHaveLength(1);
  });
});

describe('placeholders: what is not a comment, and what quotes one', () => {
  it("a string in a list that starts with a quote (express's `'not modified' : 304,`) is no VB comment", () => {
    for (const line of [
      "'not modified'       : 304,",
      "'see other'          : 303,",
      "'rest of the code',",
      "'unchanged')",
    ])
      expect(isElisionLine(line)).toBe(false);
    for (const line of [
      "' ... rest of the function ...",
      "' rest of method unchanged",
      "' ... rest of the user's handlers unchanged ...",
    ])
      expect(isElisionLine(line)).toBe(true);
  });

  it('a comment that is a quotation talks about a placeholder', () => {
    expect(isElisionLine('// "see the original file for the rest"')).toBe(false);
    expect(isElisionLine('# `... rest unchanged ...`')).toBe(false);
    expect(isElisionLine('// see the original file for the rest')).toBe(true);
  });

  it('general rules of this round, on phrasings of its tuning sets', () => {
    for (const line of [
      '// ... same parameters', // dots, then "same"
      '// ... keep existing code (loadTopGrossingContent function)', // dots, a verb of keeping, a mark
      '# ... (Image collection code)', // dots, then only a remark in brackets
      '{/* TABS & POSTS LOGIC (Rest of your existing code remains unchanged) */}', // a remark that is a placeholder
      '// remaining getters and setters are not shown for brevity', // a word that only means "left out"
      '<!-- Products, Rentals, Payments tabs remain the same as before -->', // a subject, then "stays as it was"
      '{/* Repeat for other job cards */}',
    ])
      expect(isElisionLine(line), line).toBe(true);
    for (const line of [
      '// sizes are the same.',
      '// Assert that the hosts are the same',
      '/** `@@ -a,b +c,d @@ context`, formatted as git does (",1" is left out). */',
      '* the same folder (same file system), is fsynced and renamed over the',
    ])
      expect(isElisionLine(line), line).toBe(false);
  });
});
