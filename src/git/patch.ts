import { cUnquote } from '../core/quote.js';
import { parsePatch } from 'diff';
import type { PreviewHunk } from '../core/preview.js';
import { literal } from './checkpoint.js';
import { git } from './run.js';

/** What a diff compares: the index against HEAD, or two commits (or trees). */
export type DiffRange = 'staged' | readonly [from: string, to: string];

/** `git diff`'s revision arguments for a range. */
function rangeArgs(range: DiffRange): string[] {
  return range === 'staged' ? ['--cached'] : [range[0], range[1]];
}

/**
 * Unified diffs of a few paths, for previews and hunk review. Git computes
 * the diff (fast on any size); jsdiff only parses it. Loaded lazily: the
 * commit gate's silent path never needs it.
 */
export async function readPatches(
  cwd: string,
  range: DiffRange,
  paths: readonly string[],
  contextLines: number,
): Promise<Map<string, PreviewHunk[]>> {
  const out = new Map<string, PreviewHunk[]>();
  for (const [name, section] of await readFileDiffs(cwd, range, paths, contextLines)) {
    const [patch] = parsePatch(section);
    out.set(
      name,
      (patch?.hunks ?? []).map((h) => ({ ...h, lines: [...h.lines] })),
    );
  }
  return out;
}

/** Each path's own section of one `git diff` run, keyed by its new path. */
export async function readFileDiffs(
  cwd: string,
  range: DiffRange,
  paths: readonly string[],
  contextLines: number,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (paths.length === 0) return out;
  const r = await git(
    [
      'diff',
      ...rangeArgs(range),
      `-U${contextLines}`,
      '-M',
      '--ignore-cr-at-eol',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '--',
      ...paths.map(literal),
    ],
    { cwd },
  );
  for (const section of splitSections(r.stdout.toString('utf8'))) {
    const name = sectionPath(section);
    if (name !== null) out.set(name, section);
  }
  return out;
}

/** "diff --git a/x b/x\n..." sections. */
function splitSections(text: string): string[] {
  const parts = text.split(/^(?=diff --git )/m);
  return parts.filter((p) => p.startsWith('diff --git '));
}

/** The new path of a section (the old one for a deletion), from its ---/+++ or rename lines. */
function sectionPath(section: string): string | null {
  const lines = section.split('\n');
  let minus: string | null = null;
  for (const l of lines) {
    if (l.startsWith('rename to ')) return unquote(l.slice('rename to '.length));
    if (l.startsWith('--- ')) minus = l.slice(4);
    if (l.startsWith('+++ ')) {
      const plus = l.slice(4);
      const name = plus === '/dev/null' ? minus : plus;
      return name === null ? null : unquote(name).replace(/^[ab]\//, '');
    }
    if (l.startsWith('@@')) break;
  }
  return null;
}

/** Git's C-style quoting of odd names: "a/tab\there", with \ooo for bytes. */
export function unquote(s: string): string {
  const t = s.replace(/\t$/, '');
  if (!t.startsWith('"') || !t.endsWith('"')) return t;
  return cUnquote(t) ?? t;
}
