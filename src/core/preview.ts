import type { Classification } from './classify.js';
import { plural } from './quote.js';

/** The shape of a hunk as jsdiff's parsePatch and core/hunks give it. */
export interface PreviewHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface Styler {
  red(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const plain: Styler = {
  red: (s) => s,
  green: (s) => s,
  cyan: (s) => s,
  dim: (s) => s,
  bold: (s) => s,
};

/** Longest line shown; longer ones are cut with a marker (minified code, data). */
export const MAX_LINE_CHARS = 200;
/** Byte cap on one preview, whatever maxLines says. */
export const MAX_PREVIEW_BYTES = 64 * 1024;

export interface Bounded {
  lines: string[];
  truncated: boolean;
  /** How many lines were left out. */
  omitted: number;
}

function clip(line: string): string {
  const noCr = line.replace(/\r$/, '');
  return noCr.length > MAX_LINE_CHARS ? noCr.slice(0, MAX_LINE_CHARS) + ' [...]' : noCr;
}

function bound(all: Iterable<string>, maxLines: number): Bounded {
  const lines: string[] = [];
  let bytes = 0;
  let total = 0;
  for (const l of all) {
    total++;
    if (lines.length < maxLines && bytes + l.length <= MAX_PREVIEW_BYTES) {
      lines.push(l);
      bytes += l.length + 1;
    }
  }
  return { lines, truncated: total > lines.length, omitted: total - lines.length };
}

/** The lines that would be deleted, with their line numbers in the old file. */
export function deletionSummary(
  hunks: readonly PreviewHunk[],
  maxLines: number,
  s: Styler = plain,
): Bounded {
  function* rows() {
    for (const h of hunks) {
      let old = h.oldStart;
      for (const l of h.lines) {
        if (l.startsWith('-')) yield s.red(`${String(old).padStart(6)} - ${clip(l.slice(1))}`);
        if (l.startsWith('-') || l.startsWith(' ')) old++;
      }
    }
  }
  return bound(rows(), maxLines);
}

/** A unified-diff preview with coloured lines. */
export function diffPreview(
  hunks: readonly PreviewHunk[],
  maxLines: number,
  s: Styler = plain,
): Bounded {
  function* rows() {
    for (const h of hunks) {
      yield s.cyan(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
      for (const l of h.lines) {
        if (l.startsWith('-')) yield s.red(clip(l));
        else if (l.startsWith('+')) yield s.green(clip(l));
        else if (l.startsWith('\\')) yield s.dim(clip(l));
        else yield clip(l);
      }
    }
  }
  return bound(rows(), maxLines);
}

export function metricsLine(c: Classification): string {
  if (c.binary) return `binary file`;
  if (c.status === 'new') return `${plural(c.linesAdded, 'line')} added`;
  if (c.status === 'delete') return `${plural(c.existingLines, 'line')} deleted (the whole file)`;
  const pct = Math.round(c.changeRatio * 100);
  return `${plural(c.existingLines, 'line')}, ${c.linesDeleted} deleted (${pct}%), ${c.linesAdded} added`;
}

export function omittedNote(b: Bounded, what: string): string | null {
  return b.truncated ? `... ${b.omitted} more ${what} not shown` : null;
}
