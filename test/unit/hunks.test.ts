import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  applyHunks,
  diffHunks,
  editedHunk,
  hunkEditText,
  leftHunks,
  MAX_JSDIFF_LINES,
  parseHunks,
  reindex,
  relineHunks,
  splitHunk,
  splitText,
  withEditedHunk,
  HunkMismatch,
  type Hunk,
} from '../../src/core/hunks.js';

/** npm run soak sets GUARD_PROPERTY_CASES to run every property at its scale (10,000 cases); npm test keeps the default. */
const cases = (n: number): number => Number(process.env.GUARD_PROPERTY_CASES) || n;

// Produced by `git diff --no-index -U2 old.py new.py` (git 2.x), kept verbatim.
const OLD_PY =
  'import os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n\n\n\n\n\ndef c():\n    return 3\nlast';
const NEW_PY =
  'import os\nimport sys\n\ndef a():\n    return 1\n\ndef b():\n    return 20\n\n\n\n\n\ndef c():\n    return 3\nlast line\n';
const GIT_DIFF = [
  'diff --git a/old.py b/new.py',
  'index ad28bf1..bd85974 100644',
  '--- a/old.py',
  '+++ b/new.py',
  '@@ -1,3 +1,4 @@',
  ' import os',
  '+import sys',
  ' ',
  ' def a():',
  '@@ -5,5 +6,5 @@ def a():',
  ' ',
  ' def b():',
  '-    return 2',
  '+    return 20',
  ' ',
  ' ',
  '@@ -13,3 +14,3 @@ def b():',
  ' def c():',
  '     return 3',
  '-last',
  '\\ No newline at end of file',
  '+last line',
  '',
].join('\n');

const all = () => true;
const none = () => false;

describe('parseHunks on git output', () => {
  const hunks = parseHunks(GIT_DIFF);

  it('reads every hunk with git-style headers and numbers', () => {
    // with git's function context, as git add -p shows it
    expect(hunks.map((h) => h.header)).toEqual([
      '@@ -1,3 +1,4 @@',
      '@@ -5,5 +6,5 @@ def a():',
      '@@ -13,3 +14,3 @@ def b():',
    ]);
    expect(hunks.map((h) => h.index)).toEqual([0, 1, 2]);
    expect(hunks[1]).toMatchObject({ oldStart: 5, oldLines: 5, newStart: 6, newLines: 5 });
    expect(hunks[1]?.lines).toEqual([
      ' ',
      ' def b():',
      '-    return 2',
      '+    return 20',
      ' ',
      ' ',
    ]);
  });

  it('turns the no-newline marker into a flag, not a line', () => {
    expect(hunks[2]?.lines).toEqual([' def c():', '     return 3', '-last', '+last line']);
    expect(hunks[2]?.oldNoNewlineAtEnd).toBe(true);
    expect(hunks[2]?.newNoNewlineAtEnd).toBe(false);
    expect(hunks[0]?.oldNoNewlineAtEnd).toBe(false);
  });

  it('ids are 12 hex chars and distinct', () => {
    for (const h of hunks) expect(h.id).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(hunks.map((h) => h.id)).size).toBe(3);
  });

  it('applies to the real files', () => {
    expect(applyHunks(OLD_PY, hunks, all)).toBe(NEW_PY);
    expect(applyHunks(OLD_PY, hunks, none)).toBe(OLD_PY);
    const onlyFirst = applyHunks(OLD_PY, hunks, new Set([0]));
    expect(onlyFirst).toBe(OLD_PY.replace('import os\n', 'import os\nimport sys\n'));
    // The last hunk alone fixes the missing newline too.
    expect(applyHunks(OLD_PY, hunks, new Set([2]))).toBe(OLD_PY.replace(/last$/, 'last line\n'));
  });

  it('matches what jsdiff finds for the same files', () => {
    const ours = diffHunks(OLD_PY, NEW_PY, 2);
    expect(ours?.map((h) => h.id)).toEqual(hunks.map((h) => h.id));
    // jsdiff knows no function context: the ranges agree
    expect(ours?.map((h) => h.header)).toEqual(
      hunks.map((h) => h.header.replace(/ @@ .*$/, ' @@')),
    );
  });

  it('reads a new file and a deleted file (count 0 ranges)', () => {
    const created = parseHunks(
      'diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\n',
    );
    expect(created[0]).toMatchObject({
      header: '@@ -0,0 +1,2 @@',
      oldStart: 0,
      oldLines: 0,
      newStart: 1,
    });
    expect(applyHunks('', created, all)).toBe('one\ntwo\n');
    const deleted = parseHunks(
      '--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n\\ No newline at end of file\n',
    );
    expect(deleted[0]).toMatchObject({
      header: '@@ -1 +0,0 @@',
      newStart: 0,
      newLines: 0,
      oldNoNewlineAtEnd: true,
    });
    expect(applyHunks('one', deleted, all)).toBe('');
  });

  it('keeps CRLF bytes', () => {
    const h = parseHunks('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n');
    expect(h[0]?.lines).toEqual([' a\r', '-b\r', '+B\r']);
    expect(applyHunks('a\r\nb\r\n', h, all)).toBe('a\r\nB\r\n');
  });

  it('no change gives no hunks; two files are refused', () => {
    expect(parseHunks('')).toEqual([]);
    expect(() =>
      parseHunks(GIT_DIFF + GIT_DIFF.replaceAll('old.py', 'o2').replaceAll('new.py', 'n2')),
    ).toThrow(/one file/);
  });
});

describe('applyHunks', () => {
  it('refuses a hunk that does not match the base', () => {
    const hunks = parseHunks(GIT_DIFF);
    expect(() => applyHunks(OLD_PY.replace('return 2', 'return 3'), hunks, all)).toThrow(
      HunkMismatch,
    );
  });

  it('takes a set of indexes', () => {
    const hunks = diffHunks('a\nb\nc\nd\ne\nf\ng\nh\n', 'A\nb\nc\nd\ne\nf\ng\nH\n', 1) ?? [];
    expect(hunks).toHaveLength(2);
    expect(applyHunks('a\nb\nc\nd\ne\nf\ng\nh\n', hunks, new Set([1]))).toBe(
      'a\nb\nc\nd\ne\nf\ng\nH\n',
    );
  });
});

describe('diffHunks bounds', () => {
  it('returns null above MAX_JSDIFF_LINES', () => {
    const big = 'x\n'.repeat(MAX_JSDIFF_LINES);
    expect(diffHunks(big, big + 'y\n', 3)).toBeNull();
    expect(diffHunks('x\n', 'y\n', 3)).not.toBeNull();
  });

  it('returns null when the edit is too long for jsdiff', () => {
    const a = Array.from({ length: 2400 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 2400 }, (_, i) => `b${i}`).join('\n');
    expect(diffHunks(a, b, 3)).toBeNull();
  });
});

describe('splitHunk', () => {
  it('splits like git add -p and shares the context between pieces', () => {
    const [h] = diffHunks('a\nb\nc\nd\ne\n', 'A\nb\nc\nD\ne\n', 3) ?? [];
    expect(h?.header).toBe('@@ -1,5 +1,5 @@');
    const pieces = splitHunk(h as Hunk);
    expect(pieces.map((p) => p.header)).toEqual(['@@ -1,3 +1,3 @@', '@@ -2,4 +2,4 @@']);
    expect(pieces[0]?.lines).toEqual(['-a', '+A', ' b', ' c']);
    expect(pieces[1]?.lines).toEqual([' b', ' c', '-d', '+D', ' e']);
    const again = reindex(pieces);
    expect(applyHunks('a\nb\nc\nd\ne\n', again, new Set([1]))).toBe('a\nb\nc\nD\ne\n');
  });

  it('returns the hunk itself when there is nothing to split', () => {
    const [h] = diffHunks('a\nb\n', 'a\nB\nC\n', 3) ?? [];
    expect(splitHunk(h as Hunk)).toEqual([h]);
  });
});

// ---------------------------------------------------------------------------
// Properties

const LINE = fc.constantFrom(
  'a',
  'b',
  'c',
  'a',
  '',
  'x\r',
  'ü',
  '😀 ok',
  '  indent',
  '\\ not a marker',
  '+plus',
  '-minus',
);
const lineList = fc.array(LINE, { maxLength: 14 });
const text = fc.oneof(
  fc.constant(''),
  fc.tuple(lineList, fc.boolean(), fc.boolean()).map(([lines, eol, crlf]) => {
    if (lines.length === 0) return '';
    const sep = crlf ? '\r\n' : '\n';
    return lines.join(sep) + (eol ? sep : '');
  }),
);
/** A new text made by editing the base, so diffs have context and several hunks. */
const edited = text.chain((base) =>
  fc
    .array(fc.tuple(fc.nat(), fc.nat(3), fc.array(LINE, { maxLength: 3 })), { maxLength: 4 })
    .chain((edits) =>
      fc.boolean().map((eol) => {
        const { lines } = splitText(base);
        for (const [at, del, ins] of edits) lines.splice(at % (lines.length + 1), del, ...ins);
        const next = lines.length === 0 ? '' : lines.join('\n') + (eol ? '\n' : '');
        return [base, next] as const;
      }),
    ),
);
const pair = fc.oneof(edited, fc.tuple(text, text));
const context = fc.integer({ min: 0, max: 3 });

function counts(lines: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
}

describe('hunk properties', () => {
  it('all gives new, none gives base', () => {
    fc.assert(
      fc.property(pair, context, ([base, next], ctx) => {
        const hunks = diffHunks(base, next, ctx);
        expect(hunks).not.toBeNull();
        expect(applyHunks(base, hunks ?? [], all)).toBe(next);
        expect(applyHunks(base, hunks ?? [], none)).toBe(base);
      }),
      { numRuns: cases(400) },
    );
  });

  it('any subset keeps or removes each base line and adds only taken lines', () => {
    fc.assert(
      fc.property(
        pair,
        context,
        fc.array(fc.boolean(), { maxLength: 12 }),
        ([base, next], ctx, picks) => {
          const hunks = diffHunks(base, next, ctx) ?? [];
          const taken = new Set(hunks.filter((h) => picks[h.index] === true).map((h) => h.index));
          const result = applyHunks(base, hunks, taken);

          // Line accounting, by content: result = base - removed(taken) + added(taken).
          const expected = counts(splitText(base).lines);
          for (const h of hunks.filter((x) => taken.has(x.index))) {
            for (const l of h.lines) {
              const v = l.slice(1);
              if (l[0] === '-') expected.set(v, (expected.get(v) ?? 0) - 1);
              if (l[0] === '+') expected.set(v, (expected.get(v) ?? 0) + 1);
            }
          }
          const got = counts(splitText(result).lines);
          for (const [k, n] of expected)
            expect(got.get(k) ?? 0, `line ${JSON.stringify(k)}`).toBe(n);
          for (const [k, n] of got) expect(n).toBe(expected.get(k) ?? 0);

          // Taken + left account for the whole change: applying what is left gives new.
          const left = leftHunks(hunks, taken);
          expect(left.length + taken.size).toBe(hunks.length);
          expect(applyHunks(result, left, all)).toBe(next);
          expect(applyHunks(result, left, none)).toBe(result);
        },
      ),
      { numRuns: cases(400) },
    );
  });

  it('split hunks apply like the unsplit ones, in any subset', () => {
    fc.assert(
      fc.property(
        pair,
        context,
        fc.array(fc.boolean(), { maxLength: 20 }),
        ([base, next], ctx, picks) => {
          const hunks = diffHunks(base, next, ctx) ?? [];
          const pieces = reindex(hunks.flatMap(splitHunk));
          expect(pieces.length).toBeGreaterThanOrEqual(hunks.length);
          expect(applyHunks(base, pieces, all)).toBe(next);
          expect(applyHunks(base, pieces, none)).toBe(base);
          const taken = new Set(pieces.filter((p) => picks[p.index] === true).map((p) => p.index));
          const partial = applyHunks(base, pieces, taken);
          expect(applyHunks(partial, leftHunks(pieces, taken), all)).toBe(next);
        },
      ),
      { numRuns: cases(400) },
    );
  });

  it('ids survive a change to another hunk', () => {
    const block = fc.array(fc.constantFrom('p', 'q', 'r\r', 'ß'), { minLength: 1, maxLength: 4 });
    const sep = (k: number) => Array.from({ length: 8 }, (_, i) => `sep ${k}.${i}`);
    fc.assert(
      fc.property(block, block, block, block, block, (b1, b2, c1, c1b, c2) => {
        fc.pre(c1.join() !== c1b.join() && b1.join() !== c1.join() && b1.join() !== c1b.join());
        fc.pre(b2.join() !== c2.join());
        const base = [...sep(0), ...b1, ...sep(1), ...b2, ...sep(2)].join('\n') + '\n';
        const newA = [...sep(0), ...c1, ...sep(1), ...c2, ...sep(2)].join('\n') + '\n';
        const newB = [...sep(0), ...c1b, ...sep(1), ...c2, ...sep(2)].join('\n') + '\n';
        const ha = diffHunks(base, newA, 3) ?? [];
        const hb = diffHunks(base, newB, 3) ?? [];
        expect(ha).toHaveLength(2);
        expect(hb).toHaveLength(2);
        // Identical content in one file is told apart by occurrence, which is
        // documented to depend on the other hunk: leave those cases out.
        const changed = (h: Hunk | undefined) => h?.lines.filter((l) => l[0] !== ' ').join('\n');
        fc.pre(changed(ha[0]) !== changed(ha[1]) && changed(hb[0]) !== changed(hb[1]));
        expect(changed(ha[1])).toBe(changed(hb[1]));
        expect(ha[1]?.id).toBe(hb[1]?.id);
        // The changed hunk's id follows its content (not its position).
        expect(ha[0]?.id === hb[0]?.id).toBe(changed(ha[0]) === changed(hb[0]));
      }),
      { numRuns: cases(200) },
    );
  });

  it('identical hunks in one file get distinct, deterministic ids', () => {
    const base = ['x', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 'x', ''].join('\n');
    const next = base.replaceAll('x', 'y');
    const hunks = diffHunks(base, next, 1) ?? [];
    expect(hunks).toHaveLength(2);
    expect(hunks[0]?.lines.filter((l) => l[0] !== ' ')).toEqual(
      hunks[1]?.lines.filter((l) => l[0] !== ' '),
    );
    expect(hunks[0]?.id).not.toBe(hunks[1]?.id);
    expect(diffHunks(base, next, 1)?.map((h) => h.id)).toEqual(hunks.map((h) => h.id));
  });
});

describe('function context', () => {
  it('keeps the section heading git prints after the second @@, also on split pieces', () => {
    const text = [
      'diff --git a/m.py b/m.py',
      '--- a/m.py',
      '+++ b/m.py',
      '@@ -10,5 +10,5 @@ def main():',
      ' a',
      '-b',
      '+B',
      ' c',
      '-d',
      '+D',
      ' e',
      '',
    ].join('\n');
    const [h] = parseHunks(text);
    expect(h).toMatchObject({ context: 'def main():', header: '@@ -10,5 +10,5 @@ def main():' });
    expect(splitHunk(h!).map((p) => p.header)).toEqual([
      '@@ -10,3 +10,3 @@ def main():',
      '@@ -12,3 +12,3 @@ def main():',
    ]);
  });
});

describe('editing a hunk by hand (e)', () => {
  const hunks = parseHunks(GIT_DIFF);
  const editOf = (h: Hunk, f: (lines: string[]) => string[]) =>
    f(hunkEditText(h).split('\n')).join('\n');

  it("writes the hunk with git's guide as # lines, and reads an untouched file back as the same hunk", () => {
    const text = hunkEditText(hunks[2]!);
    expect(text).toContain(
      "# To remove '-' lines, make them ' ' lines (context).\n# To remove '+' lines, delete them.\n# Lines starting with # will be removed.\n",
    );
    expect(text).toContain(
      '@@ -13,3 +14,3 @@ def b():\n def c():\n     return 3\n-last\n\\ No newline at end of file\n+last line\n',
    );
    for (const h of hunks) {
      const back = editedHunk(h, hunkEditText(h))!;
      expect(back).toMatchObject({
        header: h.header,
        lines: h.lines,
        id: h.id,
        index: h.index,
        edited: true,
      });
      expect([back.oldNoNewlineAtEnd, back.newNoNewlineAtEnd]).toEqual([
        h.oldNoNewlineAtEnd,
        h.newNoNewlineAtEnd,
      ]);
    }
  });

  it('recounts the header: a + line deleted, a - line made context', () => {
    const base = 'a\nb\nc\nd\n';
    const [h] = diffHunks(base, 'a\nB\nnew\nc\n', 1)!;
    expect(h!.header).toBe('@@ -1,4 +1,4 @@');
    const noAdd = editedHunk(
      h!,
      editOf(h!, (ls) => ls.filter((l) => l !== '+new')),
    )!;
    expect(noAdd.header).toBe('@@ -1,4 +1,3 @@');
    expect(applyHunks(base, [noAdd], all)).toBe('a\nB\nc\n');
    const keepD = editedHunk(
      h!,
      editOf(h!, (ls) => ls.map((l) => (l === '-d' ? ' d' : l))),
    )!;
    expect(keepD.header).toBe('@@ -1,4 +1,5 @@');
    expect(applyHunks(base, [keepD], all)).toBe('a\nB\nnew\nc\nd\n');
    // an empty line is empty context, as editors strip the space
    const [e] = diffHunks('x\n\ny\n', 'x\n\nY\n', 1)!;
    expect(
      applyHunks(
        'x\n\ny\n',
        [
          editedHunk(
            e!,
            editOf(e!, (ls) => ls.map((l) => (l === ' ' ? '' : l))),
          )!,
        ],
        all,
      ),
    ).toBe('x\n\nY\n');
  });

  it('a broken hunk does not apply; a line of no kind is refused; nothing left aborts the edit', () => {
    const base = 'a\nb\nc\n';
    const [h] = diffHunks(base, 'a\nB\nc\n', 1)!;
    const broken = editedHunk(
      h!,
      editOf(h!, (ls) => ls.map((l) => (l === ' a' ? ' zzz' : l))),
    )!;
    expect(() => withEditedHunk(base, [h!], broken)).toThrow(HunkMismatch);
    const fine = editedHunk(
      h!,
      editOf(h!, (ls) => ls.map((l) => (l === '+B' ? '+b2' : l))),
    )!;
    expect(applyHunks(base, withEditedHunk(base, [h!], fine), all)).toBe('a\nb2\nc\n');
    expect(() =>
      editedHunk(
        h!,
        editOf(h!, (ls) => ls.map((l) => (l === '+B' ? '*B' : l))),
      ),
    ).toThrow(HunkMismatch);
    expect(
      editedHunk(
        h!,
        editOf(h!, (ls) => ls.filter((l) => l.startsWith('#') || l.startsWith('@@'))),
      ),
    ).toBeNull();
  });

  it("relineHunks keeps a person's added lines (as their UTF-8 bytes), and takes the rest from the base", () => {
    const base = 'a\nb\n';
    const [h] = diffHunks(base, 'a\nb\nc\n', 1)!;
    const mine = editedHunk(
      h!,
      editOf(h!, (ls) => ls.map((l) => (l === '+c' ? '+café' : l))),
    )!;
    const b = Buffer.from(base).toString('latin1');
    const out = applyHunks(
      b,
      relineHunks([mine], b, Buffer.from('a\nb\nc\n').toString('latin1')),
      all,
    );
    expect(Buffer.from(out, 'latin1').toString('utf8')).toBe('a\nb\ncafé\n');
  });
});
