import { classify, makePolicy, type ChangeFacts, type Classification } from '../core/classify.js';
import { withAggregateLoss } from '../core/aggregate.js';
import { CONFIG_FILE } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import { collectFacts } from '../git/changes.js';
import { treeDiff } from '../git/diff.js';
import { openRepo } from '../git/repo.js';
import { git, splitZ } from '../git/run.js';
import { configAt } from './context.js';

/**
 * `guard ci`: judge a pull request. Every file changed between
 * merge-base(base, head) and head is classified with the policy committed at
 * the merge-base; a change that needs approval passes only when a commit in
 * merge-base..head carries `Guard-Approved: <path> <blob>` for that path with
 * the blob the file has at head. Read-only: ci writes no refs and no records.
 *
 * Git processes, whatever the number of files: rev-parse (open), cat-file
 * (resolve base/head), merge-base, then diff + cat-file (config) + log
 * (trailers) in parallel, then one cat-file for the blobs. The shallow check
 * runs only when no merge-base is found.
 */
export interface CiOptions {
  cwd: string;
  base: string;
  head?: string;
}

export type CiDecision = 'allowed' | 'approved' | 'blocked';

export interface CiFile extends Classification {
  decision: CiDecision;
  /** The blob at head; null for a deletion. */
  blob: string | null;
  /** The commit whose Guard-Approved trailer covers this change. */
  approvedBy?: string;
  /** A line to point annotations at (>= 1): the first line that differs at head. */
  line: number;
}

export interface CiResult {
  command: 'ci';
  base: string;
  head: string;
  mergeBase: string;
  /** True when the merge-base had no guard.config.json (defaults, bootstrap rules). */
  bootstrap: boolean;
  files: CiFile[];
  blocked: number;
  approved: number;
}

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
export const TRAILER_LOG_ARGS = [
  'log',
  '-z',
  '--no-show-signature',
  '--no-color',
  `--format=%H%x00%(trailers:key=${TRAILER_KEY},valueonly,unfold)`,
] as const;

export async function ci(opts: CiOptions): Promise<CiResult> {
  const repo = await openRepo(opts.cwd);
  const cwd = repo.root;
  const headName = opts.head ?? 'HEAD';
  const [base, head] = await resolveCommits(cwd, [
    { flag: '--base', name: opts.base },
    { flag: '--head', name: headName },
  ]);
  const mergeBase = await findMergeBase(cwd, base!, head!, opts.base, headName);

  const [entries, [configBlob], approvals] = await Promise.all([
    treeDiff(cwd, mergeBase, head!),
    catFileBatch(cwd, [`${mergeBase}:${CONFIG_FILE}`], READ_CAP),
    readApprovals(cwd, mergeBase, head!),
  ]);
  const config = configAt(mergeBase.slice(0, 10), configBlob?.data);
  const bootstrap = configBlob === null || configBlob === undefined;
  const policy = makePolicy(config, { bootstrap });
  const { facts } = await collectFacts(cwd, entries, { maxBytes: Math.min(config.maxFileBytes, READ_CAP), whitespace: { range: [mergeBase, head!], changeRatio: config.changeRatio } });
  const classified = withAggregateLoss(facts.map((f) => classify(f, policy)), config);

  const files = facts.map((f, i): CiFile => {
    const c = classified[i]!;
    const blob = entries[i]!.newOid;
    const file: CiFile = { ...c, decision: 'allowed', blob, line: firstChangedLine(f) };
    if (c.needsApproval) {
      const by = approvals.get(approvalKey(c.path, blob ?? DELETION_BLOB));
      if (by) Object.assign(file, { decision: 'approved', approvedBy: by });
      else file.decision = 'blocked';
    }
    return file;
  });
  return {
    command: 'ci',
    base: base!,
    head: head!,
    mergeBase,
    bootstrap,
    files,
    blocked: files.filter((f) => f.decision === 'blocked').length,
    approved: files.filter((f) => f.decision === 'approved').length,
  };
}

/**
 * Resolve revisions to commit ids with one cat-file process: `<rev>^{commit}`
 * peels tags and reports "missing" for anything that is not a commit.
 */
async function resolveCommits(cwd: string, revs: Array<{ flag: string; name: string }>): Promise<string[]> {
  for (const r of revs) {
    if (r.name.trim() === '' || /[\n\0]/.test(r.name)) {
      throw new GuardError('E_USAGE', `${r.flag} ${JSON.stringify(r.name)} is not a revision`, 'pass a branch, tag or commit id');
    }
  }
  const found = await catFileBatch(cwd, revs.map((r) => `${r.name}^{commit}`), 0);
  return revs.map((r, i) => {
    const obj = found[i];
    if (!obj || obj.type !== 'commit') {
      throw new GuardError(
        'E_USAGE',
        `${r.flag} ${r.name}: no such commit in this repository`,
        r.flag === '--base'
          ? 'fetch the base branch first (git fetch origin main), or pass a commit id; in GitHub Actions use github.event.pull_request.base.sha with fetch-depth: 0'
          : 'pass a commit that exists here (default HEAD)',
      );
    }
    return obj.oid;
  });
}

/** https://git-scm.com/docs/git-merge-base: exit 1 and no output when there is none. */
async function findMergeBase(cwd: string, base: string, head: string, baseName: string, headName: string): Promise<string> {
  const r = await git(['merge-base', base, head], { cwd, okCodes: [1] });
  const mb = r.stdout.toString('utf8').trim();
  if (r.code === 0 && mb) return mb;
  const shallow = await git(['rev-parse', '--is-shallow-repository'], { cwd });
  if (shallow.stdout.toString('utf8').trim() === 'true') {
    throw new GuardError(
      'E_USAGE',
      `no merge-base of ${baseName} and ${headName} in this shallow clone: the history that joins them was not fetched`,
      'fetch the full history: `fetch-depth: 0` in actions/checkout, or `git fetch --unshallow` (or `git fetch --deepen=N`)',
    );
  }
  throw new GuardError(
    'E_USAGE',
    `${baseName} and ${headName} have no common history (no merge-base)`,
    'pass as --base the branch the pull request targets',
  );
}

function approvalKey(path: string, blob: string): string {
  return `${blob.toLowerCase()} ${path}`;
}

/** Path+blob -> the newest commit in mergeBase..head that approved it. */
async function readApprovals(cwd: string, mergeBase: string, head: string): Promise<Map<string, string>> {
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

/** The first line of the new content that is not in the old (1 when unknown or deleted). */
export function firstChangedLine(f: Pick<ChangeFacts, 'oldText' | 'newText' | 'newMode'>): number {
  if (f.newMode === null || f.newText === undefined) return 1;
  const a = (f.oldText ?? '').split('\n');
  const b = f.newText.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i]!.replace(/\r$/, '') === b[i]!.replace(/\r$/, '')) i++;
  const count = f.newText.endsWith('\n') ? b.length - 1 : b.length;
  return Math.max(1, Math.min(i + 1, count));
}
