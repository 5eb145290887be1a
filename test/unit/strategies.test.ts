import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  applyStrategy,
  appendText,
  insertText,
  InvalidInsertionPoint,
  isStrategyName,
  lineCount,
  STRATEGIES,
  STRATEGY_NAMES,
} from '../../src/core/strategies.js';
import { GuardError } from '../../src/core/errors.js';

/** npm run soak sets GUARD_PROPERTY_CASES to run every property at its scale (10,000 cases); npm test keeps the default. */
const cases = (n: number): number => Number(process.env.GUARD_PROPERTY_CASES) || n;

describe('strategy list', () => {
  it('names the four strategies of DESIGN.md, each with a one-line description', () => {
    expect(STRATEGY_NAMES).toEqual(['replace', 'append', 'insert', 'extend']);
    for (const s of STRATEGIES) expect(s.description).toMatch(/^[^\n]{10,100}$/);
    expect(isStrategyName('append')).toBe(true);
    expect(isStrategyName('merge')).toBe(false);
  });
});

describe('replace', () => {
  it('takes the new text, including an empty one (delete)', async () => {
    expect(await applyStrategy('replace', 'old\n', 'new\n')).toEqual({
      content: 'new\n',
      strategy: 'replace',
    });
    expect((await applyStrategy('replace', 'old\n', '')).content).toBe('');
  });
});

describe('append', () => {
  it('puts new after old without blank lines', async () => {
    expect(await applyStrategy('append', 'a\nb\n', 'c\n')).toEqual({
      content: 'a\nb\nc\n',
      strategy: 'append',
    });
  });
  it('adds one line break when old lacks its final one, in the old line ending', () => {
    expect(appendText('a\nb', 'c')).toBe('a\nb\nc');
    expect(appendText('a\r\nb', 'c\r\n')).toBe('a\r\nb\r\nc\r\n');
  });
  it('empty sides add nothing', () => {
    expect(appendText('', 'c\n')).toBe('c\n');
    expect(appendText('a', '')).toBe('a');
  });
});

describe('insert', () => {
  const OLD = 'one\ntwo\nthree\n';
  it('inserts before the first line, between lines and at the end', () => {
    expect(insertText(OLD, 'X\n', 0)).toBe('X\none\ntwo\nthree\n');
    expect(insertText(OLD, 'X\n', 2)).toBe('one\ntwo\nX\nthree\n');
    expect(insertText(OLD, 'X\n', 3)).toBe('one\ntwo\nthree\nX\n');
  });
  it('keeps lines apart when a side lacks its final newline', () => {
    expect(insertText(OLD, 'X', 1)).toBe('one\nX\ntwo\nthree\n');
    expect(insertText('one\ntwo', 'X\n', 2)).toBe('one\ntwo\nX\n');
    expect(insertText('one\r\ntwo', 'X', 2)).toBe('one\r\ntwo\r\nX');
  });
  it('counts a last line without newline', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\nb')).toBe(2);
    expect(insertText('', 'X\n', 0)).toBe('X\n');
  });
  it('throws a typed, usage-coded error for an invalid line', async () => {
    for (const bad of [-1, 4, 1.5, Number.NaN]) {
      expect(() => insertText(OLD, 'X\n', bad)).toThrow(InvalidInsertionPoint);
    }
    const err = (() => {
      try {
        insertText(OLD, 'X\n', 9);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(GuardError);
    expect(err).toMatchObject({
      code: 'E_USAGE',
      lineCount: 3,
      message: expect.stringContaining('3 lines'),
    });
    await expect(applyStrategy('insert', OLD, 'X\n')).rejects.toBeInstanceOf(InvalidInsertionPoint);
    expect(await applyStrategy('insert', OLD, 'X\n', { insertAt: 1 })).toEqual({
      content: 'one\nX\ntwo\nthree\n',
      strategy: 'insert',
    });
  });

  it('property: old lines stay in order around the new content', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', '', 'ü', '😀'), { maxLength: 6 })
      .chain((ls) =>
        fc.boolean().map((eol) => (ls.length === 0 ? '' : ls.join('\n') + (eol ? '\n' : ''))),
      );
    fc.assert(
      fc.property(text, text, fc.nat(), (oldText, newText, k) => {
        const at = k % (lineCount(oldText) + 1);
        const out = insertText(oldText, newText, at);
        const split = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));
        const o = split(oldText);
        const n = split(newText);
        expect(split(out)).toEqual([...o.slice(0, at), ...n, ...o.slice(at)]);
      }),
      { numRuns: cases(300) },
    );
  });
});
