import { checkBudget } from '../runtime/deadline.js';
import { looseReplace } from './loose-match.js';
import type { PatchChunk, SearchReplace, StringEdit } from './types.js';

/**
 * Apply a tool's edit to the current text of a file, the way the harness
 * itself will, to know what the file will hold after the call. When the
 * harness would fail the edit (old text not found, found twice without
 * replace_all, a patch whose context is gone) the result says so, and
 * guard refuses the call: it cannot be sure the harness would fail it too
 * (the harnesses match loosely, see loose-match.ts).
 */
export type EditResult = { ok: true; text: string; loose?: string[] } | { ok: false; why: string };

const fail = (why: string): EditResult => ({ ok: false, why });

function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length))
    if ((++n & 0xfff) === 0) checkBudget();
  return n;
}

/** Claude Edit/MultiEdit, Gemini replace, Cursor StrReplace: in order, each on the result of the last. */
export function applyStringEdits(text: string, edits: readonly StringEdit[]): EditResult {
  let out = text;
  const loose: string[] = [];
  for (const [i, e] of edits.entries()) {
    // each edit reads the whole file: many edits of a large file are long
    checkBudget();
    const which = edits.length > 1 ? `edit ${i + 1}: ` : '';
    if (e.oldString === '') {
      // Claude/Gemini: an empty old_string creates a file; on an existing non-empty file it fails
      if (out !== '') return fail(`${which}old_string is empty but the file is not`);
      out = e.newString;
      continue;
    }
    if (e.oldString === e.newString) return fail(`${which}old_string and new_string are the same`);
    const n = count(out, e.oldString);
    if (n === 0) {
      // the harness normalises before it matches: reproduce it, or refuse
      const r = looseReplace(out, e.oldString, e.newString, e.replaceAll);
      if (!r.ok) return fail(`${which}${r.why}`);
      out = r.text;
      loose.push(`${which}matched after normalising ${r.level}`);
      continue;
    }
    if (n > 1 && !e.replaceAll)
      return fail(`${which}old_string found ${n} times (and replace_all is not set)`);
    // split/join: no `$` patterns, unlike String.replace
    out = e.replaceAll
      ? out.split(e.oldString).join(e.newString)
      : out.replace(e.oldString, () => e.newString);
  }
  return loose.length ? { ok: true, text: out, loose } : { ok: true, text: out };
}

/** Cline replace_in_file: each SEARCH found (first occurrence, after the previous block), replaced by REPLACE. */
export function applySearchReplace(text: string, blocks: readonly SearchReplace[]): EditResult {
  let out = text;
  let from = 0;
  for (const [i, b] of blocks.entries()) {
    checkBudget();
    if (b.search === '') {
      // an empty SEARCH: the whole (empty) file, or an insertion at the start (Cline's rule)
      if (out === '') {
        out = b.replace;
        from = out.length;
        continue;
      }
      out = b.replace + out;
      from = b.replace.length;
      continue;
    }
    let at = out.indexOf(b.search, from);
    if (at === -1) at = out.indexOf(b.search);
    if (at === -1) return fail(`SEARCH block ${i + 1} not found`);
    out = out.slice(0, at) + b.replace + out.slice(at + b.search.length);
    from = at + b.replace.length;
  }
  return { ok: true, text: out };
}

/**
 * Cline editor insert_line (@cline/core): the file split on its line ends,
 * the text's lines spliced in before line `line` (1 to lines + 1), joined
 * with the file's own line end (CRLF when it has one).
 */
export function applyInsertLine(text: string, line: number, insert: string): EditResult {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r\n|\n/);
  if (line < 1 || line > lines.length + 1)
    return fail(`insert_line ${line} is outside 1-${lines.length + 1}`);
  lines.splice(line - 1, 0, ...insert.split(/\r\n|\n/));
  return { ok: true, text: lines.join(eol) };
}

/**
 * Parse Cline's diff: blocks of
 *   ------- SEARCH        (or <<<<<<< SEARCH)
 *   old lines
 *   =======
 *   new lines
 *   +++++++ REPLACE       (or >>>>>>> REPLACE)
 */
export function parseSearchReplace(diff: string): SearchReplace[] | null {
  const lines = diff.replace(/\r\n/g, '\n').split('\n');
  const blocks: SearchReplace[] = [];
  let state: 'out' | 'search' | 'replace' = 'out';
  let search: string[] = [];
  let replace: string[] = [];
  for (const line of lines) {
    if (state === 'out' && /^(-{3,}|<{3,}) ?SEARCH>?\s*$/.test(line)) {
      state = 'search';
      search = [];
      replace = [];
    } else if (state === 'search' && /^={3,}\s*$/.test(line)) {
      state = 'replace';
    } else if (state === 'replace' && /^(\+{3,}|>{3,}) ?REPLACE<?\s*$/.test(line)) {
      blocks.push({ search: joinBlock(search), replace: joinBlock(replace) });
      state = 'out';
    } else if (state === 'search') search.push(line);
    else if (state === 'replace') replace.push(line);
  }
  if (state !== 'out' || blocks.length === 0) return null;
  return blocks;
}

function joinBlock(lines: string[]): string {
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/**
 * Codex Update File: the chunks applied to the file's lines, as codex's
 * apply_patch does (lib: apply-patch, derive_new_contents_from_chunks):
 * each chunk is sought from where the last one ended, first exactly, then
 * ignoring trailing and then surrounding whitespace; `*** End of File`
 * anchors it at the end; the result always ends with a newline.
 */
export function applyPatchChunks(text: string, chunks: readonly PatchChunk[]): EditResult {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const replacements: Array<[number, number, string[]]> = [];
  let at = 0;
  for (const [i, c] of chunks.entries()) {
    checkBudget();
    if (c.context !== null) {
      const found = seek(lines, [c.context], at, false);
      if (found === -1)
        return fail(`chunk ${i + 1}: context line ${JSON.stringify(c.context)} not found`);
      at = found + 1;
    }
    if (c.oldLines.length === 0) {
      replacements.push([lines.length, 0, c.newLines]);
      continue;
    }
    let oldLines = c.oldLines;
    let newLines = c.newLines;
    let found = seek(lines, oldLines, at, c.endOfFile);
    if (found === -1 && oldLines[oldLines.length - 1] === '') {
      // a trailing empty line in the chunk stands for the file's final newline
      oldLines = oldLines.slice(0, -1);
      if (newLines[newLines.length - 1] === '') newLines = newLines.slice(0, -1);
      found = seek(lines, oldLines, at, c.endOfFile);
    }
    if (found === -1) return fail(`chunk ${i + 1}: the lines to change are not in the file`);
    replacements.push([found, oldLines.length, newLines]);
    at = found + oldLines.length;
  }
  replacements.sort((a, b) => a[0] - b[0]);
  for (const [start, len, repl] of [...replacements].reverse()) {
    checkBudget();
    lines.splice(start, len, ...repl);
  }
  if (lines.length === 0 || lines[lines.length - 1] !== '') lines.push('');
  return { ok: true, text: lines.join('\n') };
}

const EXACT = (s: string) => s;
const RTRIM = (s: string) => s.trimEnd();
const TRIM = (s: string) => s.trim();
/** codex seek_sequence's last pass: trimmed, Unicode dashes, quotes and odd spaces made ASCII. */
const ASCII = (s: string) =>
  s
    .trim()
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018-\u201b]/g, "'")
    .replace(/[\u201c-\u201f]/g, '"')
    .replace(/[\u00a0\u2002-\u200a\u202f\u205f\u3000]/g, ' ');

function seek(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  eof: boolean,
): number {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return -1;
  const first = eof ? lines.length - pattern.length : start;
  // lines x pattern comparisons at worst (as codex's own seek_sequence): the budget bounds it
  let compared = 0;
  for (const norm of [EXACT, RTRIM, TRIM, ASCII]) {
    for (let i = Math.max(0, first); i <= lines.length - pattern.length; i++) {
      let ok = true;
      for (let j = 0; j < pattern.length; j++) {
        if ((++compared & 0xfff) === 0) checkBudget();
        if (norm(lines[i + j]!) !== norm(pattern[j]!)) {
          ok = false;
          break;
        }
      }
      if (ok) return i;
    }
  }
  return -1;
}
