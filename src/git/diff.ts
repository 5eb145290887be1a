import { git, splitZ } from './run.js';

/** One changed path from `git diff --raw --numstat -z`. */
export interface DiffEntry {
  path: string;
  oldPath?: string;
  /** null when the side does not exist ("000000"). */
  oldMode: string | null;
  newMode: string | null;
  oldOid: string | null;
  newOid: string | null;
  /** A..Z status letter from --raw (R and C carry a score we drop). */
  letter: string;
  /** From --numstat; null for binary ("-"). 0/0 when only line endings changed. */
  added: number | null;
  deleted: number | null;
}

/**
 * Flags for every content diff guard reads:
 * - --raw --numstat -z: modes, blob ids and git's own line counts, NUL-separated
 *   so any file name survives; --no-abbrev so the ids can be fed to cat-file;
 * - -M: follow renames (DESIGN: renames are followed);
 * - --ignore-cr-at-eol: a change of line endings alone is not a change
 *   (numstat then drops the path, --raw still lists it);
 * - --no-ext-diff --no-textconv: the user's diff drivers must not change what we measure;
 * - --ignore-submodules=none: a submodule pointer change is reported, not hidden.
 */
export const DIFF_ARGS = [
  '--raw',
  '--numstat',
  '-z',
  '--no-abbrev',
  '-M',
  '--ignore-cr-at-eol',
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
  '--ignore-submodules=none',
] as const;

const NULL_OID = /^0+$/;

/**
 * Parse the combined output. Raw records come first:
 *   :100644 100644 <old> <new> M\0path\0
 *   :100644 100644 <old> <new> R086\0old\0new\0
 * then numstat records:
 *   12\t3\tpath\0
 *   12\t3\t\0old\0new\0        (a rename)
 *   -\t-\tpath\0               (binary)
 */
export function parseRawNumstat(fields: string[]): DiffEntry[] {
  const entries: DiffEntry[] = [];
  const byPath = new Map<string, DiffEntry>();
  let i = 0;
  while (i < fields.length && fields[i]!.startsWith(':')) {
    const [oldMode, newMode, oldOid, newOid, status] = fields[i]!.slice(1).split(' ');
    const letter = (status ?? '?')[0]!;
    let entry: DiffEntry;
    if (letter === 'R' || letter === 'C') {
      entry = {
        oldPath: fields[i + 1]!,
        path: fields[i + 2]!,
        letter,
        added: 0,
        deleted: 0,
        oldMode: null,
        newMode: null,
        oldOid: null,
        newOid: null,
      };
      i += 3;
    } else {
      entry = {
        path: fields[i + 1]!,
        letter,
        added: 0,
        deleted: 0,
        oldMode: null,
        newMode: null,
        oldOid: null,
        newOid: null,
      };
      i += 2;
    }
    entry.oldMode = oldMode === '000000' ? null : oldMode!;
    entry.newMode = newMode === '000000' ? null : newMode!;
    entry.oldOid = !oldOid || NULL_OID.test(oldOid) || entry.oldMode === null ? null : oldOid;
    entry.newOid = !newOid || NULL_OID.test(newOid) || entry.newMode === null ? null : newOid;
    if (letter === 'C') delete entry.oldPath; // a copy leaves the source in place: judge it as new
    if (letter === 'C') entry.oldMode = entry.oldOid = null;
    entries.push(entry);
    byPath.set(entry.path, entry);
  }
  applyNumstat(byPath, fields.slice(i));
  return entries;
}

/**
 * numstat records (`-z`), matched to their entries by path:
 *   12\t3\tpath\0   12\t3\t\0old\0new\0 (a rename)   -\t-\tpath\0 (binary)
 */
function applyNumstat(byPath: Map<string, DiffEntry>, fields: string[]): void {
  let i = 0;
  while (i < fields.length) {
    // "added TAB deleted TAB path": the path itself may hold tabs
    const field = fields[i]!;
    const t1 = field.indexOf('\t');
    const t2 = field.indexOf('\t', t1 + 1);
    const a = field.slice(0, t1);
    const d = field.slice(t1 + 1, t2);
    const p = field.slice(t2 + 1);
    let target: string | undefined;
    if (p === '') {
      target = fields[i + 2];
      i += 3;
    } else {
      target = p;
      i += 1;
    }
    const entry = target !== undefined ? byPath.get(target) : undefined;
    if (!entry) continue;
    entry.added = a === '-' ? null : Number(a);
    entry.deleted = d === '-' ? null : Number(d);
  }
}

/**
 * Staged changes against HEAD (against the empty tree on an unborn branch:
 * `git diff --cached` with no commit does that by itself), as two processes
 * that run at once: `--raw` (modes and blob
 * ids, fast: no contents compared) comes back first, so the blobs can be read
 * while `--numstat` is still counting lines. `counts` then fills in
 * added/deleted on the same entries.
 */
export function stagedDiffSplit(cwd: string): {
  entries: Promise<DiffEntry[]>;
  counts: Promise<void>;
} {
  const raw = git(['diff', '--cached', ...DIFF_ARGS.filter((a) => a !== '--numstat')], { cwd });
  const numstat = git(['diff', '--cached', ...DIFF_ARGS.filter((a) => a !== '--raw')], { cwd });
  const entries = raw.then((r) => parseRawNumstat(splitZ(r.stdout)));
  const counts = Promise.all([entries, numstat]).then(([list, n]) => {
    const byPath = new Map(list.map((e) => [e.path, e]));
    applyNumstat(byPath, splitZ(n.stdout));
  });
  // a failure surfaces where it is awaited; never as an unhandled rejection
  counts.catch(() => {});
  return { entries, counts };
}

/** Changes between two trees or commits: under `paths` when given; renames paired from `renameSimilarity`% when given. */
export async function treeDiff(
  cwd: string,
  from: string,
  to: string,
  opts: { paths?: readonly string[]; renameSimilarity?: number } = {},
): Promise<DiffEntry[]> {
  // `:(literal)`: a name is a name, never a pattern (gitglossary "pathspec")
  const spec = opts.paths ? opts.paths.map((p) => `:(literal)${p}`) : [];
  // -M<n>%: pair a deleted and an added file as a rename from n% similarity (git's default is 50%)
  const args =
    opts.renameSimilarity === undefined
      ? DIFF_ARGS
      : DIFF_ARGS.map((a) => (a === '-M' ? `-M${opts.renameSimilarity}%` : a));
  const r = await git(['diff', ...args, from, to, '--', ...spec], { cwd });
  return parseRawNumstat(splitZ(r.stdout));
}

/**
 * Which of `paths` change only in whitespace between the two sides that
 * `range` names (`['--cached']` for the index against HEAD, `[A, B]` for two
 * trees): ONE `git diff --numstat -b` over just those paths. git leaves a
 * path out of --numstat when nothing but whitespace changed, so every asked
 * path it does not list is whitespace-only. -b (--ignore-space-change), not
 * -w: -w also ignores whitespace added where there was none, so
 * `rm -rf /tmp/x` -> `rm -rf / tmp/x` hidden in a reindent would pass as
 * "whitespace only"; -b counts that as a change. -M as in DIFF_ARGS, with
 * both names of a rename asked (a rename or a mode change is listed with
 * 0/0 when only whitespace changed in it).
 * https://git-scm.com/docs/git-diff#Documentation/git-diff.txt--b
 */
export const WHITESPACE_ARG = '--ignore-space-change';
export async function whitespaceOnlyPaths(
  cwd: string,
  range: readonly string[],
  entries: readonly DiffEntry[],
): Promise<Set<string>> {
  const out = new Set<string>();
  if (entries.length === 0) return out;
  const spec = entries
    .flatMap((e) => (e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]))
    .map((p) => `:(literal)${p}`);
  const args = [
    'diff',
    ...range,
    ...DIFF_ARGS.filter((a) => a !== '--raw'),
    WHITESPACE_ARG,
    '--',
    ...spec,
  ];
  const r = await git(args, { cwd });
  const listed = new Map(
    entries.map((e) => [e.path, { ...e, added: null, deleted: null } as DiffEntry]),
  );
  applyNumstat(listed, splitZ(r.stdout));
  // left out, or listed with no line counted: git still lists a pair whose
  // name or mode changed (`0 0 old => new`), though only whitespace did in it
  for (const [p, e] of listed)
    if (e.added === null || (e.added === 0 && e.deleted === 0)) out.add(p);
  return out;
}

/**
 * The paths that differ between two trees, and how.
 * `diff-tree -r -z --name-status --no-renames` prints "<letter> NUL <path> NUL" per file.
 */
export async function changedPaths(
  cwd: string,
  from: string,
  to: string,
): Promise<Array<{ path: string; change: 'added' | 'modified' | 'deleted' }>> {
  const r = await git(['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to], {
    cwd,
  });
  const f = splitZ(r.stdout);
  const out: Array<{ path: string; change: 'added' | 'modified' | 'deleted' }> = [];
  for (let i = 0; i + 1 < f.length; i += 2) {
    out.push({
      path: f[i + 1]!,
      change: f[i] === 'A' ? 'added' : f[i] === 'D' ? 'deleted' : 'modified',
    });
  }
  return out;
}
