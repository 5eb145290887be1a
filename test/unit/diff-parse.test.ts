import { describe, expect, it } from 'vitest';
import { parseRawNumstat } from '../../src/git/diff.js';
import { unquote } from '../../src/git/patch.js';
import { cQuote as quotePath, cUnquote } from '../../src/core/quote.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const Z = '0'.repeat(40);

describe('parseRawNumstat', () => {
  it('reads raw then numstat records, renames, binaries and odd names', () => {
    const fields = [
      `:100644 100644 ${A} ${B} M`,
      'tab\there.txt',
      `:100644 100644 ${A} ${B} R086`,
      'old name',
      'new name',
      `:000000 100644 ${Z} ${B} A`,
      'img.png',
      `:100644 000000 ${A} ${Z} D`,
      'gone',
      `:100644 100644 ${A} ${B} M`,
      'crlf-only.txt',
      '3\t4\ttab\there.txt',
      '1\t2\t',
      'old name',
      'new name',
      '-\t-\timg.png',
      '0\t7\tgone',
    ];
    const e = parseRawNumstat(fields);
    expect(e).toEqual([
      {
        path: 'tab\there.txt',
        letter: 'M',
        oldMode: '100644',
        newMode: '100644',
        oldOid: A,
        newOid: B,
        added: 3,
        deleted: 4,
      },
      {
        path: 'new name',
        oldPath: 'old name',
        letter: 'R',
        oldMode: '100644',
        newMode: '100644',
        oldOid: A,
        newOid: B,
        added: 1,
        deleted: 2,
      },
      {
        path: 'img.png',
        letter: 'A',
        oldMode: null,
        newMode: '100644',
        oldOid: null,
        newOid: B,
        added: null,
        deleted: null,
      },
      {
        path: 'gone',
        letter: 'D',
        oldMode: '100644',
        newMode: null,
        oldOid: A,
        newOid: null,
        added: 0,
        deleted: 7,
      },
      {
        path: 'crlf-only.txt',
        letter: 'M',
        oldMode: '100644',
        newMode: '100644',
        oldOid: A,
        newOid: B,
        added: 0,
        deleted: 0,
      },
    ]);
  });
});

describe('path quoting', () => {
  it('unquotes git C-style names, octal bytes included', () => {
    expect(unquote('"a/tab\\there"')).toBe('a/tab\there');
    expect(unquote('"b/\\303\\274ber"')).toBe('b/über');
    expect(unquote('plain name')).toBe('plain name');
  });
  it('quotes for fast-import so quotes, backslashes and newlines survive', () => {
    expect(quotePath('a "b"\\c\nd')).toBe('"a \\"b\\"\\\\c\\nd"');
    expect(quotePath('x\u0001')).toBe('"x\\001"');
    for (const name of ['a "b"\\c\nd', 'x\u0001\r\u007f', 'é \t.txt'])
      expect(cUnquote(quotePath(name))).toBe(name);
  });
});
