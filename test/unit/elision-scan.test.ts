import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import data from '../../src/core/elision-phrases.json' with { type: 'json' };
import { findElisions, makeMatcher, scan, type PhraseData } from '../../src/core/elision.js';
import { changeFacts, heldSide, heldText } from '../../src/core/facts.js';

// pieces a line is made of: openers in either case, white space, digits, dots, non-ASCII, code, placeholder words
const piece = fc.constantFrom(
  '//',
  '#',
  '--',
  ';',
  "'",
  '/*',
  '*/',
  '<!--',
  '-->',
  '{/*',
  '(*',
  '*',
  'rem ',
  'REM ',
  '"""',
  ' ',
  '  ',
  '\t',
  '\r',
  '...',
  '…',
  '．．．',
  '\u00a0',
  'é',
  '😀',
  '0',
  '10 ',
  'return x',
  'f(1)',
  'rest of the code',
  'existing code',
  'unchanged',
  'omitted',
  '(other methods)',
);
const line = fc.array(piece, { maxLength: 6 }).map((p) => p.join(''));
const lines = fc.array(line, { maxLength: 20 });

// comments after code and their look-alikes: what the screen of a line's start must not hide
const trailing = fc.constantFrom(
  '30 REM ... rest of program ...',
  '... // the rest of the code is unchanged',

  ' // ',
  ' # ',
  ' -- ',
  '<!-- x -->',
  'x--y',
  '/',
  '#',
  '-',
  ' /* a */ ',
  'a/b',
  '\v',
  '\u2028',
  '\ufeff',
);
const mixed = fc.array(fc.oneof(piece, trailing), { maxLength: 8 }).map((p) => p.join(''));

describe('the placeholder scan answers a line from its start only where asking it would say no', () => {
  it('finds the candidates asking every line finds', () => {
    const m = makeMatcher(data as PhraseData);
    fc.assert(
      fc.property(fc.array(mixed, { maxLength: 25 }), (l) => {
        const text = l.join('\n');
        const asked = scan(text, m, false);
        expect(scan(text, m)).toEqual(asked);
        expect(scan(Buffer.from(text, 'utf8'), m)).toEqual(asked);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('the scan of bytes that are not UTF-8', () => {
  it('reads each line as the text decoded from them (U+FFFD) reads it', () => {
    const m = makeMatcher(data as PhraseData);
    const bytes = fc.array(
      fc.oneof(
        fc.constantFrom(10, 13, 32, 9, 35, 47, 45, 46, 0xe2, 0x80, 0xa6, 0xc3, 0xff, 0xf0, 0x9f),
        fc.integer({ min: 0, max: 255 }),
      ),
      { maxLength: 200 },
    );
    fc.assert(
      fc.property(bytes, (b) => {
        const buf = Buffer.from(b);
        expect(scan(buf, m)).toEqual(scan(buf.toString('utf8'), m, false));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('findElisions reads a side held as bytes', () => {
  it('answers for the UTF-8 bytes what it answers for the text', () => {
    fc.assert(
      fc.property(lines, lines, (o, n) => {
        const old = o.join('\n');
        const neu = n.join('\n');
        expect(findElisions(Buffer.from(neu, 'utf8'), () => old, 3)).toEqual(
          findElisions(neu, old, 3),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('findElisions answers the same for the bytes as for the text, and reads the old text only when it must', () => {
    const old = [
      'def run(values):',
      ...Array.from({ length: 20 }, (_, i) => `    x${i} = ${i}`),
      '',
    ];
    const cut = ['def run(values):', '    x0 = 0', '    # ... rest of the code ...', ''].join('\n');
    let reads = 0;
    const readOld = () => (reads++, old.join('\n'));
    expect(findElisions(Buffer.from(cut), readOld, 1)).toEqual(
      findElisions(cut, old.join('\n'), 1),
    );
    expect(findElisions(Buffer.from(cut), readOld, 1)).toEqual([
      { line: 3, text: '# ... rest of the code ...' },
    ]);
    expect(reads).toBe(2);
    expect(findElisions(Buffer.from('def run(values):\n    x0 = 0\n'), readOld, 1)).toEqual([]);
    expect(reads).toBe(2);
  });
});

describe('changeFacts holds a large side as bytes until its text is read', () => {
  it('heldText gives the bytes, then the text once read; the text is the decoded bytes; small sides are text at once', () => {
    const big = (s: string) => Buffer.from(s.repeat(300_000)); // over 1 MiB
    const f = changeFacts({
      path: 'a.py',
      oldMode: '100644',
      newMode: '100644',
      old: heldSide(big('a\nb\n')),
      new: heldSide(big('a\nc\u00e9\n')),
      added: 1,
      deleted: 1,
      gitBinary: false,
      zeroBinaryCounts: false,
      contentChanged: true,
      maxBytes: 10_000_000,
    });
    expect(Buffer.isBuffer(heldText(f, 'new'))).toBe(true);
    expect(f.newText).toBe('a\nc\u00e9\n'.repeat(300_000));
    expect(heldText(f, 'new')).toBe(f.newText);
    expect(Buffer.isBuffer(heldText(f, 'old'))).toBe(true);
    f.oldText = 'replaced';
    expect(heldText(f, 'old')).toBe('replaced');
    expect(Object.keys(f)).toEqual(expect.arrayContaining(['oldText', 'newText']));
    const small = changeFacts({
      path: 'b.py',
      oldMode: null,
      newMode: '100644',
      old: null,
      new: heldSide(Buffer.from('x\n')),
      added: 1,
      deleted: 0,
      gitBinary: false,
      zeroBinaryCounts: false,
      contentChanged: true,
      maxBytes: 100,
    });
    expect(heldText(small, 'new')).toBe('x\n');
  });
});
