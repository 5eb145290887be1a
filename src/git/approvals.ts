import { MODE, approvalKind } from '../core/modes.js';
import { cQuote, cUnquote } from '../core/quote.js';
import { AGENT_TRAILER, parseAgentTrailers, type AgentCommit } from './provenance.js';
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

/** What an approval names besides the blob (core/modes.ts). */
export { approvalKind };

/** The key of a trailer's approval: kind (approvalKind of the mode), blob and path. */
export function trailerApprovalKey(path: string, blob: string, mode?: string | null): string {
  return `${approvalKind(mode)} ${blob.toLowerCase()} ${path}`;
}

/** Path+blob (trailerApprovalKey) -> the newest commit in mergeBase..head that approved it, in one git log. */
export async function readApprovals(
  cwd: string,
  mergeBase: string,
  head: string,
): Promise<Map<string, string>> {
  return (await readRangeTrailers(cwd, mergeBase, head)).approvals;
}

/**
 * What the commits of `from..to` say, in one git log: the approvals
 * (readApprovals) and, for each path a commit changed, the agent sessions its
 * `Guard-Agent:` trailers name (git/provenance.ts; shown, never an approval).
 */
export async function readRangeTrailers(
  cwd: string,
  from: string,
  to: string,
): Promise<{ approvals: Map<string, string>; agents: Map<string, AgentCommit[]> }> {
  const r = await git([...RANGE_LOG_ARGS, `${from}..${to}`, '--'], { cwd });
  const approvals = new Map<string, string>();
  const agents = new Map<string, AgentCommit[]>();
  for (const c of parseRangeLog(splitZ(r.stdout))) {
    for (const value of c.approved.split('\n')) {
      const a = parseTrailerValue(value);
      for (const p of a?.paths ?? []) {
        const key = trailerApprovalKey(p, a!.blob, a!.mode);
        if (!approvals.has(key)) approvals.set(key, c.commit);
      }
    }
    const sessions = parseAgentTrailers(c.agents);
    if (sessions.length === 0) continue;
    for (const p of c.paths)
      agents.set(p, [
        ...(agents.get(p) ?? []),
        ...sessions.map((s) => ({ ...s, commit: c.commit })),
      ]);
  }
  return { approvals, agents };
}

/**
 * The range log: per commit "<oid> NUL <approved> NUL <agents> NUL" then,
 * with --raw -z, "LF:<modes> <oids> <status> NUL <path> NUL" per changed
 * file (--no-renames: one path each). A path follows its raw line, so a file
 * whose name looks like an oid is never taken for the next commit.
 * - %(trailers:key=...,valueonly,unfold): only that trailer's values, one per
 *   line, continuation lines joined (git >= 2.22);
 *   https://git-scm.com/docs/pretty-formats#Documentation/pretty-formats.txt-trailersoptions
 * - --no-show-signature --no-color: the user's log.showSignature / color config
 *   must not add text to what we parse.
 */
const RANGE_LOG_ARGS = [
  'log',
  '-z',
  '--no-show-signature',
  '--no-color',
  '--no-renames',
  '--raw',
  '--no-abbrev',
  `--format=%H%x00%(trailers:key=${TRAILER_KEY},valueonly,unfold)%x00%(trailers:key=${AGENT_TRAILER},valueonly,unfold)`,
] as const;

export function parseRangeLog(
  fields: readonly string[],
): Array<{ commit: string; approved: string; agents: string; paths: string[] }> {
  const out: Array<{ commit: string; approved: string; agents: string; paths: string[] }> = [];
  let i = 0;
  while (i < fields.length) {
    const commit = fields[i]!.replace(/^\n/, '').trim();
    if (!OID.test(commit)) {
      i++;
      continue;
    }
    const c = {
      commit,
      approved: fields[i + 1] ?? '',
      agents: fields[i + 2] ?? '',
      paths: [] as string[],
    };
    i += 3;
    while (i < fields.length && /^\n?:/.test(fields[i]!)) {
      if (fields[i + 1] !== undefined) c.paths.push(fields[i + 1]!);
      i += 2;
    }
    out.push(c);
  }
  return out;
}

export interface Approval {
  commit: string;
  /** The path as written and, for a C-quoted value, also unquoted. */
  paths: string[];
  blob: string;
}

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/**
 * A `Guard-Approved:` value is `<path> <blob>`, or `<path> <blob> <mode>` for
 * a symlink or a gitlink (approvalKind): the blob is the last space-separated
 * token that is an object id, so paths with spaces need no quoting. A path holding
 * a newline is written C-quoted as git does ("a\nb"); a quoted value is
 * matched both as written and unquoted, so a real file named `"x"` is not
 * lost either.
 */
export function parseTrailerValue(
  value: string,
): { paths: string[]; blob: string; mode?: string } | null {
  let v = value.replace(/\s+$/, '').replace(/^\s+/, '');
  const last = v.slice(v.lastIndexOf(' ') + 1);
  // a mode after the blob; an older guard reads the mode as the blob and skips the trailer (it blocks, never clears)
  const mode = last === MODE.symlink || last === MODE.gitlink ? last : undefined;
  if (mode) v = v.slice(0, v.lastIndexOf(' ')).replace(/\s+$/, '');
  const sp = v.lastIndexOf(' ');
  if (sp <= 0) return null;
  const blob = v.slice(sp + 1);
  const path = v.slice(0, sp).replace(/\s+$/, '');
  if (!OID.test(blob) || path === '') return null;
  const paths = [path];
  const unquoted = cUnquote(path);
  if (unquoted !== null && unquoted !== path) paths.push(unquoted);
  return { paths, blob: blob.toLowerCase(), ...(mode ? { mode } : {}) };
}

/** One trailer per approved change that needed approval: what `guard ci` verifies. */
export function approvalTrailer(p: string, blob: string, mode?: string | null): string {
  // git trims a trailer's value and `guard ci` splits on the last space: a name with
  // whitespace at either end, a control character, a quote or a backslash is C-quoted.
  const name = /^\s|\s$|[\x00-\x1f\x7f"\\]/.test(p) ? cQuote(p) : p;
  const kind = approvalKind(mode);
  return `${TRAILER_KEY}: ${name} ${blob}${kind === 'file' ? '' : ` ${kind}`}`;
}

/** Does a commit message carry any approval trailer? */
export function hasApprovalTrailer(message: string): boolean {
  return new RegExp(`^${TRAILER_KEY}: `, 'm').test(message);
}

/**
 * The mode of each of `paths` in `commit` (absent: no such file), with one
 * ls-tree (its paths are literal, not pathspecs). For a review: what the
 * reviewer saw at a path is its blob and its mode (approvalKind).
 * https://git-scm.com/docs/git-ls-tree#_output_format  "<mode> SP <type> SP <object> TAB <path>"
 */
export async function pathModes(
  cwd: string,
  commit: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (paths.length === 0) return out;
  const r = await git(['ls-tree', '-r', '-z', commit, '--', ...paths], { cwd });
  for (const line of splitZ(r.stdout)) {
    const tab = line.indexOf('\t');
    if (tab > 0) out.set(line.slice(tab + 1), line.slice(0, line.indexOf(' ')));
  }
  return out;
}
