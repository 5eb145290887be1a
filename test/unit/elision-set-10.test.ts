/**
 * Placeholders, the round of set 10 (issue 20 item 6). Set 10 (heldout-10.json)
 * was written before set 9's misses were read and before any rule of this
 * round changed, committed (1350f6b), measured once before the rules were
 * tuned on sets 1-9 and once after: the floors below hold those figures. The
 * assertions on it name no item, so nobody tunes on it. Each rule of this
 * round has the misses of sets 5-9 it was made for and cases it must not take
 * (written for this test, none from set 10). From set 11's round on, set 10 is
 * tuning data (its floor is that round's figure); set 11 was measured once at
 * the end of that round (test/unit/elision-alone.test.ts has its rules).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { elisionFigures, findElisions, isElisionLine } from '../../src/core/elision.js';
import { ROOT } from '../helpers.js';

const set10 = JSON.parse(
  readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', 'heldout-10.json'), 'utf8'),
) as {
  placeholders: Array<{ text: string; syntax: string }>;
  nearMisses: Array<{ text: string }>;
};
const code = (i: number) => `    total_${i} = weigh(value_${i}, ${i});`;
const file = (n: number) => Array.from({ length: n }, (_, i) => code(i));

describe('placeholders: set 10 (held out; measured once before and once after this round)', () => {
  const held = set10.placeholders.map((p) => p.text);
  const near = set10.nearMisses.map((p) => p.text);

  it('is the frozen set: 270 phrasings in 26 syntaxes, 55 near misses', () => {
    expect(held).toHaveLength(270);
    expect(new Set(set10.placeholders.map((p) => p.syntax)).size).toBe(26);
    expect(near).toHaveLength(55);
  });

  it('catches at least as many as measured after this round (the number only)', () => {
    expect(elisionFigures(held, []).caught).toBeGreaterThanOrEqual(SET10_CAUGHT);
  });

  it('flags no near miss added where nothing was removed, and at most as many as measured beside rewritten code', () => {
    expect(elisionFigures([], near).flagged).toBeLessThanOrEqual(SET10_NEAR_FLAGGED);
    const old = file(40);
    const flagged = near.filter(
      (c) =>
        findElisions([...old.slice(0, 20), `    ${c}`, ...old.slice(20)].join('\n'), old.join('\n'))
          .length > 0,
    );
    expect(flagged.length).toBe(0);
  });
});

describe("placeholders: set 11 (real, collected after this round's tuning, measured once; held out for the next round)", () => {
  const set11 = JSON.parse(
    readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', 'heldout-11-real.json'), 'utf8'),
  ) as typeof set10;
  const held = set11.placeholders.map((p) => p.text);
  const near = set11.nearMisses.map((p) => p.text);

  // measured once in set 10's round (47, main's rules of then too) and once at the end of its own round
  // (49, a74b68f); tuned on after that (53, 89ad87e: a tuning figure)
  it('catches at least 53 of its 55 (held out: 49 at a74b68f), flags at most 16 of its 42 near misses beside rewritten code and none where nothing was removed', () => {
    expect(held).toHaveLength(55);
    expect(near).toHaveLength(42);
    expect(elisionFigures(held, []).caught).toBeGreaterThanOrEqual(53);
    expect(elisionFigures([], near).flagged).toBeLessThanOrEqual(16);
    const old = file(40);
    expect(
      near.filter(
        (c) =>
          findElisions(
            [...old.slice(0, 20), `    ${c}`, ...old.slice(20)].join('\n'),
            old.join('\n'),
          ).length > 0,
      ),
    ).toEqual([]);
  });
});

describe('placeholders: the rules tuned on sets 5-9, each with what it must not take', () => {
  const yes = (line: string) => expect(isElisionLine(line), line).toBe(true);
  const no = (line: string) => expect(isElisionLine(line), line).toBe(false);

  it('"the rest of" a thing, then nothing, whose it is, or that it stays or would go here', () => {
    yes('// Rest of code for IndividualPlayer component');
    yes('<!-- rest of the form -->');
    yes('// Rest of the component logic would go here, using the declared variables.');
    yes('// Rest of the component remains the same, but update temperature display');
    yes('# rest of the tests in this file');
    no('// rest of the loop is the slow path');
    no('// rest of the tokens in reverse order');
    no('# rest of the list will go in here');
    no('# rest of the args for the child process are forwarded');
    no('// Rest of the header: flags, then length');
  });

  it('others done "similarly" or "the same way", the likeness closing the sentence', () => {
    yes('// Other functions can be similarly updated.');
    yes('// other handlers follow the same pattern');
    no('// Other methods are documented similarly in the wiki');
  });

  it('"stays (largely) unchanged" after a mark and a code noun; not after any subject', () => {
    yes(
      '// Other methods remain largely unchanged, but keeping them here for completeness if needed',
    );
    yes('// other methods stay mostly unchanged');
    no('// the total stays mostly unchanged');
  });

  it('the generic code noun after a mark, then a comma or nothing', () => {
    yes('// all other code, including render with Progress reference listed above');
    no('// other code paths call this directly');
    no('// existing logic: retry twice, then fail');
  });

  it('a status, a colon and a list of short items', () => {
    yes('// Unchanged: audio, indicator, appearance, history retention, etc.');
    no('// Unchanged: the parser is reused, as is');
  });

  it('keep a mark and a code noun, then nothing or "but"; not under a condition', () => {
    yes('# Keep existing implementation but ensure compatibility');
    no('// keep existing handlers when the socket reconnects');
    no('// keep existing handlers registered');
  });

  it('"existing" and one word is a placeholder', () => {
    yes('{/* existing children */}');
    yes('# existing fixtures');
  });

  it('words in double quotes are quoted, not said, when two words are left', () => {
    no('* defaulting to 303 "See Other".');
    no('* `"back"` etc.');
  });

  it("a quotation of a placeholder, in a remark or a doc comment, talks about one (found by guard's own hook)", () => {
    no(
      '// a remark in brackets that is a placeholder itself: "TABS LOGIC (Rest of your existing code remains unchanged)"',
    );
    no('/** "rest unchanged helpers + new helper stubs", "rest same as before" */');
    yes('// TABS LOGIC (Rest of your existing code remains unchanged)');
  });
});

describe('placeholders: a tuning placeholder caught in one comment syntax is caught in every one', () => {
  const TUNING = [
    'heldout-9-real.json',
    'heldout-8-real.json',
    'heldout-7-real.json',
    'heldout-6-real.json',
    'heldout-5-real.json',
    'tuning-5.json',
    'heldout-4-real.json',
    'heldout-3-real.json',
    'heldout-placeholders.json',
    'heldout-2-placeholders.json',
    'placeholders.json',
    'tuning-issue20.json',
    'held-out.json',
  ];
  const texts = TUNING.flatMap((n) =>
    (
      JSON.parse(readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', n), 'utf8'))
        .placeholders as Array<string | { text: string }>
    ).map((p) => (typeof p === 'string' ? p : p.text)),
  );
  const open =
    /^\s*(?:\d+\s+)?(?:\{\/\*|\/\*+|<!--|\(\*|\{-|\{#|\{\{!--|<%--|@\*|--\[\[|"""|'''|\/\/+|#+|--|;+|%+|'|@?rem\s|\*)\s*/i;
  const close = /\s*(?:\*\/\}|\*\/|-->|\*\)|-\}|#\}|--\}\}|--%>|\*@|\]\]|"""|''')\s*$/;
  const bodies = [
    ...new Set(
      texts
        .filter((t) => isElisionLine(t))
        .map((t) => t.replace(open, '').replace(close, '').trim()),
    ),
  ].filter((b) => b !== '');
  const syntaxes: Array<(b: string) => string> = [
    (b) => `// ${b}`,
    (b) => `# ${b}`,
    (b) => `-- ${b}`,
    (b) => `; ${b}`,
    (b) => `;; ${b}`,
    (b) => `% ${b}`,
    (b) => `REM ${b}`,
    (b) => `' ${b}`,
    (b) => `/* ${b} */`,
    (b) => `<!-- ${b} -->`,
    (b) => `{/* ${b} */}`,
    (b) => `""" ${b} """`,
    (b) => `(* ${b} *)`,
    (b) => `{- ${b} -}`,
    (b) => `//${b}`,
    (b) => `# ${b.toUpperCase()}`,
    (b) => `//    ${b.replace(/ /g, '  ')}`,
    (b) => `#\t${b}`,
    (b) => `-- ${b.toLowerCase()}`,
  ];

  it('in 14 syntaxes, upper and lower case, without a space or with doubled spaces (about 27,000 renderings)', () => {
    expect(bodies.length).toBeGreaterThan(1000);
    const missed = bodies.flatMap((b) =>
      syntaxes.map((s) => s(b)).filter((l) => !isElisionLine(l)),
    );
    expect(missed).toEqual([]);
  });
});

// the figures measured after this round (docs/reliability.md); set before the test ran on them
// held out in its round: 233 / 270 before that round's rules (feb8024), 234 / 270 after (86.7%);
// tuning data in set 11's round, whose rules (after code, five syntaxes, ALONE) take all 270
const SET10_CAUGHT = 270;
const SET10_NEAR_FLAGGED = 3; // 3 / 55 before and after
