/**
 * Placeholders, the round after set 15 (issue 20 item 6, branch elision5): general rules tuned on
 * sets 1-13 and 15, the real-comment corpora and probes this round's engineer wrote; sets 14 and 16
 * are held out for the lead's measurement. Each rule with what it must not take:
 *
 * - a stub statement's message is read as a comment (`raise NotImplementedError("rest of the code
 *   unchanged")`, `throw new Error("not shown")`, `print("... existing code ...")`);
 * - beside new code, a comment that describes that code (`# same result as before, vectorised`) is
 *   no stand-in for what went.
 */
import { describe, expect, it } from 'vitest';
import { elisionFigures, findElisions } from '../../src/core/elision.js';
import { elisionCorpus, elisionProbe } from '../elision-probe.js';

const { code, file, replacing, addedOnly, onlyAlone, never } = elisionProbe('');
const corpus = elisionCorpus;

describe('placeholders: a stub statement that says it in its message', () => {
  it('raise, throw and the macros that end a body, by the whole-line rules; print and log calls alone', () => {
    onlyAlone([
      '    raise NotImplementedError("rest of the code unchanged")',
      '    throw new Error("not shown");',
      "    throw new Error('... existing implementation ...');",
      '    panic!("rest omitted for brevity")',
      '    unimplemented!("same as before")',
      '    print("... existing code ...")',
      "    console.log('... rest of the function unchanged ...');",
    ]);
  });

  it('a stub whose message is a placeholder counts beside a rewritten line, as a comment after code does', () => {
    expect(
      replacing(['    raise NotImplementedError("rest of the code unchanged")', '    x = 1'], 20),
    ).toBe(true);
    // a print or log call only alone: `print("... loading")` among new code is a progress message
    expect(replacing(['    print("... existing code ...")', '    x = 1'], 20)).toBe(false);
  });

  it('not an error that says what it refuses, nor a stub that says nothing, nor one the old text had', () => {
    never([
      '    raise ValueError("other modes are not supported")',
      '    raise NotImplementedError("subclasses must implement area")',
      '    throw new Error("unreachable");',
      '    raise NotImplementedError',
      '    raise RuntimeError("removed: use compute_area instead")',
      "    throw new Error('Method not implemented.');",
      '    print("%s" % total)',
    ]);
    // the same stub rewritten with the code around it: its message was there
    const old = [
      ...file(10),
      '    raise NotImplementedError("rest of the code unchanged")',
      ...file(20),
    ];
    const neu = [
      ...file(5),
      '    raise NotImplementedError("rest of the code unchanged")',
      ...file(20),
    ];
    expect(findElisions(neu.join('\n'), old.join('\n'))).toEqual([]);
  });
});

describe('placeholders: beside new code, a comment that describes that code', () => {
  const rewrite = (comment: string) =>
    replacing(
      [
        `    # ${comment}`,
        '    w = np.asarray(weights)',
        '    v = np.asarray(values)',
        '    total = float(w @ v)',
      ],
      14,
    );

  it('a rewrite that keeps the behaviour, or says it is a rewrite, is allowed', () => {
    for (const comment of [
      'same result as before, vectorised',
      'keep the existing behaviour for callers',
      'unchanged API, new implementation',
      'output identical to the loop version',
      'rewritten with numpy',
    ])
      expect(rewrite(comment), comment).toBe(false);
  });

  it('the same words alone where code went, or after dots, still stand for it', () => {
    onlyAlone(['    # same result as before', '    # unchanged API']);
    expect(rewrite('... rest of the loop unchanged')).toBe(true);
    expect(rewrite('rest of the method unchanged')).toBe(true);
    expect(rewrite('... state for sidebar, API key manager, theme ...')).toBe(true);
  });
});

describe('placeholders: comment syntaxes the openers lacked', () => {
  it("Blade, Smarty, Haml, D's nesting comment and Liquid's comment tag", () => {
    onlyAlone([
      '    {{-- ... remaining form fields ... --}}',
      '    {{-- rest of the table unchanged --}}',
      '    {* ... other smarty blocks ... *}',
      '    -# ... other partials',
      '    /+ ... other members ... +/',
      '    {% comment %} ... rest of the template ... {% endcomment %}',
    ]);
  });

  it('not the code those openers start: a Blade echo, a dereference in braces', () => {
    never(['    {{ $user->name }}', '    {*p = 0;}', '    {{-- the user card --}}']);
  });
});

describe('placeholders: the claim made first, whatever follows', () => {
  it('a cut mark in brackets or between rulers reads as dots', () => {
    onlyAlone([
      '    // [snip] the request parsing part',
      '    // <snip> parsing of the headers',
      '    // [SNIP] getters and setters: unchanged, provided above',
      '    // [omitted] helper functions',
      '    // --snip--',
      '    # --snip-- the rest of main',
      '    // [...] rest of the handlers',
      '    // ---8<--- cut here ---8<---',
    ]);
  });

  it('a strong lead of a few words, then a clause that explains or instructs', () => {
    onlyAlone([
      '    // Body unchanged, but you need the import at the top',
      '    // Rest unchanged - you would only touch the loop above',
      '    // Implementation omitted for brevity; in a real app you would call the API here',
    ]);
  });

  it('left out for the text, however long the sentence', () => {
    onlyAlone([
      '    // Validation logic omitted for brevity, it would normally check each field against the schema',
      '    // Details trimmed to save space, the loop just accumulates the weights as before',
      '    # (Truncated to keep this example concise; the original parsing code goes here)',
      '    // error handling removed for clarity',
      "    // NOTE: For brevity, I've only included the modified function below; all of the other functions in this module should remain exactly as they are in your current version of the file.",
      '    # Everything from here down to the end of the class is exactly what you had before, so I have left it out of this snippet to keep it readable.',
      "    // I won't repeat the unchanged helpers",
      '    // the remaining methods are not repeated here',
      '    // no need to repeat the rest of the file',
    ]);
  });

  it('not a lead that explains, a cut of data, nor a quotation of one', () => {
    never([
      '    // output truncated for display when the terminal is narrow',
      '    // For brevity, we alias the long module name as m',
      '    // make sure events are not repeated',
      '    // unchanged if range is invalid, but we log it',
      '    // the rule reads `cut for length` as a placeholder',
      '    // [snip] removed: the parser now lives in parse.ts',
    ]);
  });
});

describe('placeholders: kept, elsewhere, or said another way', () => {
  it('may stay as it is, or needs no change', () => {
    onlyAlone([
      '    // Other properties can stay as they are',
      '    # Other settings can remain unchanged',
      '    // The remaining code does not need to be modified',
      '    // Should be the same as before',
      '    // Could be left as is',
      '    // everything else should remain unchanged',
      '    // no edits past this point',
      '    // end of changes',
    ]);
  });

  it('do the same; an earlier answer, step or place; trailing off; a slot; the others go here', () => {
    onlyAlone([
      '    // Do the same for the other columns',
      '    // Use the same code as in the GET handler',
      '    // follow the same pattern for the rest',
      '    // as provided earlier',
      '    // as in step 3',
      '    // use the code from my last reply here',
      '    // full code in the repo',
      '    // partial listing',
      '    // excerpt from the full file',
      '    // you get the idea',
      '    // and the like',
      '    // (continued)',
      '    // [code]',
      '    // <implementation>',
      '    // (code)',
      '    // Other helpers would be defined here',
      '    // Here you would handle the other events',
      '    // Cases B-F are analogous',
    ]);
  });

  it('not a value that must stay, a seed that is the same, a link, nor a change made earlier', () => {
    never([
      '    // this value should stay the same across calls',
      '    // other threads must not change this',
      '    // Use same exit code as node: https://nodejs.org/api/process.html#signal-events',
      '    // use the same seed as the parent process',
      '    // changed in the previous version to fix the overflow',
      '    // if the cache is cold, the rest can stay as is',
      '    // [optional]',
      '    // (deprecated)',
      '    // more handlers will be added here once we support webhooks',
    ]);
  });

  it('what was done to the text, what stood there, no change needed past here, trailing off', () => {
    onlyAlone([
      '    // (collapsed)',
      '    // [hidden]',
      '    // [clipped]',
      '    // condensed',
      '    // [redacted for length]',
      '    // keep what was there',
      '    // whatever was there before',
      '    // no updates needed below',
      "    // the rest doesn't need updating",
      '    // yada yada',
      '    // standard stuff',
    ]);
    never(['    // hidden fields come first', '    // what was there is moved to utils.ts']);
  });

  it('other languages: Ukrainian, Czech, Swedish, Indonesian, Japanese', () => {
    onlyAlone([
      '    // решта коду без змін',
      '    // zbytek beze změny',
      '    // resten oförändrad',
      '    // sisa kode sama',
      '    // (中略)',
      '    // 後略',
    ]);
    never(['    // 戦略パターン']);
  });
});

describe('placeholders: the floors of this round (tuning figures)', () => {
  it('set 15 (measured once on elision4, tuning data since): 118 / 118, its near misses never where nothing was removed', () => {
    const set15 = corpus('heldout-15-real.json');
    expect(
      elisionFigures(
        set15.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(118);
    for (const near of set15.nearMisses)
      expect(addedOnly(`    ${near.text}`), near.text).toBe(false);
  });

  it("this round's probes (tuning-15-written.json): at least 453 / 457; near misses at most 1 / 23 beside rewritten code", () => {
    const probes = corpus('tuning-15-written.json');
    expect(
      elisionFigures(
        probes.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(453);
    expect(
      elisionFigures(
        [],
        probes.nearMisses.map((p) => p.text),
      ).flagged,
    ).toBeLessThanOrEqual(1);
    for (const near of probes.nearMisses)
      expect(addedOnly(`    ${near.text}`), near.text).toBe(false);
  });
});
