/**
 * Placeholders, the round of set 13 (issue 20 item 6): general rules for the
 * ALONE rule (a comment on weaker words where it is all a hunk adds in place of
 * code), tuned on sets 1-12, the real-comment corpora and the probes this
 * round's engineer wrote (`tuning-13-written.json`) only; set 13 was measured
 * once at the end (its floor is here since), set 14 is frozen for the next round. Each rule
 * with what it must not take:
 *
 * - likeness in the first words: `same logic for`, `ditto for`, `mirror of`;
 *   one per each of the others; accessors as a list; the standard members;
 *   code to be put back; all that follows kept; a count of lines left out;
 *   scissors; the text shown shortened; a template's slot for the reader's code;
 * - a long claim before a list of names (`... stay as they were: a, b`);
 * - a whole sentence of no change, past the short form's twelve words;
 * - code in the question, the tutorial, the original;
 * - other languages' small words that are English vetoes (`resto do código`);
 * - a dotted comment is a path listing only when its first word is a path.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { elisionFigures } from '../../src/core/elision.js';
import { elisionCorpus, elisionProbe } from '../elision-probe.js';

const { code, file, replacing, besideRewrite, addedOnly, onlyAlone, never } = elisionProbe();
const corpus = elisionCorpus;

describe('placeholders: code like other code, said in the first words', () => {
  it('a word of likeness and what it is like or where it goes again, whatever follows', () => {
    onlyAlone([
      '    // same logic for the PUT handler',
      '    # ditto for delete_user and update_user',
      '    // mirror of the block above for the left wall',
      '    // copy of the x-axis code with y in place of x',
      '    /* same pattern for delete, patch and head */',
      '    // Same logic as the importer in legacy-import.ts but for CSV files',
    ]);
  });

  it('not a verb of copying, a condition, a person explaining, nor code named by a call or a member', () => {
    never([
      '    // copy reference to target object',
      '    // mirror the x axis when the screen is flipped',
      '    // Similar to the old parser, we skip blank lines because they carry no data',
      '    // same as validateUser(input) but throws',
      '    // same boolean-to-string assignment as VitestPlugin.configResolved',
      '    // Identical copies of `quickSort`, see the comment at the top of the file.',
    ]);
  });

  it('one per each of the others, the members every class has, code to be put back', () => {
    onlyAlone([
      '    // one of these per endpoint',
      '    # one block like this per table',
      '    // getters/setters',
      '    // standard CRUD views',
      '    // TODO: paste your validation back in',
      '    // keep everything from here to the end of the file',
    ]);
    never([
      '    // one connection per worker',
      '    // standard deviation of the samples',
      '    // read/write',
      '    // keep the cache warm',
    ]);
  });

  it('a count of the lines left out, scissors, the text shown shortened, a slot for the reader’s code', () => {
    onlyAlone([
      '    // [200 lines of generated bindings]',
      '    # <about 80 lines of plotting code>',
      '    // 40 more entries like the above',
      '    // ---- cut ----',
      '    // 8<----',
      '    // (excerpt)',
      '    // shortened for the answer',
      '    # <your model definition>',
    ]);
    never([
      '    // find common items in the trimmed index intervals.',
      '    // 2 retries, then give up',
      '    // cut the string at the first space',
    ]);
  });
});

describe('placeholders: by the ALONE rule only', () => {
  it('this round’s kinds are not read beside rewritten code, nor where three lines went', () => {
    for (const line of [
      '    # ditto for delete_user and update_user',
      '    // mirror of the block above for the left wall',
      '    // one of these per endpoint',
      '    // getters/setters',
      '    // [200 lines of generated bindings]',
      '    // All of the other methods in this class stay exactly as they were in the original version of the file',
      '    // body as in the question',
    ]) {
      expect(besideRewrite(line), `${line} (beside a rewrite)`).toBe(false);
      expect(replacing(line, 3), `${line} (three lines went)`).toBe(false);
    }
  });
});

describe('placeholders: long claims', () => {
  it('a claim before a list of the names it is about', () => {
    onlyAlone([
      '    // The following handlers stay exactly as they were in the previous version: onOpen, onClose',
      '    // these three functions are unchanged from the version you pasted: parse, lex, emit',
    ]);
  });

  it('a whole sentence of no change with a pointer at kept code, past twelve words', () => {
    onlyAlone([
      '    // All of the other methods in this class stay exactly as they were in the original version of the file',
      '    -- The other three tables are created in exactly the same way as the users table above',
      '    // The component’s other effects and callbacks have not been modified in any way by this change',
    ]);
    never([
      '    // Before returning, trim any unmodified context lines off the end of patchedLines and reduce',
      '    // check never writes the work tree in auto mode: before and after are the same as each other here',
      '    // The rest of dist/ stays as tsc wrote it (tests and the bench import modules',
      '    // the remark begins with a mark: "(same file system)", "(left as it is)" explain the words before them',
      '    // Nothing else in the reducer has been touched by me so the other action types work as before',
    ]);
  });
});

describe('placeholders: code elsewhere, other languages, paths', () => {
  it('code in the question or the tutorial; another language’s small words', () => {
    onlyAlone([
      '    // body as in the question',
      '    # steps 2-5 as in the tutorial',
      '    // resto do código igual',
      '    // kodun geri kalanı aynı',
    ]);
  });

  it('dots, then what the code did with its conditions and results past the first words', () => {
    onlyAlone([
      '    // ... code that runs when the button is clicked',
      '    // ... helper that returns the parsed rows',
      '    // ... validation: throw if the email is empty',
    ]);
    never([
      '    // ... only if the cache is cold',
      '    // ... when the user is not logged in',
      '    // ... moved to utils.ts with the helpers that return rows',
    ]);
  });

  it('a path after dotted words names where the rest is; a path first is a listing', () => {
    onlyAlone(['    # ... see scripts/build.sh for the rest']);
    never(['    // ../../node_modules/.pnpm/ws@8.22.2/node_modules/ws/lib/sender.js']);
  });
});

describe('placeholders: the sets of this round', () => {
  it('the probes written this round (tuning data): at least 157 of 160, near misses never where nothing was removed', () => {
    const probes = corpus('tuning-13-written.json');
    const f = elisionFigures(
      probes.placeholders.map((p) => p.text),
      [],
    );
    expect(f.placeholders).toBe(160);
    expect(f.caught).toBeGreaterThanOrEqual(157);
    for (const near of probes.nearMisses)
      expect(addedOnly(`    ${near.text}`), near.text).toBe(false);
  });

  it('set 12 (tuning data) keeps its figure with this round’s rules: at least 67 / 68', () => {
    const set12 = corpus('heldout-12-real.json');
    expect(
      elisionFigures(
        set12.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(67);
  });

  it('set 13 (measured once at the end of its round, tuning data from now on): at least 87 / 87, its near misses never where nothing was removed', () => {
    const set13 = corpus('heldout-13-real.json');
    const f = elisionFigures(
      set13.placeholders.map((p) => p.text),
      [],
    );
    expect(f.caught).toBeGreaterThanOrEqual(87);
    for (const near of set13.nearMisses)
      expect(addedOnly(`    ${near.text}`), near.text).toBe(false);
  });

  it('set 14 is the frozen held-out set of the next round: 120 placeholders and 38 near misses from 32 search words and 12 bug reports (no rule is run on it here)', () => {
    const set14 = corpus('heldout-14-real.json');
    expect(set14.placeholders).toHaveLength(120);
    expect(set14.nearMisses).toHaveLength(38);
    const searches = new Set([...set14.placeholders, ...set14.nearMisses].map((p) => p.search));
    expect([...searches].filter((s) => !s?.startsWith('issue:'))).toHaveLength(32);
    expect([...searches].filter((s) => s?.startsWith('issue:'))).toHaveLength(10);
  });

  it('set 16 is frozen for a later round: 146 placeholders and 89 near misses from 60 search words and 6 bug reports, each with its source (no rule is run on it here)', () => {
    type Item = { text: string; search?: string; source?: string; language?: string };
    const set16 = corpus('heldout-16-real.json') as { placeholders: Item[]; nearMisses: Item[] };
    expect(set16.placeholders).toHaveLength(146);
    expect(set16.nearMisses).toHaveLength(89);
    const items = [...set16.placeholders, ...set16.nearMisses];
    const searches = new Set(items.map((p) => p.search));
    expect([...searches].filter((s) => !s?.startsWith('issue:'))).toHaveLength(60);
    expect([...searches].filter((s) => s?.startsWith('issue:'))).toHaveLength(6);
    for (const item of items) {
      expect(item.source, item.text).toBeTruthy();
      expect(item.language, item.text).toBeTruthy();
    }
  });
});
