/**
 * Property tests: guard's metrics and hunk selection agree with git itself on
 * random contents (empty, no trailing newline, CRLF, mixed and lone CRs,
 * unicode, combining marks, invalid UTF-8, very long lines, repeated lines,
 * NUL bytes (binary to git and to guard alike), whitespace-only edits, mode
 * changes (100644 <-> 100755, with or without a content change), and renames
 * (a file moved, with and without edits, measured the way `guard check`
 * measures a staged rename and compared with `git diff --cached -M`).
 *
 * Every property run writes a batch of pairs into one temporary repository,
 * so a run costs a handful of git processes, not one per pair: the pipeline
 * under test (stagedDiffSplit / treeDiff + collectFacts + classify, readFileDiffs +
 * parseHunks) and the reference (`git diff --numstat`, `git diff -U3`) each
 * read all pairs at once. GUARD_PROPERTY_SEED / GUARD_PROPERTY_RUNS replay or
 * widen a run.
 */
import { appendFileSync, chmodSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { classify, makePolicy } from '../../src/core/classify.js';
import { parseConfig } from '../../src/core/config.js';
import { applyHunks, leftHunks, parseHunks, relineHunks, type Hunk } from '../../src/core/hunks.js';
import { collectFacts } from '../../src/git/changes.js';
import type { ChangeFacts } from '../../src/core/classify.js';
import { stagedDiffSplit, treeDiff, whitespaceOnlyPaths } from '../../src/git/diff.js';
import { readFileDiffs } from '../../src/git/patch.js';
import { cleanEnv, cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

// guard's own git runner uses process.env: no user or system config here either.
Object.assign(process.env, cleanEnv());

const BATCH = 50;
const RUNS = Number(process.env.GUARD_PROPERTY_RUNS ?? 4);
const SEED = process.env.GUARD_PROPERTY_SEED ? Number(process.env.GUARD_PROPERTY_SEED) : undefined;
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

afterAll(cleanupRepos);

// ---------------------------------------------------------------------------
// Generators

interface Line {
  text: Buffer;
  /** "\n", "\r\n", or "" (only meaningful for the last line: no newline at end). */
  end: string;
}

const noBreaks = (s: string) => s.replace(/[\n\r\0]/g, '');
const lineText: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }).map((s) => Buffer.from(noBreaks(s))) },
  // any code point, astral planes included
  {
    weight: 2,
    arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).map((s) => Buffer.from(noBreaks(s))),
  },
  // repeats are what makes diffs ambiguous
  {
    weight: 4,
    arbitrary: fc
      .constantFrom('', '}', '  return x;', 'é', 'e\u0301', '\t', ' ')
      .map((s) => Buffer.from(s)),
  },
  // invalid UTF-8: stray continuation bytes, truncated sequences, overlongs
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 4 })
      .map((a) => Buffer.from(a)),
  },
  // a lone CR inside a line is part of the line for git
  { weight: 1, arbitrary: fc.constant(Buffer.from('a\rb')) },
  // very long lines
  {
    weight: 1,
    arbitrary: fc.integer({ min: 2_000, max: 40_000 }).map((n) => Buffer.from('L'.repeat(n))),
  },
  // NUL bytes: the file is binary for git's numstat, and must be for guard
  { weight: 1, arbitrary: fc.constantFrom('a\0b', '\0', 'x\0\0y').map((s) => Buffer.from(s)) },
);
const ending = fc.constantFrom('\n', '\n', '\n', '\r\n', '\r\n');
const line: fc.Arbitrary<Line> = fc.record({ text: lineText, end: ending });
const lines = fc.array(line, { maxLength: 30 });

type Edit =
  | { op: 'delete'; at: number; n: number }
  | { op: 'insert'; at: number; lines: Line[] }
  | { op: 'replace'; at: number; line: Line }
  | { op: 'crlf'; at: number }
  | { op: 'indent'; at: number; ws: string }
  | { op: 'eof' };

const indented = fc.array(
  fc.record({
    text: fc.string({ maxLength: 12 }).map((t) => Buffer.from(`  ${noBreaks(t)}`)),
    end: ending,
  }),
  { minLength: 1, maxLength: 20 },
);
const reindent: fc.Arbitrary<Edit> = fc.record({
  op: fc.constant('indent' as const),
  at: fc.nat(),
  ws: fc.constantFrom('', ' ', '  ', '    ', '\t', '\t  '),
});
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    op: fc.constant('delete' as const),
    at: fc.nat(),
    n: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({
    op: fc.constant('insert' as const),
    at: fc.nat(),
    lines: fc.array(line, { minLength: 1, maxLength: 5 }),
  }),
  fc.record({ op: fc.constant('replace' as const), at: fc.nat(), line }),
  fc.record({ op: fc.constant('crlf' as const), at: fc.nat() }),
  // a reindent: only the leading whitespace of a line changes
  reindent,
  fc.record({ op: fc.constant('eof' as const) }),
);

interface Pair {
  base: Buffer;
  next: Buffer;
  /** A mode change: 100644 -> 100755 ('up') or 100755 -> 100644 ('down'). */
  mode?: 'up' | 'down';
  /** The file moves from old/ to new/ (with the content change, if any). */
  rename?: boolean;
}

/** Short, replayable form for failure reports (long lines would flood them). */
function show(b: Buffer): string {
  const s = JSON.stringify(b.toString('latin1'));
  return s.length > 300 ? `${s.slice(0, 300)}...(${b.length} bytes)` : s;
}

function makePair(base: Buffer, next: Buffer): Pair {
  return {
    base,
    next,
    [fc.toStringMethod](this: Pair) {
      return `${show(this.base)} -> ${show(this.next)}${this.mode ? ` mode ${this.mode}` : ''}${this.rename ? ' renamed' : ''}`;
    },
  } as Pair;
}

function render(ls: readonly Line[], lastNewline: boolean): Buffer {
  return Buffer.concat(
    ls.flatMap((l, i) => [l.text, Buffer.from(i === ls.length - 1 && !lastNewline ? '' : l.end)]),
  );
}

function applyEdits(base: readonly Line[], edits: readonly Edit[], lastNewline: boolean): Buffer {
  const ls = [...base];
  let nl = lastNewline;
  for (const e of edits) {
    const at = e.op === 'eof' ? 0 : e.at % (ls.length + 1);
    if (e.op === 'delete') ls.splice(at, e.n);
    else if (e.op === 'insert') ls.splice(at, 0, ...e.lines);
    else if (e.op === 'replace') ls.splice(at, 1, e.line);
    else if (e.op === 'crlf' && ls[at])
      ls[at] = { ...ls[at]!, end: ls[at]!.end === '\n' ? '\r\n' : '\n' };
    else if (e.op === 'indent' && ls[at])
      ls[at] = {
        ...ls[at]!,
        text: Buffer.concat([
          Buffer.from(e.ws),
          Buffer.from(ls[at]!.text.toString('latin1').replace(/^[ \t]+/, ''), 'latin1'),
        ]),
      };
    else if (e.op === 'eof') nl = !nl;
  }
  return render(ls, nl);
}

/**
 * A base and a new content: an edit of the base (most), a reindent alone, an
 * unrelated text, or one side empty; 1 in 12 also turns executable and 1 in 12 loses the bit; 1
 * in 4 moves to another directory: half with the edit, half unchanged (one of
 * those also turning executable).
 */
const pair: fc.Arbitrary<Pair> = fc
  .tuple(
    fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .tuple(lines, fc.boolean(), fc.array(edit, { maxLength: 6 }))
          .map(([b, nl, es]) => makePair(render(b, nl), applyEdits(b, es, nl))),
      },
      // whitespace-only: indented lines reindented (to -b: whitespace changed, not added where there was none)
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            indented,
            fc.boolean(),
            fc.array(
              reindent.map((e) => ({ ...e, ws: (e as { ws: string }).ws || '\t' })),
              { minLength: 1, maxLength: 4 },
            ),
          )
          .map(([b, nl, es]) => makePair(render(b, nl), applyEdits(b, es, nl))),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(lines, fc.boolean(), lines, fc.boolean())
          .map(([b, bn, n, nn]) => makePair(render(b, bn), render(n, nn))),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(lines, fc.boolean(), fc.boolean())
          .map(([b, nl, empty]) =>
            empty
              ? makePair(render(b, nl), Buffer.alloc(0))
              : makePair(Buffer.alloc(0), render(b, nl)),
          ),
      },
    ),
    fc.integer({ min: 0, max: 11 }),
  )
  .map(([p, k]) => {
    if (k === 0) return Object.assign(p, { mode: 'up' as const });
    if (k === 1) return Object.assign(p, { mode: 'down' as const });
    if (k === 2 || k === 3) return Object.assign(p, { rename: true });
    if (k === 4) return Object.assign(p, { rename: true, next: p.base });
    if (k === 5) return Object.assign(p, { rename: true, next: p.base, mode: 'up' as const });
    return p;
  });

// ---------------------------------------------------------------------------
// The batch: all pairs in one repository, base commit then new commit

const name = (i: number) => `f${String(i).padStart(3, '0')}.txt`;
const oldName = (i: number) => `old/${name(i)}`;
const newName = (i: number) => `new/${name(i)}`;
const basePath = (p: Pair, i: number) => (p.rename ? oldName(i) : name(i));
const nextPath = (p: Pair, i: number) => (p.rename ? newName(i) : name(i));

interface Batch {
  repo: TestRepo;
  baseCommit: string;
  newCommit: string;
}

function writeBatch(pairs: readonly Pair[]): Batch {
  const repo = makeRepo();
  mkdirSync(path.join(repo.dir, 'old'));
  mkdirSync(path.join(repo.dir, 'new'));
  pairs.forEach((p, i) => {
    repo.write(basePath(p, i), p.base);
    if (p.mode === 'down') chmodSync(path.join(repo.dir, basePath(p, i)), 0o755);
  });
  const baseCommit = repo.commitAll('base');
  pairs.forEach((p, i) => {
    if (p.rename) rmSync(path.join(repo.dir, oldName(i)));
    repo.write(nextPath(p, i), p.next);
    chmodSync(path.join(repo.dir, nextPath(p, i)), p.mode === 'up' ? 0o755 : 0o644);
  });
  repo.git(['add', '-A']);
  return { repo, baseCommit, newCommit: '' };
}

/** `git diff --numstat -z` text: "added TAB deleted TAB path NUL" for each path with a line change. */
function numstat(
  repo: TestRepo,
  args: string[],
): Map<string, { added: number; deleted: number; binary: boolean }> {
  const out = new Map<string, { added: number; deleted: number; binary: boolean }>();
  for (const rec of repo.git(['diff', '--numstat', '-z', '--no-renames', ...args]).split('\0')) {
    if (!rec) continue;
    const [a, d, p] = rec.split('\t');
    // "-\t-" : git counts no lines in a binary file
    out.set(
      p!,
      a === '-'
        ? { added: 0, deleted: 0, binary: true }
        : { added: Number(a), deleted: Number(d), binary: false },
    );
  }
  return out;
}

/** Paths git's numstat calls binary on either side (base or new). */
let binaryPaths = new Set<string>();

const policy = makePolicy(parseConfig('{}', 'test'));

async function checkMetrics(pairs: readonly Pair[]): Promise<void> {
  const b = writeBatch(pairs);
  const { repo } = b;
  // The pipeline `guard check` uses, on the staged change...
  // exactly what guard check does: the raw and numstat halves at once, blobs read meanwhile
  const split = stagedDiffSplit(repo.dir);
  const staged = await split.entries;
  // (whitespace: as check asks git's -b, with every would-be replacement a candidate)
  const rawFacts = (
    await collectFacts(repo.dir, staged, {
      maxBytes: 50 * 1024 * 1024,
      countsReady: split.counts,
      whitespace: { range: ['--cached'], changeRatio: 0 },
    })
  ).facts;
  const stagedFacts = rawFacts.map((f) => classify(f, policy));
  b.newCommit = repo.commitAll('new');
  // ...and the one `guard review` and `guard ci` use, between two commits.
  const tree = await treeDiff(repo.dir, b.baseCommit, b.newCommit);
  const treeFacts = (
    await collectFacts(repo.dir, tree, {
      maxBytes: 50 * 1024 * 1024,
      whitespace: { range: [b.baseCommit, b.newCommit], changeRatio: 0 },
    })
  ).facts.map((f) => classify(f, policy));
  expect(treeFacts).toEqual(stagedFacts);

  // The reference: git's own counts.
  const baseLines = numstat(repo, [EMPTY_TREE, b.baseCommit]);
  const changes = numstat(repo, ['--ignore-cr-at-eol', b.baseCommit, b.newCommit]);
  const byPath = new Map(stagedFacts.map((c) => [c.path, c]));
  const all = numstat(repo, [b.baseCommit, b.newCommit]);
  binaryPaths = new Set([...baseLines, ...all].filter(([, v]) => v.binary).map(([k]) => k));
  pairs.forEach((p, i) => {
    if (p.rename) return; // checked against git's -M below
    const c = byPath.get(name(i));
    const ctx = { i, base: show(p.base), next: show(p.next), mode: p.mode ?? '' };
    if (p.base.equals(p.next) && !p.mode) {
      expect(c, `unchanged pair reported: ${JSON.stringify(ctx)}`).toBeUndefined();
      return;
    }
    expect(c, `changed pair missing: ${JSON.stringify(ctx)}`).toBeDefined();
    if (binaryPaths.has(name(i))) {
      // binary to git (a NUL byte on either side): binary to guard, and never measured in lines
      expect({
        ...ctx,
        binary: c!.binary,
        linesAdded: c!.linesAdded,
        linesDeleted: c!.linesDeleted,
      }).toEqual({ ...ctx, binary: true, linesAdded: 0, linesDeleted: 0 });
      return;
    }
    // a mode change alone is reported as one, with no lines
    if (p.mode && p.base.equals(p.next)) expect(c!.modeOnly, JSON.stringify(ctx)).toBe(true);
    const existing = baseLines.get(name(i))?.added ?? 0;
    const { added, deleted } = changes.get(name(i)) ?? { added: 0, deleted: 0 };
    expect({
      ...ctx,
      existingLines: c!.existingLines,
      linesAdded: c!.linesAdded,
      linesDeleted: c!.linesDeleted,
      changeRatio: c!.changeRatio,
      binary: c!.binary,
    }).toEqual({
      ...ctx,
      existingLines: existing,
      linesAdded: added,
      linesDeleted: deleted,
      changeRatio: existing > 0 ? Math.round((deleted / existing) * 10_000) / 10_000 : 0,
      binary: false,
    });
  });

  checkRenames(b, pairs, rawFacts, baseLines);
  count(b, pairs, all);
  await checkHunks(b, pairs);
}

/** git's raw -M records: new path -> its letter, old path and modes. */
function rawRenames(
  repo: TestRepo,
  from: string,
  to: string,
): Map<
  string,
  {
    letter: string;
    score: number;
    oldPath?: string;
    oldMode: string | null;
    newMode: string | null;
  }
> {
  const out = new Map<
    string,
    {
      letter: string;
      score: number;
      oldPath?: string;
      oldMode: string | null;
      newMode: string | null;
    }
  >();
  const f = repo.git(['diff', '--raw', '-z', '-M', '--no-abbrev', from, to]).split('\0');
  for (let i = 0; i + 1 < f.length;) {
    const [om, nm, , , st] = f[i]!.slice(1).split(' ');
    const letter = st![0]!;
    const mode = (m: string) => (m === '000000' ? null : m);
    if (letter === 'R') {
      out.set(f[i + 2]!, {
        letter,
        score: Number(st!.slice(1)),
        oldPath: f[i + 1]!,
        oldMode: mode(om!),
        newMode: mode(nm!),
      });
      i += 3;
    } else {
      out.set(f[i + 1]!, { letter, score: 0, oldMode: mode(om!), newMode: mode(nm!) });
      i += 2;
    }
  }
  return out;
}

/**
 * Every path guard measured, renames included, against git's own -M: the
 * same pairing (old name -> new name), the same modes, and the same line
 * counts (`git diff --numstat -M --ignore-cr-at-eol`, keyed by the new name).
 */
function checkRenames(
  b: Batch,
  pairs: readonly Pair[],
  facts: readonly ChangeFacts[],
  baseLines: Map<string, { added: number; binary: boolean }>,
): void {
  const { repo } = b;
  const raw = rawRenames(repo, b.baseCommit, b.newCommit);
  const counts = numstatM(repo, [b.baseCommit, b.newCommit]);
  // what -b still counts: a path it leaves out changed only in whitespace
  const spaced = numstatM(repo, ['-b', b.baseCommit, b.newCommit]);
  const seen = new Map(facts.map((c) => [c.path, c]));
  expect([...seen.keys()].sort()).toEqual([...raw.keys()].sort());
  for (const [p, g] of raw) {
    const c = seen.get(p)!;
    const ctx = {
      path: p,
      git: g,
      pairs: pairs.flatMap((q, i) =>
        nextPath(q, i) === p || basePath(q, i) === p || (g.oldPath && basePath(q, i) === g.oldPath)
          ? [`${show(q.base)} -> ${show(q.next)} ${q.mode ?? ''}`]
          : [],
      ),
    };
    expect({ ...ctx, oldPath: c.oldPath, oldMode: c.oldMode, newMode: c.newMode }).toEqual({
      ...ctx,
      oldPath: g.oldPath,
      oldMode: g.oldMode,
      newMode: g.newMode,
    });
    const n = counts.get(p) ?? { added: 0, deleted: 0, binary: false };
    const base = g.oldMode === null ? undefined : baseLines.get(g.oldPath ?? p);
    if (c.binary || n.binary || base?.binary) {
      expect({
        ...ctx,
        binary: c.binary,
        linesAdded: c.linesAdded,
        linesDeleted: c.linesDeleted,
      }).toEqual({ ...ctx, binary: true, linesAdded: 0, linesDeleted: 0 });
      continue;
    }
    expect({
      ...ctx,
      linesAdded: c.linesAdded,
      linesDeleted: c.linesDeleted,
      existingLines: c.existingLines,
    }).toEqual({
      ...ctx,
      linesAdded: n.added,
      linesDeleted: n.deleted,
      existingLines: base?.added ?? 0,
    });
    const candidate = g.oldMode !== null && g.newMode !== null && (base?.added ?? 0) > 0;
    // -b leaves the path out, or (a rename, a mode change: git still lists the pair) counts no line
    const sp = spaced.get(p);
    const wsOnly = sp === undefined || (!sp.binary && sp.added === 0 && sp.deleted === 0);
    expect({ ...ctx, whitespaceOnly: c.whitespaceOnly }).toEqual({
      ...ctx,
      whitespaceOnly: candidate && wsOnly ? true : undefined,
    });
  }
}

/** `git diff --numstat -M --ignore-cr-at-eol` (as guard reads it), keyed by the new name of a rename. */
function numstatM(
  repo: TestRepo,
  args: string[],
): Map<string, { added: number; deleted: number; binary: boolean }> {
  const out = new Map<string, { added: number; deleted: number; binary: boolean }>();
  const f = repo.git(['diff', '--numstat', '-z', '-M', '--ignore-cr-at-eol', ...args]).split('\0');
  for (let i = 0; i < f.length;) {
    if (!f[i]) {
      i++;
      continue;
    }
    const [a, d, p] = f[i]!.split('\t');
    const target = p === '' ? f[i + 2]! : p!;
    i += p === '' ? 3 : 1;
    out.set(
      target,
      a === '-'
        ? { added: 0, deleted: 0, binary: true }
        : { added: Number(a), deleted: Number(d), binary: false },
    );
  }
  return out;
}

/** How many pairs of each kind a run tried (GUARD_PROPERTY_COUNTS: a file the soak reads). */
const kinds: Record<string, number> = {
  pairs: 0,
  nul: 0,
  whitespaceOnly: 0,
  modeChange: 0,
  renameEdited: 0,
  renameExact: 0,
  renameSplit: 0,
};
function count(
  b: Batch,
  pairs: readonly Pair[],
  all: Map<string, { added: number; deleted: number; binary: boolean }>,
): void {
  const raw = rawRenames(b.repo, b.baseCommit, b.newCommit);
  const ignoringSpace = numstat(b.repo, ['-b', b.baseCommit, b.newCommit]);
  kinds.pairs! += pairs.length;
  pairs.forEach((p, i) => {
    const g = raw.get(nextPath(p, i));
    if (p.base.includes(0) || p.next.includes(0)) kinds.nul!++;
    if (g && g.oldMode !== null && g.newMode !== null && g.oldMode !== g.newMode)
      kinds.modeChange!++;
    if (p.rename) {
      if (g?.letter === 'R') kinds[g.score === 100 ? 'renameExact' : 'renameEdited']!++;
      else kinds.renameSplit!++;
    } else {
      const n = all.get(name(i));
      if (n && !n.binary && n.added + n.deleted > 0 && !ignoringSpace.has(name(i)))
        kinds.whitespaceOnly!++;
    }
  });
}
afterAll(() => {
  if (process.env.GUARD_PROPERTY_COUNTS)
    appendFileSync(process.env.GUARD_PROPERTY_COUNTS, `${JSON.stringify(kinds)}\n`);
});

/** Sections of one `git diff` over many files, keyed by path ("diff --git a/P b/P"). */
function sections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of text.split(/^(?=diff --git )/m)) {
    const m = /^diff --git a\/(\S+) /.exec(s);
    if (m) out.set(m[1]!, s);
  }
  return out;
}

/**
 * Texts equal as `--ignore-cr-at-eol` sees them: a CR before a line's end is
 * ignored, and so (git's xdiff compares lines without their end) is a
 * missing newline at the end of the file.
 */
const crInsensitive = (s: string) =>
  s === '' ? '' : s.replace(/\r?\n|\r$/g, '\n').replace(/([^\n])$/, '$1\n');

async function checkHunks(b: Batch, pairs: readonly Pair[]): Promise<void> {
  const { repo } = b;
  // git's exact diff: every line accounted for, byte for byte (as decoded text).
  const exact = sections(
    repo.git(['diff', '-U3', '--no-renames', '--no-color', b.baseCommit, b.newCommit]),
  );
  // what `guard review` reads: line ending changes alone are not changes.
  const review = await readFileDiffs(
    repo.dir,
    [b.baseCommit, b.newCommit],
    pairs.map((_, i) => name(i)),
    3,
  );
  pairs.forEach((p, i) => {
    if (p.rename) return; // the metrics of a move are checked against -M; its hunks are an edit's hunks
    if (binaryPaths.has(name(i))) return; // git prints no hunks for a binary file
    const base = p.base.toString('utf8');
    const next = p.next.toString('utf8');
    const hunks = parseHunks(exact.get(name(i)) ?? '');
    const ctx = `pair ${i}: ${show(p.base)} -> ${show(p.next)}`;
    expect(
      applyHunks(base, hunks, () => false),
      ctx,
    ).toBe(base);
    expect(
      applyHunks(base, hunks, () => true),
      ctx,
    ).toBe(next);
    for (const subset of subsets(hunks, i)) {
      const mid = applyHunks(base, hunks, subset);
      const left = leftHunks(hunks, subset);
      expect(left.length + subset.size, ctx).toBe(hunks.length);
      expect(
        applyHunks(mid, left, () => true),
        `${ctx} taking ${[...subset]}`,
      ).toBe(next);
    }

    // byte for byte, whatever the encoding: lines taken again from both sides read as latin1 (what review does)
    const [b1, n1] = [p.base.toString('latin1'), p.next.toString('latin1')];
    expect(
      Buffer.from(
        applyHunks(b1, relineHunks(hunks, b1, n1), () => true),
        'latin1',
      ).equals(p.next),
      ctx,
    ).toBe(true);

    const rh = parseHunks(review.get(name(i)) ?? '');
    expect(
      applyHunks(base, rh, () => false),
      ctx,
    ).toBe(base);
    expect(crInsensitive(applyHunks(base, rh, () => true)), ctx).toBe(crInsensitive(next));
    for (const subset of subsets(rh, i)) {
      const mid = applyHunks(base, rh, subset);
      expect(
        crInsensitive(applyHunks(mid, leftHunks(rh, subset), () => true)),
        `${ctx} taking ${[...subset]}`,
      ).toBe(crInsensitive(next));
    }
  });
}

/** A few subsets of the hunk indexes: each single hunk, every other one, and a mixed one from `seed`. */
function subsets(hunks: readonly Hunk[], seed: number): Array<Set<number>> {
  const out: Array<Set<number>> = [];
  for (const h of hunks) out.push(new Set([h.index]));
  out.push(new Set(hunks.filter((h) => h.index % 2 === 0).map((h) => h.index)));
  out.push(new Set(hunks.filter((h) => (h.index * 7 + seed) % 3 !== 0).map((h) => h.index)));
  return out;
}

describe('metrics and hunks agree with git on random contents', () => {
  it(
    `${RUNS} batches of ${BATCH} pairs`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(pair, { minLength: BATCH, maxLength: BATCH }), async (pairs) => {
          await checkMetrics(pairs);
        }),
        { numRuns: RUNS, endOnFailure: true, ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
    },
    Math.max(300_000, RUNS * 6_000),
  ); // the soak runs 200 batches
});

describe('hunks read with --ignore-cr-at-eol', () => {
  it('apply to a CRLF base whose lines the new side ends with LF (git prints context from the new side)', () => {
    const base = 'a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\n';
    // as `git diff --ignore-cr-at-eol` prints it for base -> "a b C d e f g h I j" with LF endings
    const diff = [
      '@@ -1,6 +1,6 @@',
      ' a',
      ' b',
      '-c\r',
      '+C',
      ' d',
      ' e',
      ' f',
      '@@ -6,5 +6,5 @@',
      ' f',
      ' g',
      ' h',
      '-i\r',
      '+I',
      ' j',
      '',
    ].join('\n');
    const hunks = parseHunks(diff);
    expect(hunks).toHaveLength(2);
    const first = applyHunks(base, hunks, new Set([0]));
    expect(first).toBe('a\r\nb\r\nC\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj\r\n');
    expect(applyHunks(first, leftHunks(hunks, new Set([0])), () => true)).toBe(
      'a\r\nb\r\nC\nd\r\ne\r\nf\r\ng\r\nh\r\nI\nj\r\n',
    );
  });
});

describe('whitespace-only with a rename or a mode change (smallest failures of the property)', () => {
  // git -b still lists such a pair, with 0 lines (`0 0 x => y`): it changed only in whitespace
  const ten = Array.from({ length: 10 }, (_, i) => `  line ${i}\n`).join('');
  const reindented = ten.replace('  line 1\n', '\tline 1\n').replace('  line 2\n', '    line 2\n');

  it('a staged rename whose edit is a reindent is whitespace-only', async () => {
    const repo = makeRepo({ 'x.txt': ten });
    repo.git(['mv', 'x.txt', 'y.txt']);
    repo.write('y.txt', reindented);
    repo.git(['add', '-A']);
    const split = stagedDiffSplit(repo.dir);
    const entries = await split.entries;
    await split.counts;
    expect(entries.map((e) => [e.letter, e.oldPath, e.path])).toEqual([['R', 'x.txt', 'y.txt']]);
    expect([...(await whitespaceOnlyPaths(repo.dir, ['--cached'], entries))]).toEqual(['y.txt']);
  });

  it('a reindent that also changes the mode (100755 -> 100644) is whitespace-only', async () => {
    const repo = makeRepo({ 'f.txt': '  Sb9' });
    chmodSync(path.join(repo.dir, 'f.txt'), 0o755);
    repo.commitAll('executable');
    repo.write('f.txt', '    Sb9');
    chmodSync(path.join(repo.dir, 'f.txt'), 0o644);
    repo.git(['add', '-A']);
    const split = stagedDiffSplit(repo.dir);
    const entries = await split.entries;
    await split.counts;
    expect(entries.map((e) => [e.oldMode, e.newMode])).toEqual([['100755', '100644']]);
    expect([...(await whitespaceOnlyPaths(repo.dir, ['--cached'], entries))]).toEqual(['f.txt']);
  });
});
