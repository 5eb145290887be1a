/**
 * Held-out sets 8 and 9 of the placeholder rule (issue 20 item 6, issue 23 item 3):
 * 105 real truncations and 39 real near misses, collected through the code
 * index with search words no earlier set used, committed (0a96122) before it
 * was run against any rule, and measured once on main's rules (05d739e):
 * 95 / 105 = 90.5% caught; near misses flagged 12 / 39 beside rewritten code,
 * 0 / 39 where nothing was removed. The rules were then tuned on its misses,
 * so from here on it is tuning data (docs/reliability.md); the floors below
 * hold what the tuning reached, and each new rule has a case that it must
 * not take.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { elisionFigures, findElisions, isElisionLine } from '../../src/core/elision.js';
import { MAX_JSDIFF_LINES } from '../../src/core/hunks.js';
import { ROOT } from '../helpers.js';

const set8 = JSON.parse(
  readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', 'heldout-8-real.json'), 'utf8'),
) as {
  placeholders: Array<{ text: string }>;
  nearMisses: Array<{ text: string }>;
};
const placeholders = set8.placeholders.map((p) => p.text);
const nearMisses = set8.nearMisses.map((p) => p.text);

const code = (i: number) => `    total_${i} = weigh(value_${i}, ${i});`;
const file = (n: number) => Array.from({ length: n }, (_, i) => code(i));

describe('placeholders: set 8 (held out until measured once at 90.5%, tuning data since)', () => {
  it('is the frozen set: 105 truncations, 39 near misses', () => {
    expect(placeholders).toHaveLength(105);
    expect(nearMisses).toHaveLength(39);
  });

  it('catches at least 104 of the 105 truncations (95 before the rules were tuned on it)', () => {
    expect(elisionFigures(placeholders, []).caught).toBeGreaterThanOrEqual(104);
  });

  it('flags no near miss added where nothing was removed, and at most 12 of 39 beside rewritten code (as measured)', () => {
    expect(elisionFigures([], nearMisses).flagged).toBeLessThanOrEqual(12);
    const old = file(40);
    for (const c of nearMisses)
      expect(
        findElisions(
          [...old.slice(0, 20), `    ${c}`, ...old.slice(20)].join('\n'),
          old.join('\n'),
        ),
        c,
      ).toEqual([]);
  });

  it('a set-8 truncation that replaces code is caught, in a small file or one too large to diff', () => {
    const caught = placeholders.filter((p) => isElisionLine(p));
    fc.assert(
      fc.property(
        fc.constantFrom(...caught),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 25 }),
        fc.constantFrom(60, MAX_JSDIFF_LINES),
        (placeholder, at, cut, n) => {
          const old = file(n);
          const neu = [...old.slice(0, at), `    ${placeholder}`, ...old.slice(at + cut)];
          expect(findElisions(neu.join('\n'), old.join('\n'))).toHaveLength(1);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a set-8 truncation or near miss added where no line was removed is never a placeholder', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...placeholders, ...nearMisses),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(60, MAX_JSDIFF_LINES),
        (comment, at, n) => {
          const old = file(n);
          const neu = [...old.slice(0, at), `    ${comment}`, ...old.slice(at)];
          expect(findElisions(neu.join('\n'), old.join('\n'))).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('placeholders: the rules tuned on set 8, each with what it must not take', () => {
  const yes = (line: string) => expect(isElisionLine(line), line).toBe(true);
  const no = (line: string) => expect(isElisionLine(line), line).toBe(false);

  it('dots before the comment opener: `...    // the rest of the code is unchanged`; spread syntax is code', () => {
    yes('...    // the rest of the code in the method is unchanged');
    yes('… # rest of the file unchanged');
    no('    ...defaults, // the rest unchanged');
    no('...    // compute the sum');
  });

  it('a status in brackets, then dots; not a status in brackets that explains the line', () => {
    yes('// (unchanged) ... all the way until:');
    yes('# [omitted] ...');
    no('// (unchanged) interpret date as somewhere inside a "billing month"');
  });

  it('"keep the rest of the CODE" followed by how it stays or what it holds; not by what to do with it', () => {
    yes('// Keep the rest of the code exactly as it was in the working version');
    yes('// Keep the rest of the functions (getAllCourses, getCourseById, postFeedback, etc.)');
    yes('# Keep the rest of the tests as they were');
    yes('// keep the rest of the code');
    no('// keep the rest of the code running if this fails');
    no('// keep the rest of the code changed as little as possible');
    no('// keep the rest of the code tidy');
    no('# keep the rest of the config keys sorted');
    no('// Keep the rest of node.data stable (notably onSelect).');
    no('// keep the rest of the playground working.');
  });

  it('"no changes to the rest of the CODE", whatever follows unless it is a condition', () => {
    yes('// No changes to the rest of the file are needed for this specific error.');
    no('// no changes to the rest of the file are needed if the imports exist');
    no('// no changes to the rest of the state happen here');
  });

  it('a remark in brackets opened by a word that only means "left out", naming code', () => {
    yes('// [omitted state variables and event definitions for brevity]');
    yes(
      '// [Omitted standard invoice creation logic for brevity, keeping existing implementation]',
    );
    no('// (omitted when empty)');
    no('// (omitted if the value is the default)');
  });

  it('"everything else stays exactly the same"; not any subject that stays exactly the same', () => {
    yes('// everything else stays exactly the same');
    no('// the width stays exactly the same');
  });
});

describe('placeholders: set 9 (collected after tuning on set 8, measured once at 94.3%; tuning data since the round of set 10)', () => {
  const set9 = JSON.parse(
    readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', 'heldout-9-real.json'), 'utf8'),
  ) as typeof set8;
  const held9 = set9.placeholders.map((p) => p.text);
  const near9 = set9.nearMisses.map((p) => p.text);

  it('catches all 53 of its truncations (50 when measured held out; the rules were tuned on its three misses since)', () => {
    expect(held9).toHaveLength(53);
    expect(elisionFigures(held9, []).caught).toBe(53);
  });

  it('flags none of its 16 near misses where nothing was removed, and at most 4 beside rewritten code (as measured)', () => {
    expect(near9).toHaveLength(16);
    expect(elisionFigures([], near9).flagged).toBeLessThanOrEqual(4);
    const old = file(40);
    const flagged = near9.filter(
      (c) =>
        findElisions([...old.slice(0, 20), `    ${c}`, ...old.slice(20)].join('\n'), old.join('\n'))
          .length > 0,
    );
    expect(flagged.length).toBe(0);
  });
});
