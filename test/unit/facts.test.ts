import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChangeFacts } from '../../src/core/classify.js';
import { changeFacts, heldSide, type FactsInput, type Side } from '../../src/core/facts.js';
import { countLines, looksBinary } from '../../src/core/lines.js';

const buf = (s: string) => Buffer.from(s, 'utf8');
const base = (over: Partial<FactsInput>): FactsInput => ({
  path: 'a.txt',
  oldMode: '100644',
  newMode: '100644',
  old: heldSide(buf('a\nb\nc\n')),
  new: heldSide(buf('a\nB\nc\n')),
  added: 1,
  deleted: 1,
  gitBinary: false,
  zeroBinaryCounts: true,
  contentChanged: true,
  maxBytes: 1000,
  ...over,
});

describe('changeFacts: the facts of a change from measured values', () => {
  it('a text change: counts, existing lines and bytes, both texts; nothing optional set', () => {
    expect(changeFacts(base({}))).toStrictEqual({
      path: 'a.txt',
      oldMode: '100644',
      newMode: '100644',
      linesAdded: 1,
      linesDeleted: 1,
      existingLines: 3,
      existingBytes: 6,
      binary: false,
      contentChanged: true,
      oldText: 'a\nb\nc\n',
      newText: 'a\nB\nc\n',
    });
  });

  it('a new file has no existing lines or bytes; a deleted one no new text', () => {
    const added = changeFacts(base({ oldMode: null, old: null, added: 3, deleted: 0 }));
    expect(added).toMatchObject({ existingLines: 0, linesAdded: 3, newText: 'a\nB\nc\n' });
    expect('existingBytes' in added || 'oldText' in added).toBe(false);
    const gone = changeFacts(base({ newMode: null, new: null, added: 0, deleted: 3 }));
    expect(gone).toMatchObject({ existingLines: 3, existingBytes: 6, oldText: 'a\nb\nc\n' });
    expect('newText' in gone).toBe(false);
  });

  it('binary by a NUL on either side or by git; counts zeroed only when the caller zeroes them', () => {
    const nul = base({ new: heldSide(buf('a\0b\n')) });
    expect(changeFacts(nul)).toMatchObject({ binary: true, linesAdded: 0, linesDeleted: 0 });
    expect(changeFacts({ ...nul, zeroBinaryCounts: false })).toMatchObject({
      binary: true,
      linesAdded: 1,
      linesDeleted: 1,
      existingLines: 0,
    });
    const git = changeFacts(base({ gitBinary: true }));
    expect(git).toMatchObject({ binary: true, existingLines: 0, existingBytes: 6 });
    expect('oldText' in git || 'newText' in git).toBe(false);
  });

  it('a side over maxBytes is tooLarge (the old first) and never text; unread data is not sniffed', () => {
    const big = changeFacts(base({ maxBytes: 5 }));
    expect(big.tooLarge).toStrictEqual({ bytes: 6 });
    expect('oldText' in big || 'newText' in big).toBe(false);
    const unread: Side = { bytes: 9000, lines: 7 };
    const f = changeFacts(base({ old: unread, maxBytes: 8999 }));
    expect(f).toMatchObject({ binary: false, existingLines: 7, tooLarge: { bytes: 9000 } });
  });

  it("the binary sniff is git's: a NUL in the first 8000 bytes, not after", () => {
    const at = (i: number) => {
      const b = Buffer.alloc(9000, 0x61);
      b[i] = 0;
      return b;
    };
    expect(looksBinary(at(0))).toBe(true);
    expect(looksBinary(at(7999))).toBe(true);
    expect(looksBinary(at(8000))).toBe(false);
    expect(looksBinary(Buffer.alloc(0))).toBe(false);
    expect(looksBinary(new Uint8Array([97, 0]))).toBe(true);
  });

  it('oldPath and whitespaceOnly only when given', () => {
    const f = changeFacts(base({ oldPath: 'b.txt', whitespaceOnly: true }));
    expect(f).toMatchObject({ oldPath: 'b.txt', whitespaceOnly: true });
    const g = changeFacts(base({ oldPath: undefined, whitespaceOnly: false }));
    expect('oldPath' in g || 'whitespaceOnly' in g).toBe(false);
  });
});

/** The hook's builder before changeFacts (from buffers), kept here as the oracle. */
function formerHookFacts(b: Buffer | null, n: Buffer | null, added: number, deleted: number) {
  const max = 40;
  const binary = (b !== null && looksBinary(b)) || (n !== null && looksBinary(n));
  const facts: ChangeFacts = {
    path: 'p',
    oldMode: b === null ? null : '100644',
    newMode: n === null ? null : '100644',
    linesAdded: binary ? 0 : added,
    linesDeleted: binary ? 0 : deleted,
    existingLines: binary || b === null ? 0 : countLines(b),
    ...(b !== null ? { existingBytes: b.length } : {}),
    binary,
    contentChanged: b === null || n === null ? b !== n : !b.equals(n),
  };
  const big = [b, n].find((x) => x !== null && x.length > max);
  if (big) facts.tooLarge = { bytes: big.length };
  if (!binary && b !== null && b.length <= max) facts.oldText = b.toString('utf8');
  if (!binary && n !== null && n.length <= max) facts.newText = n.toString('utf8');
  return facts;
}

/** git/changes' builder before changeFacts (cat-file holds data only within maxBytes). */
function formerDiffFacts(b: Buffer | null, n: Buffer | null, counts: [number, number] | null) {
  const max = 40;
  const obj = (x: Buffer | null) =>
    x && { size: x.length, lines: countLines(x), ...(x.length <= max ? { data: x } : {}) };
  const [o, w] = [obj(b), obj(n)];
  const binary =
    counts === null ||
    (o?.data !== undefined && looksBinary(o.data)) ||
    (w?.data !== undefined && looksBinary(w.data));
  const f: ChangeFacts = {
    path: 'p',
    oldMode: b === null ? null : '100644',
    newMode: n === null ? null : '100644',
    linesAdded: counts?.[0] ?? 0,
    linesDeleted: counts?.[1] ?? 0,
    existingLines: binary ? 0 : (o?.lines ?? 0),
    ...(o ? { existingBytes: o.size } : {}),
    binary,
    contentChanged: true,
  };
  if (o?.data && !binary) f.oldText = o.data.toString('utf8');
  if (w?.data && !binary) f.newText = w.data.toString('utf8');
  const big = [o, w].find((x) => x && x.size > max);
  if (big) f.tooLarge = { bytes: big.size };
  return { f, o, w };
}

const content = fc.option(
  fc
    .array(fc.constantFrom('a', 'bc\n', '\n', '\0', 'xxxxxxxxxxxxxxxxxxxx', '\r\n', 'é'), {
      maxLength: 12,
    })
    .map((parts) => buf(parts.join(''))),
);

describe('changeFacts: property, the same facts as each former builder', () => {
  it('from buffers (guard write, the hook) and from cat-file objects (git/changes)', () => {
    fc.assert(
      fc.property(content, content, fc.nat(50), fc.nat(50), fc.boolean(), (b, n, a, d, gb) => {
        const input = base({
          path: 'p',
          oldMode: b === null ? null : '100644',
          newMode: n === null ? null : '100644',
          old: heldSide(b),
          new: heldSide(n),
          added: a,
          deleted: d,
          contentChanged: b === null || n === null ? b !== n : !b.equals(n),
          maxBytes: 40,
        });
        expect(changeFacts(input)).toStrictEqual(formerHookFacts(b, n, a, d));
        const { f, o, w } = formerDiffFacts(b, n, gb ? null : [a, d]);
        const side = (x: typeof o): Side | null =>
          x && { bytes: x.size, lines: x.lines, ...(x.data ? { data: x.data } : {}) };
        const diff = changeFacts({
          ...input,
          ...{ old: side(o), new: side(w), added: gb ? 0 : a, deleted: gb ? 0 : d },
          ...{ gitBinary: gb, zeroBinaryCounts: false, contentChanged: true },
        });
        expect(diff).toStrictEqual(f);
      }),
      { numRuns: 300 },
    );
  });
});
