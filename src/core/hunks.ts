/**
 * Hunks of one file's change, and applying a chosen subset of them.
 *
 * Pure: text in, text out. Hunks come either from git's own unified diff
 * (`parseHunks`, for any size) or from jsdiff (`diffHunks`, bounded input
 * only, because jsdiff's Myers diff is quadratic on rewrites).
 *
 * Text model. A text is split on "\n" only: a line keeps any "\r" it has, so
 * CRLF files round-trip byte for byte. A last line without "\n" is flagged on
 * the hunk that touches it (`oldNoNewlineAtEnd` / `newNoNewlineAtEnd`), which
 * is what git's "\ No newline at end of file" marker says. The empty text has
 * no lines.
 */
import { createRequire } from 'node:module';
import type * as JsDiff from 'diff';
import type { StructuredPatchHunk } from 'diff';
import { sha1Hex } from './digest.js';

// jsdiff takes ~11 ms to load, and the commit gate needs it only when it
// shows hunks or finds a placeholder comment: loaded (its CommonJS build,
// synchronously) on first use.
let jsdiff: typeof JsDiff | null = null;
const diffLib = (): typeof JsDiff =>
  (jsdiff ??= createRequire(import.meta.url)('diff') as typeof JsDiff);

export interface Hunk {
  /** 0-based position in diff order. */
  index: number;
  /**
   * First 12 hex chars of sha1 over the removed and added lines (not the
   * context, not the line numbers), so it names the same change after other
   * hunks of the file change. The n-th repeat (n >= 1) of identical content
   * in one file also hashes "#n".
   */
  id: string;
  /** `@@ -a,b +c,d @@ context`, formatted as git does (",1" is left out). */
  header: string;
  /** git's function context: the section heading after the second `@@` (the enclosing function or class). */
  context?: string;
  /** As in the header: 1-based; when the count is 0, the line before the gap. */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** ' ', '-' or '+' followed by the line, without its "\n" (a "\r" stays). */
  lines: string[];
  /** The hunk's last old-side line is the old file's last, and has no "\n". */
  oldNoNewlineAtEnd: boolean;
  /** The hunk's last new-side line is the new file's last, and has no "\n". */
  newNoNewlineAtEnd: boolean;
  /** A person edited it by hand (`e`): its added lines are theirs, not the proposal's. */
  edited?: boolean;
}

/**
 * Above this many lines (old + new), `diffHunks` returns null and the caller
 * asks git (`git diff`), whose xdiff has heuristics jsdiff lacks.
 */
export const MAX_JSDIFF_LINES = 5000;
/** jsdiff gives up (deterministically) beyond this many edited lines. */
export const MAX_JSDIFF_EDIT_LENGTH = 2000;

/** A hunk's context or removed line does not match the text it is applied to. */
export class HunkMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HunkMismatch';
  }
}

// ---------------------------------------------------------------------------
// Reading hunks

/**
 * Hunks of git's unified diff of ONE file (`git diff -U<n> -- PATH`, or
 * `git diff --no-index`). The file headers are optional; a diff with no hunks
 * (no change, binary, mode only) gives []. Hunk lines look like:
 *
 *     @@ -1,3 +1,3 @@ optional section heading
 *      context
 *     -old
 *     +new
 *     \ No newline at end of file
 *
 * Throws if the text holds more than one file's diff.
 */
export function parseHunks(unifiedDiffText: string): Hunk[] {
  const patches = diffLib().parsePatch(unifiedDiffText);
  const withHunks = patches.filter((p) => p.hunks.length > 0);
  if (withHunks.length > 1) {
    throw new Error(`parseHunks: expected the diff of one file, got ${withHunks.length}`);
  }
  // jsdiff drops git's section heading ("@@ -1,3 +1,3 @@ def main():"); read it back, in order.
  const headings = [
    ...unifiedDiffText.matchAll(/^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$/gm),
  ].map((m) => m[1] ?? '');
  const hunks = withHunks[0]?.hunks ?? [];
  if (headings.length !== hunks.length) return fromJsdiff(hunks);
  return fromJsdiff(hunks, headings);
}

/**
 * Hunks turning `oldText` into `newText` with `contextLines` lines of
 * context, or null when the input is too large for jsdiff (more than
 * MAX_JSDIFF_LINES lines together, or more than MAX_JSDIFF_EDIT_LENGTH
 * changed lines): then use `git diff` and `parseHunks`.
 */
export function diffHunks(oldText: string, newText: string, contextLines: number): Hunk[] | null {
  if (lineCount(oldText) + lineCount(newText) > MAX_JSDIFF_LINES) return null;
  if (oldText === newText) return [];
  const patch = diffLib().structuredPatch('a', 'b', oldText, newText, undefined, undefined, {
    context: Math.max(0, Math.floor(contextLines)),
    maxEditLength: MAX_JSDIFF_EDIT_LENGTH,
  });
  if (!patch) return null;
  return fromJsdiff(patch.hunks);
}

/** Converts jsdiff hunks (whose start is the line after the gap when a count is 0). */
function fromJsdiff(hunks: StructuredPatchHunk[], headings: readonly string[] = []): Hunk[] {
  const raw = hunks.map((h, n) => {
    const lines: string[] = [];
    let oldNoNewlineAtEnd = false;
    let newNoNewlineAtEnd = false;
    for (const line of h.lines) {
      if (line.startsWith('\\')) {
        const prev = lines[lines.length - 1] ?? '';
        if (prev.startsWith('-') || prev.startsWith(' ')) oldNoNewlineAtEnd = true;
        if (prev.startsWith('+') || prev.startsWith(' ')) newNoNewlineAtEnd = true;
      } else {
        // jsdiff reads an empty line inside a hunk as empty context.
        lines.push(line === '' ? ' ' : line);
      }
    }
    return {
      oldStart: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newLines === 0 ? h.newStart - 1 : h.newStart,
      newLines: h.newLines,
      lines,
      oldNoNewlineAtEnd,
      newNoNewlineAtEnd,
      ...(headings[n] ? { context: headings[n] } : {}),
    };
  });
  return reindex(raw);
}

type HunkBody = Omit<Hunk, 'index' | 'id' | 'header'>;

/**
 * Gives hunks (in diff order) their index, id and header. Use it after
 * replacing a hunk by the pieces of `splitHunk`.
 */
export function reindex(hunks: readonly HunkBody[]): Hunk[] {
  const seen = new Map<string, number>();
  return hunks.map((h, index) => {
    const content = hunkContent(h);
    const n = seen.get(content) ?? 0;
    seen.set(content, n + 1);
    return {
      ...h,
      index,
      id: sha12(n === 0 ? content : `${content}\0#${n}`),
      header: formatHeader(h),
    };
  });
}

/** What a hunk changes, and nothing about where. */
function hunkContent(h: HunkBody): string {
  const changed = h.lines.filter((l) => l[0] === '-' || l[0] === '+');
  const eof =
    (h.oldNoNewlineAtEnd ? '\0old-noeol' : '') + (h.newNoNewlineAtEnd ? '\0new-noeol' : '');
  return changed.join('\n') + eof;
}

function sha12(s: string): string {
  return sha1Hex(s).slice(0, 12);
}

function formatHeader(
  h: Pick<Hunk, 'oldStart' | 'oldLines' | 'newStart' | 'newLines' | 'context'>,
): string {
  const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
  return `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@${h.context ? ` ${h.context}` : ''}`;
}

// ---------------------------------------------------------------------------
// Splitting

/**
 * Splits a hunk where unchanged lines separate its changes, as `s` does in
 * `git add -p`: each piece keeps the context before and after it, so pieces
 * share the context lines between them. Returns [h] when it cannot split.
 * The pieces keep `h.index` and get ids of their own content; call `reindex`
 * on the file's whole list to renumber.
 */
export function splitHunk(h: Hunk): Hunk[] {
  // Runs of change lines, as [start, end) indexes into h.lines.
  const runs: Array<[number, number]> = [];
  for (let i = 0; i < h.lines.length;) {
    if (h.lines[i]?.[0] === ' ') {
      i++;
      continue;
    }
    const start = i;
    while (i < h.lines.length && h.lines[i]?.[0] !== ' ') i++;
    runs.push([start, i]);
  }
  if (runs.length < 2) return [h];

  const pieces: HunkBody[] = [];
  let oldLine = h.oldLines === 0 ? h.oldStart + 1 : h.oldStart; // old line number of h.lines[0]
  let newLine = h.newLines === 0 ? h.newStart + 1 : h.newStart;
  let pos = 0; // index in h.lines that oldLine/newLine refer to
  const advance = (to: number) => {
    for (; pos < to; pos++) {
      const c = h.lines[pos]?.[0];
      if (c !== '+') oldLine++;
      if (c !== '-') newLine++;
    }
  };
  runs.forEach((_run, r) => {
    const from = r === 0 ? 0 : (runs[r - 1]?.[1] ?? 0);
    const to = r === runs.length - 1 ? h.lines.length : (runs[r + 1]?.[0] ?? h.lines.length);
    advance(from);
    const lines = h.lines.slice(from, to);
    const oldCount = lines.filter((l) => l[0] !== '+').length;
    const newCount = lines.filter((l) => l[0] !== '-').length;
    const isLast = r === runs.length - 1;
    pieces.push({
      oldStart: oldCount === 0 ? oldLine - 1 : oldLine,
      oldLines: oldCount,
      newStart: newCount === 0 ? newLine - 1 : newLine,
      newLines: newCount,
      lines,
      oldNoNewlineAtEnd: isLast && h.oldNoNewlineAtEnd,
      newNoNewlineAtEnd: isLast && h.newNoNewlineAtEnd,
      ...(h.context ? { context: h.context } : {}),
      ...(h.edited ? { edited: true } : {}),
    });
  });
  return reindex(pieces).map((p) => ({ ...p, index: h.index }));
}

// ---------------------------------------------------------------------------
// Applying

/** Which hunks to take: a predicate, or a set of hunk indexes. */
export type HunkChoice = ((h: Hunk) => boolean) | ReadonlySet<number>;

function chooser(take: HunkChoice): (h: Hunk) => boolean {
  return typeof take === 'function' ? take : (h) => take.has(h.index);
}

interface TextLines {
  lines: string[];
  /** The last line ends with "\n" (true for the empty text). */
  endsWithNewline: boolean;
}

/** Splits on "\n" only; "\r" stays part of its line. */
export function splitText(text: string): TextLines {
  if (text === '') return { lines: [], endsWithNewline: true };
  const lines = text.split('\n');
  const endsWithNewline = text.endsWith('\n');
  if (endsWithNewline) lines.pop();
  return { lines, endsWithNewline };
}

function lineCount(text: string): number {
  return splitText(text).lines.length;
}

/**
 * The old-side index (0-based, into the base's lines) where the hunk's
 * changes begin, the number of old lines they span, and the lines from the
 * first change to the last (context inside a hunk stays, context around it
 * goes). Applying only this core lets pieces of a split hunk, which share
 * context, be applied next to each other.
 */
function core(h: Hunk): { at: number; oldCount: number; lines: string[]; addsLastLine: boolean } {
  let first = h.lines.findIndex((l) => l[0] !== ' ');
  let last = h.lines.length - 1;
  while (last >= 0 && h.lines[last]?.[0] === ' ') last--;
  if (first === -1) first = h.lines.length; // only context: changes nothing
  const lead = h.lines.slice(0, first).length;
  const lines = h.lines.slice(first, last + 1);
  const base = h.oldLines === 0 ? h.oldStart : h.oldStart - 1;
  // The new side's last line is in the core only if no context follows it.
  const addsLastLine = last === h.lines.length - 1;
  return {
    at: base + lead,
    oldCount: lines.filter((l) => l[0] !== '+').length,
    lines,
    addsLastLine,
  };
}

/**
 * The base with the chosen hunks applied. `hunks` must be hunks of a diff
 * from `baseText` (any order; their changes may not overlap). Taking all of
 * a diff's hunks gives the new text; taking none gives `baseText` back.
 * Throws HunkMismatch when a taken hunk's lines are not in the base.
 *
 * Newlines: a line keeps its "\r"; the result ends without "\n" only when
 * its last line comes from a side that had none (base or the taken hunk).
 */
export function applyHunks(baseText: string, hunks: readonly Hunk[], take: HunkChoice): string {
  const takes = chooser(take);
  const base = splitText(baseText);
  const out: Array<{ text: string; newline: boolean }> = [];
  const baseLine = (i: number) => ({
    text: base.lines[i] ?? '',
    newline: i < base.lines.length - 1 || base.endsWithNewline,
  });

  const chosen = hunks
    .filter(takes)
    .map((h) => ({ h, c: core(h) }))
    .sort((a, b) => a.c.at - b.c.at || a.h.index - b.h.index);

  let cursor = 0;
  for (const { h, c } of chosen) {
    if (c.at < cursor || c.at + c.oldCount > base.lines.length) {
      throw new HunkMismatch(`hunk ${h.header} overlaps another hunk or lies outside the base`);
    }
    for (; cursor < c.at; cursor++) out.push(baseLine(cursor));
    const lastNew = lastIndex(c.lines, (l) => l[0] !== '-');
    c.lines.forEach((l, i) => {
      const text = l.slice(1);
      if (l[0] === '+') {
        const noNewline = h.newNoNewlineAtEnd && c.addsLastLine && i === lastNew;
        out.push({ text, newline: !noNewline });
        return;
      }
      if (!sameLine(base.lines[cursor], text)) {
        throw new HunkMismatch(`hunk ${h.header} does not match the base at line ${cursor + 1}`);
      }
      if (l[0] === ' ') out.push(baseLine(cursor));
      cursor++;
    });
  }
  for (; cursor < base.lines.length; cursor++) out.push(baseLine(cursor));

  // A line without "\n" that is no longer last gets one (only a removed or
  // replaced last line can lack it, so this keeps every result well formed).
  return out.map((l, i) => l.text + (l.newline || i < out.length - 1 ? '\n' : '')).join('');
}

/**
 * A hunk line matches a base line up to a CR at its end: with
 * `--ignore-cr-at-eol` (what review reads) git prints context lines from the
 * new side, so "x" stands for a CRLF base's "x\r". The base's own line is
 * what the result keeps.
 */
function sameLine(baseLine: string | undefined, hunkLine: string): boolean {
  if (baseLine === undefined) return false;
  return baseLine === hunkLine || baseLine.replace(/\r$/, '') === hunkLine.replace(/\r$/, '');
}

function lastIndex<T>(xs: readonly T[], p: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (p(xs[i] as T)) return i;
  return -1;
}

/**
 * The hunks NOT taken, moved so that they apply to the result of
 * `applyHunks(base, hunks, take)`: applying all of them to that result gives
 * the new text. Their ids do not change; indexes are renumbered from 0.
 * Together with the taken hunks they hold every changed line.
 */
export function leftHunks(hunks: readonly Hunk[], take: HunkChoice): Hunk[] {
  const takes = chooser(take);
  const ordered = [...hunks].sort((a, b) => core(a).at - core(b).at || a.index - b.index);
  let shift = 0; // lines the taken hunks so far added minus removed
  const left: Hunk[] = [];
  for (const h of ordered) {
    if (takes(h)) {
      shift += h.newLines - h.oldLines; // context counts on both sides
      continue;
    }
    left.push({ ...h, oldStart: h.oldStart + shift });
  }
  return left.map((h, index) => ({ ...h, index, header: formatHeader(h) }));
}

/**
 * The hunks with every line's text taken from the texts by line number:
 * context and removed lines from `baseText`, added lines from `newText`.
 * Apply the result to `baseText` when the diff was decoded differently from
 * the texts: read as "latin1" (one char per byte) both sides round-trip byte
 * for byte, so invalid UTF-8 in lines nobody chose stays as it was. A hunk
 * a person edited (`edited`) keeps its added lines, as their UTF-8 bytes.
 */
export function relineHunks(hunks: readonly Hunk[], baseText: string, newText: string): Hunk[] {
  const base = splitText(baseText).lines;
  const next = splitText(newText).lines;
  return hunks.map((h) => {
    let oldAt = h.oldLines === 0 ? h.oldStart : h.oldStart - 1;
    let newAt = h.newLines === 0 ? h.newStart : h.newStart - 1;
    const lines = h.lines.map((l) => {
      // A person's own added lines are in no text: their UTF-8 bytes, one char per byte like the texts.
      if (l[0] === '+' && h.edited) return `+${Buffer.from(l.slice(1), 'utf8').toString('latin1')}`;
      if (l[0] === '+') return `+${next[newAt++] ?? l.slice(1)}`;
      if (l[0] === ' ') newAt++;
      return `${l[0]}${base[oldAt++] ?? l.slice(1)}`;
    });
    return { ...h, lines };
  });
}

// ---------------------------------------------------------------------------
// Editing by hand (`e`, as in git add -p)

/** git add -p's guide, under the hunk in the file the person edits. */
const EDIT_GUIDE = [
  '# ---',
  "# To remove '-' lines, make them ' ' lines (context).",
  "# To remove '+' lines, delete them.",
  '# Lines starting with # will be removed.',
  '#',
  '# If the edited hunk applies, it is taken for this hunk at once.',
  '# If it does not apply, guard says so and asks about the original hunk again.',
  '# If all lines of the hunk are removed, the edit is aborted and the hunk is',
  '# left unchanged.',
];

/**
 * The text a person edits for `e`: a comment line, the hunk (header, lines,
 * git's "\ No newline at end of file" markers), then git's instructions as
 * `#` lines. `editedHunk` reads it back.
 */
export function hunkEditText(h: Hunk): string {
  const lastOld = lastIndex(h.lines, (l) => l[0] !== '+');
  const lastNew = lastIndex(h.lines, (l) => l[0] !== '-');
  const body: string[] = [];
  h.lines.forEach((l, i) => {
    body.push(l);
    if ((h.oldNoNewlineAtEnd && i === lastOld) || (h.newNoNewlineAtEnd && i === lastNew))
      body.push('\\ No newline at end of file');
  });
  return (
    [
      '# Manual hunk edit mode -- see bottom for a quick guide.',
      h.header,
      ...body,
      ...EDIT_GUIDE,
    ].join('\n') + '\n'
  );
}

/**
 * The hunk a person made of `h` by editing `hunkEditText(h)`: `#` lines and
 * the `@@` header are dropped, an empty line is an empty context line, and
 * the header is recounted (the starts stay where `h` is, as git recounts an
 * edited hunk). null when no line is left (git: the edit is aborted). Throws
 * HunkMismatch on a line that is not context, '-', '+' or a no-newline
 * marker. Whether it applies is `applyHunks`' to say.
 */
export function editedHunk(h: Hunk, text: string): Hunk | null {
  const raw = text.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const lines: string[] = [];
  let oldNoNewlineAtEnd = false;
  let newNoNewlineAtEnd = false;
  for (const line of raw) {
    if (line.startsWith('#') || line.startsWith('@@')) continue;
    if (line.startsWith('\\')) {
      const prev = lines[lines.length - 1]?.[0];
      if (prev === undefined) throw new HunkMismatch('a no-newline marker before any line');
      if (prev !== '+') oldNoNewlineAtEnd = true;
      if (prev !== '-') newNoNewlineAtEnd = true;
      continue;
    }
    const kind = line === '' || line === '\r' ? ' ' : line[0];
    if (kind !== ' ' && kind !== '-' && kind !== '+')
      throw new HunkMismatch(
        `a line that is not context, '-' or '+': ${JSON.stringify(line.slice(0, 40))}`,
      );
    lines.push(line === '' ? ' ' : line === '\r' ? ' \r' : line);
  }
  if (lines.length === 0) return null;
  // The line numbers of the hunk's first line on each side; a count of 0 names the line before the gap.
  const firstOld = h.oldLines === 0 ? h.oldStart + 1 : h.oldStart;
  const firstNew = h.newLines === 0 ? h.newStart + 1 : h.newStart;
  const oldLines = lines.filter((l) => l[0] !== '+').length;
  const newLines = lines.filter((l) => l[0] !== '-').length;
  const [edited] = reindex([
    {
      oldStart: oldLines === 0 ? firstOld - 1 : firstOld,
      oldLines,
      newStart: newLines === 0 ? firstNew - 1 : firstNew,
      newLines,
      lines,
      oldNoNewlineAtEnd,
      newNoNewlineAtEnd,
      ...(h.context ? { context: h.context } : {}),
      edited: true,
    },
  ]);
  return { ...edited!, index: h.index };
}

/**
 * `hunks` with `edited` in place of the hunk of its index, when it still
 * applies to the base: every old-side line of it (its context too, as
 * `git apply` checks) is the base's at its place, and it applies together
 * with the other hunks. Throws HunkMismatch when it does not.
 */
export function withEditedHunk(baseText: string, hunks: readonly Hunk[], edited: Hunk): Hunk[] {
  const base = splitText(baseText).lines;
  let at = edited.oldLines === 0 ? edited.oldStart : edited.oldStart - 1;
  for (const l of edited.lines) {
    if (l[0] === '+') continue;
    if (!sameLine(base[at], l.slice(1)))
      throw new HunkMismatch(`hunk ${edited.header} does not match the base at line ${at + 1}`);
    at++;
  }
  const next = hunks.map((h) => (h.index === edited.index ? edited : h));
  applyHunks(baseText, next, () => true);
  return next;
}
