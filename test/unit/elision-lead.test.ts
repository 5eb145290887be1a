/**
 * Placeholders, the round of set 12 (issue 20 item 6): general rules for the
 * ALONE rule (a comment on weaker words where it is all a hunk adds in place of
 * code), tuned on sets 1-11 and the real-comment corpora only; set 12 was
 * measured once at the end, set 13 is frozen for the next round (neither is run
 * here). Each rule with what it must not take:
 *
 * - the claim is the comment's first words: dots then words however long (not a
 *   path), or a lead of two to six words up to the first clause break that is a
 *   placeholder by itself, whatever the comment goes on to say;
 * - code the reader already has, sent, or that goes here from elsewhere; that
 *   nothing else needs to change; the agent narrating its edit ("I kept ...");
 *   that only the changed part is shown;
 * - other languages' marks and status words, scripts without spaces;
 * - "the usual", "boilerplate", a list of words trailing off in dots;
 * - beside a line of new code for every four lines of code lost (`mostly`);
 * - Markdown by its own syntax: outside code fences only an HTML comment.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { elisionFigures, findElisions } from '../../src/core/elision.js';
import { elisionProbe } from '../elision-probe.js';
import { ROOT } from '../helpers.js';

const { code, file, replacing, besideNewCode, besideRewrite, addedOnly, onlyAlone, never } =
  elisionProbe();

describe('placeholders: the claim is the comment’s first words', () => {
  it('dots, then what the left-out code did, however long and whatever its words', () => {
    onlyAlone([
      '    // ... the validation that might run before the form is submitted to the server',
      '    # ... state via useReducer() and the handlers that dispatch to it',
      '    // … then the retry loop we had, with its backoff and jitter',
    ]);
  });

  it('not a path after the dots, nor a reason the code went or a condition', () => {
    never([
      '    // ../../node_modules/.pnpm/ws@8.22.2/node_modules/ws/lib/sender.js',
      '    //     .../fields/FieldFile/__tests__/FieldFile.spec.ts     7ms    1.01s',
      '    // ... moved to utils.ts with the other helpers',
      '    // ... only if the cache is cold',
    ]);
  });

  it('a lead of two to six words that is a placeholder by itself, then anything', () => {
    onlyAlone([
      '    # Same as above but for port 8080',
      '    // Code continues, using the parsed rows to fill the table',
      '    // [UNCHANGED reducers from your last message, make sure they are all there]',
      '    // rest unchanged - the parser and its tests',
    ]);
  });

  it('not when what follows explains, runs on to the next line, or quotes', () => {
    never([
      '    # In other cases, to support the directive we trick the shell',
      '    // Old format: for backward compatibility,',
      '    // the following is effectively the same,',
      '    // "same as above", but for the quoted case',
      '    // Same as above, because the cache is shared',
    ]);
  });
});

describe('placeholders: code the reader has, no change, the agent’s own words', () => {
  it('code the reader already has, sent, or that goes here from elsewhere', () => {
    onlyAlone([
      '    # the loaders you already wrote',
      '    // keep your current model definition',
      '    // [keep the constructor you have]',
      '    // [the 200 lines of reducer code you sent]',
      '    // code from step 2 goes here',
      '    // (the useEffect hooks from before)',
      '    // (from your snippet)',
    ]);
  });

  it('that nothing else needs to change, the agent narrating its edit, only the changed part shown', () => {
    onlyAlone([
      '    // nothing else in this file needs to change',
      "    // Don't change anything below this line",
      '    // I kept everything else the same',
      "    // (I omitted the CSS since it didn't change)",
      "    # I'm only showing the changed function; the rest of the module is unchanged.",
      '    // Only showing the relevant changes',
    ]);
  });

  it('by the ALONE rule only: not beside rewritten code, not where three lines went', () => {
    for (const line of [
      '    # the loaders you already wrote',
      '    // nothing else in this file needs to change',
      '    // I kept everything else the same',
      '    // Code continues, using the parsed rows to fill the table',
    ]) {
      expect(besideRewrite(line), line).toBe(false);
      expect(replacing(line, 3), line).toBe(false);
    }
  });

  it('not prose about the reader, a change, or what is shown', () => {
    never([
      '    // in your own implementation you could ignore this',
      '    // or suppose you have some /admin',
      '    // if you have a proxy, set it here',
      "    // don't change this value",
      '    // nothing changes if the cache is cold',
      '    // only show the first ten rows',
      '    // I/O errors are retried by the caller',
    ]);
  });
});

describe('placeholders: other languages, the usual, lists trailing off', () => {
  it('marks and status words of other languages, scripts without spaces', () => {
    onlyAlone([
      '    // funzioni precedenti invariate',
      '    // demais métodos permanecem iguais',
      '    // các hàm còn lại giữ nguyên',
      '    // fungsi lainnya tetap sama',
      '    // overige methodes ongewijzigd',
      '    // 其余代码不变',
      '    // 기존 코드 유지',
    ]);
  });

  it('"the usual", "boilerplate", a list of words trailing off in dots', () => {
    onlyAlone([
      '    // the usual getters and setters',
      '    // boilerplate omitted',
      '    // constructor, getters, setters...',
    ]);
    never(['    // unwrap (0, ...)', '    // wait for it...']);
  });
});

describe('placeholders: beside a line of new code for every four lines of code lost', () => {
  it('a comment of words counts where the hunk lost four lines of code for each it added', () => {
    const line = '    // other handlers for this page';
    expect(besideNewCode(line, 20, 1)).toBe(true);
    expect(besideNewCode(line, 20, 5)).toBe(true);
    // a refactor: more new code than a fourth of what went, or too little went
    expect(besideNewCode(line, 20, 6)).toBe(false);
    expect(besideNewCode(line, 8, 3)).toBe(false);
    expect(besideNewCode(line, 4, 1)).toBe(false);
  });

  it('not a bare `...` nor a comment after code there (a stub, a label in markup)', () => {
    expect(besideNewCode('    ...', 20, 1)).toBe(false);
    expect(besideNewCode('    <td>{/* existing amount expression */}</td>', 20, 1)).toBe(false);
  });
});

describe('placeholders: Markdown by its own syntax', () => {
  const prose = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} of the guide, in prose.`);
  const md = (line: string, fenced: boolean) => {
    const old = ['# Guide', '', ...prose, ''].join('\n');
    const body = fenced ? ['```python', line, '```'] : [line];
    return {
      old,
      neu: ['# Guide', '', ...prose.slice(0, 2), ...body, ...prose.slice(10), ''].join('\n'),
    };
  };

  it('outside a fence a `#` line is a heading and a `*` line a bullet: never a placeholder there', () => {
    for (const line of ['## Rest of the guide unchanged', '* [Other sections](#other-sections)']) {
      const { old, neu } = md(line, false);
      expect(findElisions(neu, old, 3, 'docs/README.md'), line).toEqual([]);
      // the same text in a file of code is read as a comment
      expect(findElisions(neu, old, 3, 'src/guide.py').length, line).toBe(1);
    }
  });

  it('an HTML comment outside a fence, and any comment inside one, still counts', () => {
    for (const [line, fenced] of [
      ['<!-- rest of the guide unchanged -->', false],
      ['# ... rest of the example unchanged', true],
    ] as const) {
      const { old, neu } = md(line, fenced);
      expect(findElisions(neu, old, 3, 'README.md').length, line).toBe(1);
    }
  });
});

describe('placeholders: the claim rules, as properties', () => {
  const plain = fc.constantFrom(
    'table',
    'rows',
    'port',
    'the',
    'parsed',
    'values',
    'for',
    'each',
    'and',
    'a',
    'to',
    'in',
    'layout',
    'retries',
  );
  const tail = fc.array(plain, { minLength: 1, maxLength: 12 }).map((w) => `${w.join(' ')} x`);

  it('a lead that is a placeholder by itself stays one whatever plain words follow its clause break', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          'Same as above',
          'Code continues',
          'rest unchanged',
          'Existing handlers unchanged',
        ),
        fc.constantFrom(', ', ' but ', ' - ', ': ', '; '),
        // not `Code continues: NOUN and x`: a colon then two words joined by `and` reads as a label
        // of what follows (`// Code continues: table and x`, found by a run of 20,000; the rules
        // before this round read it the same), a rare draw that failed CI's 200 runs at random
        tail.filter((t) => !/^\S+ and x$/.test(t)),
        (lead, cut, words) => {
          const line = `    // ${lead}${cut}${words}`;
          expect(replacing(line, 20), line).toBe(true);
          expect(addedOnly(line), line).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('dots then plain words are a placeholder alone where code went, and never where nothing went', () => {
    fc.assert(
      fc.property(fc.constantFrom('...', '…', '..'), tail, (dots, words) => {
        const line = `    # ${dots} ${words}`;
        expect(replacing(line, 20), line).toBe(true);
        expect(addedOnly(line), line).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('placeholders: set 12 after its one measurement, set 13 frozen', () => {
  const corpus = (name: string) =>
    JSON.parse(readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', name), 'utf8')) as {
      placeholders: Array<{ text: string; search: string }>;
      nearMisses: Array<{ text: string; search: string }>;
    };

  it('set 12 (tuning data from now on) keeps its figures: at least 65 / 68 caught, its near misses at most 11 / 45 beside rewritten code and none where nothing was removed', () => {
    const set12 = corpus('heldout-12-real.json');
    const held = elisionFigures(
      set12.placeholders.map((p) => p.text),
      set12.nearMisses.map((p) => p.text),
    );
    expect(held.caught).toBeGreaterThanOrEqual(65);
    expect(held.flagged).toBeLessThanOrEqual(11);
    for (const near of set12.nearMisses)
      expect(addedOnly(`    ${near.text}`), near.text).toBe(false);
  });

  it('set 13 keeps the shape it was frozen with: 87 placeholders and 58 near misses from 29 search words', () => {
    const set13 = corpus('heldout-13-real.json');
    expect(set13.placeholders).toHaveLength(87);
    expect(set13.nearMisses).toHaveLength(58);
    expect(new Set([...set13.placeholders, ...set13.nearMisses].map((p) => p.search)).size).toBe(
      29,
    );
  });
});
