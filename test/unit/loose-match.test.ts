import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyPatchChunks, applyStringEdits } from '../../src/harness/edits.js';
import { LOOSE_MAX_CHARS, looseReplace } from '../../src/harness/loose-match.js';

const edit = (oldString: string, newString: string, replaceAll = false) => [
  { oldString, newString, replaceAll },
];

describe('loose matching of an edit (what Claude Code, Gemini CLI and Codex apply)', () => {
  it('line ends: LF old text in a CRLF file is the whole file; the result keeps CRLF', () => {
    const file = Array.from({ length: 150 }, (_, i) => `line ${i}`).join('\r\n') + '\r\n';
    const old = file.replace(/\r\n/g, '\n');
    const r = applyStringEdits(file, edit(old, 'one line\n'));
    expect(r).toEqual({
      ok: true,
      text: 'one line\r\n',
      loose: ['matched after normalising line ends'],
    });
  });

  it('quotes and dashes: straight in the edit, curly in the file', () => {
    const file = 'const a = \u201chello\u201d;\nconst b = \u2018x\u2019 \u2014 y;\n';
    expect(applyStringEdits(file, edit('const a = "hello";', 'const a = "bye";'))).toMatchObject({
      ok: true,
      text: 'const a = "bye";\nconst b = \u2018x\u2019 \u2014 y;\n',
    });
    expect(applyStringEdits(file, edit("const b = 'x' - y;\n", ''))).toMatchObject({
      ok: true,
      text: 'const a = \u201chello\u201d;\n',
    });
  });

  it('trailing whitespace and indentation', () => {
    const file = 'def f():   \n    return 1\n\ndef g():\n    return 2\n';
    expect(applyStringEdits(file, edit('def f():\n    return 1\n', ''))).toMatchObject({
      ok: true,
      text: '\ndef g():\n    return 2\n',
      loose: ['matched after normalising trailing whitespace'],
    });
    expect(applyStringEdits(file, edit('def g():\nreturn 2\n', 'pass\n'))).toMatchObject({
      ok: true,
      text: 'def f():   \n    return 1\n\npass\n',
      loose: ['matched after normalising indentation'],
    });
  });

  it('ambiguous after normalising, or nowhere at all: refused, never guessed', () => {
    const file = '  x = 1\nx = 1\n';
    const r = applyStringEdits(file, edit('x  = 1', 'y'));
    expect(r.ok).toBe(false);
    const twice = applyStringEdits('\u201ca\u201d\n"a"\n', edit('\u201ca"', 'b'));
    expect(twice).toEqual({ ok: false, why: expect.stringMatching(/found 2 times/) });
    expect(applyStringEdits('\u201ca\u201d\n"a"\n', edit('\u201ca"', 'b', true))).toMatchObject({
      ok: true,
      text: 'b\nb\n',
    });
    expect(applyStringEdits('alpha\n', edit('zzz', 'y'))).toEqual({
      ok: false,
      why: expect.stringMatching(/not even after normalising/),
    });
  });

  it('a file too large to map character by character is refused, not matched loosely', () => {
    const big = 'x \u201cy\u201d\n'.repeat(LOOSE_MAX_CHARS / 6 + 1);
    expect(applyStringEdits(big, edit('x "y"', 'z'))).toEqual({
      ok: false,
      why: expect.stringMatching(/too large/),
    });
  });

  it('an exact find is never loosened (the old, exact path)', () => {
    expect(applyStringEdits('a \u201cb\u201d\n"b"\n', edit('"b"', 'c'))).toEqual({
      ok: true,
      text: 'a \u201cb\u201d\nc\n',
    });
  });

  it('property: whatever is found loosely, the text outside the span is kept byte for byte', () => {
    const chars = fc.constantFrom('a', 'b', ' ', '\t', '\n', '\r\n', '\u201c', '"', '\u2014', '-');
    fc.assert(
      fc.property(
        fc.array(chars, { maxLength: 40 }),
        fc.array(chars, { minLength: 1, maxLength: 6 }),
        (f, o) => {
          const file = f.join('');
          const r = looseReplace(file, o.join(''), '\u0000', false);
          if (!r.ok) return;
          const i = r.text.indexOf('\u0000');
          expect(i).toBeGreaterThanOrEqual(0);
          const before = r.text.slice(0, i);
          const after = r.text.slice(i + 1);
          expect(file.startsWith(before)).toBe(true);
          expect(file.endsWith(after)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('codex: the last pass of seek_sequence (Unicode punctuation) finds a chunk', () => {
    const r = applyPatchChunks('say \u201chi\u201d \u2014 now\nend\n', [
      { context: null, oldLines: ['say "hi" - now'], newLines: ['bye'], endOfFile: false },
    ]);
    expect(r).toEqual({ ok: true, text: 'bye\nend\n' });
  });
});
