import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { STRATEGY_KEYS, offeredKeys } from '../../src/ui/prompt.js';

describe('the keys the prompt offers', () => {
  it('like git add -p: no k/K on the first hunk, no j/J on the last, s only where a hunk splits', () => {
    const undecided = (n: number) => Array.from({ length: n }, () => undefined);
    expect(
      offeredKeys({ at: 0, decided: undecided(1), splittable: false, strategies: [] }),
    ).toEqual(['y', 'n', 'q', 'a', 'd', 'v', '?']);
    expect(offeredKeys({ at: 0, decided: undecided(3), splittable: true, strategies: [] })).toEqual(
      ['y', 'n', 'q', 'a', 'd', 'j', 'J', 'g', '/', 's', 'v', '?'],
    );
    expect(
      offeredKeys({
        at: 2,
        decided: undecided(3),
        splittable: false,
        strategies: ['append', 'insert', 'extend'],
      }),
    ).toEqual(['y', 'n', 'q', 'a', 'd', 'k', 'K', 'g', '/', 'v', 'r', 'b', 'i', 'x', '?']);
    // decided neighbours: K and J still move, k and j (to an undecided hunk) do not
    expect(
      offeredKeys({ at: 1, decided: [true, undefined, false], splittable: false, strategies: [] }),
    ).toEqual(['y', 'n', 'q', 'a', 'd', 'K', 'J', 'g', '/', 'v', '?']);
    // e (edit by hand) where a hunk can be edited, after s as in git
    expect(
      offeredKeys({
        at: 0,
        decided: undecided(2),
        splittable: true,
        editable: true,
        strategies: ['append'],
      }),
    ).toEqual(['y', 'n', 'q', 'a', 'd', 'j', 'J', 'g', '/', 's', 'e', 'v', 'r', 'b', '?']);
  });

  it("property: no two keys offered differ only by case, except git's own j/J and k/K", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.nat(),
        fc.boolean(),
        fc.array(fc.option(fc.boolean(), { nil: undefined }), { minLength: 6, maxLength: 6 }),
        (n, at, splittable, decided) => {
          const keys = offeredKeys({
            at: at % n,
            decided: decided.slice(0, n),
            splittable,
            editable: true,
            strategies: ['append', 'insert', 'extend'],
          });
          const lower = keys.filter((k) => !['J', 'K'].includes(k)).map((k) => k.toLowerCase());
          expect(new Set(lower).size).toBe(lower.length);
          expect(new Set(keys).size).toBe(keys.length);
        },
      ),
    );
    expect(Object.values(STRATEGY_KEYS)).toEqual(['r', 'b', 'i', 'x']);
  });
});
