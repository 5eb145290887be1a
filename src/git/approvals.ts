import { git, splitZ } from './run.js';

/*
 * Approvals as git carries them: a `Guard-Approved: <path> <blob>` trailer in
 * a commit message, written by `guard review --commit` and read by `guard ci`
 * (and by `guard check`, to tell a reviewed merge from a bypass).
 */

/**
 * The blob id a `Guard-Approved:` trailer names for a deletion: git's own
 * "no object" id. `Guard-Approved: old.py 0000000000000000000000000000000000000000`
 * approves deleting old.py (and nothing else about it).
 */
export const DELETION_BLOB = '0000000000000000000000000000000000000000';

export const TRAILER_KEY = 'Guard-Approved';

/**
 * `git log` flags for reading the approvals of a range in one process:
 * - -z: commits are separated by NUL, so the record is "<oid> NUL <trailers>" NUL ...;
 * - %(trailers:key=...,valueonly,unfold): only our trailer's values, one per
 *   line, continuation lines joined (git >= 2.22);
 *   https://git-scm.com/docs/pretty-formats#Documentation/pretty-formats.txt-trailersoptions
 * - --no-show-signature --no-color: the user's log.showSignature / color config
 *   must not add text to what we parse.
 */
const TRAILER_LOG_ARGS = [
  'log',
  '-z',
  '--no-show-signature',
  '--no-color',
  `--format=%H%x00%(trailers:key=${TRAILER_KEY},valueonly,unfold)`,
] as const;

export function approvalKey(path: string, blob: string): string {
  return `${blob.toLowerCase()} ${path}`;
}

/** Path+blob (approvalKey) -> the newest commit in mergeBase..head that approved it, in one git log. */
export async function readApprovals(cwd: string, mergeBase: string, head: string): Promise<Map<string, string>> {
  const r = await git([...TRAILER_LOG_ARGS, `${mergeBase}..${head}`, '--'], { cwd });
  const approvals = new Map<string, string>();
  for (const a of parseTrailerLog(splitZ(r.stdout))) {
    for (const p of a.paths) {
      const key = approvalKey(p, a.blob);
      if (!approvals.has(key)) approvals.set(key, a.commit);
    }
  }
  return approvals;
}

export interface Approval {
  commit: string;
  /** The path as written and, for a C-quoted value, also unquoted. */
  paths: string[];
  blob: string;
}

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/**
 * Parse `git log -z --format=%H%x00%(trailers:...valueonly,unfold)`:
 *   <oid> NUL <value> LF <value> LF NUL <oid> NUL NUL ...
 * Each value is `<path> <blob>`: the blob is the last space-separated token,
 * so paths with spaces need no quoting. A path holding a newline is written
 * C-quoted as git does ("a\nb"); a quoted value is matched both as written
 * and unquoted, so a real file named `"x"` is not lost either.
 */
export function parseTrailerLog(fields: readonly string[]): Approval[] {
  const out: Approval[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const commit = fields[i]!.trim();
    const block = fields[i + 1] ?? '';
    for (const value of block.split('\n')) {
      const a = parseTrailerValue(value);
      if (a) out.push({ commit, ...a });
    }
  }
  return out;
}

export function parseTrailerValue(value: string): { paths: string[]; blob: string } | null {
  const v = value.replace(/\s+$/, '').replace(/^\s+/, '');
  const sp = v.lastIndexOf(' ');
  if (sp <= 0) return null;
  const blob = v.slice(sp + 1);
  const path = v.slice(0, sp).replace(/\s+$/, '');
  if (!OID.test(blob) || path === '') return null;
  const paths = [path];
  const unquoted = cUnquote(path);
  if (unquoted !== null && unquoted !== path) paths.push(unquoted);
  return { paths, blob: blob.toLowerCase() };
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/**
 * Undo git's quote_c_style: "..." with \a \b \t \n \v \f \r \" \\ and \ooo
 * octal bytes (UTF-8 sequences come out as octal when core.quotePath is on).
 * Null when the text is not a well-formed quoted string.
 */
export function cUnquote(s: string): string | null {
  if (s.length < 2 || !s.startsWith('"') || !s.endsWith('"')) return null;
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '"') return null;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) return null;
    if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next]!);
      i++;
    } else if (/^[0-3][0-7]{2}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else return null;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** git's quote_c_style, which cUnquote reads back: \" \\ \t \n and octal for other control bytes. */
export function cQuote(p: string): string {
  let out = '"';
  for (const ch of p) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\' + c.toString(8).padStart(3, '0');
    else out += ch;
  }
  return out + '"';
}

/** One trailer per approved change that needed approval: what `guard ci` verifies. */
export function approvalTrailer(p: string, blob: string): string {
  // git trims a trailer's value and `guard ci` splits on the last space: a name with
  // whitespace at either end, a control character, a quote or a backslash is C-quoted.
  const name = /^\s|\s$|[\x00-\x1f\x7f"\\]/.test(p) ? cQuote(p) : p;
  return `${TRAILER_KEY}: ${name} ${blob}`;
}

/** Does a commit message carry any approval trailer? */
export function hasApprovalTrailer(message: string): boolean {
  return new RegExp(`^${TRAILER_KEY}: `, 'm').test(message);
}

