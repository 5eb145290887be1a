import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packedLookup, packedUnder } from '../../src/git/packed-refs.js';

/*
 * packed-refs as git writes it: a header naming its traits, then
 * "<oid> <ref>" lines sorted by name in byte order, each ref that is an
 * annotated tag followed by a "^<peeled oid>" line. packedLookup binary-searches
 * a sorted file and must agree with a plain scan on every ref, present or not.
 */
const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
const component = fc.stringMatching(/^[A-Za-z0-9._\u00e9\u4e2d-]{1,8}$/);
const refName = fc
  .array(component, { minLength: 1, maxLength: 4 })
  .map((parts) => `refs/${parts.join('/')}`);

function packed(
  entries: Array<{ ref: string; oid: string; peeled: string | null }>,
  sorted: boolean,
): Buffer {
  const list = sorted
    ? [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.ref), Buffer.from(b.ref)))
    : entries;
  const header = sorted
    ? '# pack-refs with: peeled fully-peeled sorted \n'
    : '# pack-refs with: peeled \n';
  return Buffer.from(
    header + list.map((e) => `${e.oid} ${e.ref}\n${e.peeled ? `^${e.peeled}\n` : ''}`).join(''),
  );
}

describe('packedLookup', () => {
  it('finds every ref a sorted or unsorted packed-refs holds, and nothing it does not (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ ref: refName, oid: hex, peeled: fc.option(hex) }), {
          selector: (e) => e.ref,
          maxLength: 60,
        }),
        refName,
        fc.boolean(),
        (entries, absent, sorted) => {
          const buf = packed(entries, sorted);
          for (const e of entries) expect(packedLookup(buf, e.ref)).toBe(e.oid);
          if (!entries.some((e) => e.ref === absent)) expect(packedLookup(buf, absent)).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('an empty file, a header alone, and a prefix of a name are not found', () => {
    expect(packedLookup(Buffer.alloc(0), 'refs/a')).toBeNull();
    expect(
      packedLookup(Buffer.from('# pack-refs with: peeled fully-peeled sorted \n'), 'refs/a'),
    ).toBeNull();
    const buf = packed(
      [{ ref: 'refs/guard/sessions/x/y', oid: 'a'.repeat(40), peeled: null }],
      true,
    );
    expect(packedLookup(buf, 'refs/guard/sessions/x')).toBeNull();
    expect(packedLookup(buf, 'refs/guard/sessions/x/y')).toBe('a'.repeat(40));
  });
});

// names from a few folders, so that a prefix holds several refs
const shared = fc
  .array(fc.constantFrom('a', 'b', 'guard', 'write-base', 'f', '2026', 'x.y'), {
    minLength: 1,
    maxLength: 4,
  })
  .chain((parts) => component.map((leaf) => `refs/${[...parts, leaf].join('/')}`));

describe('packedUnder', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'guard-packed-under-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'packed-refs');
  const under = (buf: Buffer, prefix: string, window?: number) => {
    writeFileSync(file, buf);
    return packedUnder(file, prefix, 1000, window);
  };

  it('lists exactly the refs under a prefix, by binary search or by a scan, as a plain filter does (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ ref: shared, oid: hex, peeled: fc.option(hex) }), {
          selector: (e) => e.ref,
          maxLength: 80,
          minLength: 0,
        }),
        // a prefix of one of the refs (a folder of several, often), or one that holds none
        fc.nat(),
        fc.nat({ max: 12 }),
        refName,
        fc.boolean(),
        fc.constantFrom(64, 200, 1 << 16),
        (entries, pick, cut, other, sorted, window) => {
          const from =
            entries.length > 0 && pick % 4 !== 0 ? entries[pick % entries.length]!.ref : other;
          const prefix = from.slice(0, Math.max(5, from.length - cut));
          const buf = packed(entries, sorted);
          const want = entries
            .filter((e) =>
              Buffer.from(e.ref).subarray(0, Buffer.byteLength(prefix)).equals(Buffer.from(prefix)),
            )
            .map((e) => `${e.oid} ${e.ref}`)
            .sort();
          const got = under(buf, prefix, window).map((r) => `${r.oid} ${r.ref}`);
          expect([...got].sort()).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('no file, an empty one, a header alone: nothing', () => {
    expect(packedUnder(path.join(dir, 'none'), 'refs/')).toEqual([]);
    expect(under(Buffer.alloc(0), 'refs/')).toEqual([]);
    expect(
      under(Buffer.from('# pack-refs with: peeled fully-peeled sorted \n'), 'refs/', 8),
    ).toEqual([]);
  });
});
