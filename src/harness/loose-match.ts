import { checkBudget } from '../runtime/deadline.js';

/**
 * The harnesses apply an edit whose old text is not in the file exactly:
 * they normalise first (seen in their sources, 2026-11):
 *
 * - Claude Code 2.1.330: reads the file with CRLF turned into LF, then
 *   looks for old_string exactly, then with curly quotes made straight on
 *   both sides (same length, so the span is the file's own text); writes
 *   back with the file's line ends.
 * - Gemini CLI 0.61 (tools/edit.ts calculateReplacement): CRLF -> LF, then
 *   exact, then "flexible" (each line trimmed, re-indented), then a regex
 *   that ignores whitespace between tokens, then Levenshtein fuzzy, then an
 *   LLM that rewrites old_string.
 * - Codex apply_patch (seek_sequence.rs): exact, trailing whitespace
 *   ignored, leading and trailing whitespace ignored, then Unicode dashes,
 *   quotes and odd spaces made ASCII.
 *
 * guard reproduces these as nested levels, each looser than the last and
 * holding every normalisation before it, and takes the first level that
 * finds the old text. A unique find at a level is what the harness
 * applies (a stricter harness find would be a find here too, so it would
 * make this level ambiguous); several finds without replace-all, or none
 * at any level, mean guard cannot tell what the file will become, and the
 * caller refuses the call (fail closed). Whitespace that a harness
 * re-indents is not reproduced: it changes no line count.
 */

export type Level = 'line ends' | 'quotes and dashes' | 'trailing whitespace' | 'indentation';
export const LEVELS: readonly Level[] = [
  'line ends',
  'quotes and dashes',
  'trailing whitespace',
  'indentation',
];

/** Typographic characters the harnesses read as their ASCII form (Codex's list, Claude's quotes among it). */
const PUNCT: Record<string, string> = {};
for (const c of '\u2010\u2011\u2012\u2013\u2014\u2015\u2212') PUNCT[c] = '-';
for (const c of '\u2018\u2019\u201a\u201b') PUNCT[c] = "'";
for (const c of '\u201c\u201d\u201e\u201f') PUNCT[c] = '"';
for (const c of '\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000')
  PUNCT[c] = ' ';

const SPACE = /[^\S\n]/;
const PUNCT_RE = new RegExp(`[${Object.keys(PUNCT).join('')}]`, 'g');

/** Files larger than this are not matched loosely (the per-character map would cost too much): refused instead. */
export const LOOSE_MAX_CHARS = 2 * 1024 * 1024;

/** A text normalised for matching; `at[i]` is where its i-th unit stands in the original. */
interface Normalised {
  text: string;
  at: Int32Array;
}

function normalise(s: string, level: number): Normalised {
  const parts: string[] = [];
  const at = new Int32Array(s.length + 1);
  let n = 0;
  let offset = 0;
  const lines = s.split('\n');
  for (const [li, line] of lines.entries()) {
    const last = li === lines.length - 1;
    let end = line.length;
    // level 0: CR before LF is not part of the line
    if (!last && end > 0 && line[end - 1] === '\r') end--;
    let start = 0;
    if (level >= 2) while (end > start && SPACE.test(line[end - 1]!)) end--;
    if (level >= 3) while (start < end && SPACE.test(line[start]!)) start++;
    // PUNCT maps one UTF-16 unit to one: the map stays a shift
    const kept = line.slice(start, end);
    parts.push(level >= 1 ? kept.replace(PUNCT_RE, (c) => PUNCT[c]!) : kept);
    for (let j = start; j < end; j++) at[n++] = offset + j;
    if (!last) {
      parts.push('\n');
      at[n++] = offset + line.length;
    }
    offset += line.length + 1;
  }
  at[n] = s.length;
  return { text: parts.join(''), at };
}

export type LooseResult =
  | { ok: true; text: string; level: Level | 'exact' }
  | { ok: false; why: string };

/**
 * Replace `oldText` by `newText` in `file` the way the harnesses do when
 * the text is not there exactly. The exact case is the caller's.
 */
export function looseReplace(
  file: string,
  oldText: string,
  newText: string,
  replaceAll: boolean,
): LooseResult {
  if (file.length > LOOSE_MAX_CHARS)
    return {
      ok: false,
      why: 'old_string is not in the file as sent, and the file is too large for guard to match it loosely',
    };
  const crlf = file.includes('\r\n');
  const replacement = crlf ? newText.replace(/\r?\n/g, '\r\n') : newText;
  for (const [level, name] of LEVELS.entries()) {
    const f = normalise(file, level);
    const o = normalise(oldText, level).text;
    if (o === '' || o.trim() === '') continue;
    const spans: Array<[number, number]> = [];
    for (let i = f.text.indexOf(o); i !== -1; i = f.text.indexOf(o, i + o.length)) {
      const e = i + o.length;
      // a find that starts a line takes the line's own indentation with it (Gemini's whole-line match)
      const from =
        level >= 3 && (i === 0 || f.text[i - 1] === '\n')
          ? i === 0
            ? 0
            : f.at[i - 1]! + 1
          : f.at[i]!;
      if ((spans.push([from, f.at[e - 1]! + 1]) & 0xfff) === 0) checkBudget();
    }
    if (spans.length === 0) continue;
    if (spans.length > 1 && !replaceAll)
      return {
        ok: false,
        why: `old_string is not in the file as sent; after normalising ${name} it is found ${spans.length} times`,
      };
    // one pass, in order (slicing the whole file once per find was quadratic: a replace-all of a line of a large file)
    const parts: string[] = [];
    let done = 0;
    for (const [from, to] of spans) {
      parts.push(file.slice(done, from), replacement);
      done = to;
    }
    parts.push(file.slice(done));
    return { ok: true, text: parts.join(''), level: name };
  }
  return {
    ok: false,
    why: 'old_string is not in the file, not even after normalising line ends, quotes, dashes and whitespace',
  };
}
