import { lstatSync } from 'node:fs';
import { lstat, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { MODE, fileMode } from '../core/modes.js';
import { RECORD_VERSION } from '../core/record.js';
import { faultPoint } from '../runtime/faults.js';
import type { Repo } from './repo.js';
import { REFS, importCommits, newRef, packedRefOid, type RecordCommit } from './records.js';
import { eolConverted, storeRawBytes } from './rawbytes.js';
import { git, splitZ } from './run.js';
import {
  KEPT_INDEX,
  copyIndex,
  dropKeptIndexes,
  indexKey,
  removeStaleIndexes,
} from './index-files.js';
import { STRICT_STAT, addUntracked } from './untracked.js';
import {
  keptLimits,
  planKept,
  presentLanes,
  submodulePaths,
  type KeptMemory,
  type KeptPlan,
} from './kept.js';
import { randomHex } from '../core/digest.js';

export interface Checkpoint {
  /** The ref, e.g. refs/guard/checkpoints/20261123T020512Z-9f3ab2c1; `guard restore` takes its last part. */
  ref: string;
  id: string;
  commit: string;
  tree: string;
  /** The index's tree, when what was staged differed from the work tree (else null). */
  index: string | null;
  /** True when the state had not changed since the last checkpoint, which was reused. */
  reused: boolean;
  /** Untracked files this checkpoint does not hold, each with why (also in its commit message). */
  skipped: SkippedFile[];
  /**
   * The commit whose tree holds the ignored files and nested repositories'
   * files this checkpoint kept (git/kept.ts), a parent of the checkpoint; null: none.
   */
  kept?: string | null;
}

/** An untracked file a whole-tree checkpoint left out, and why: never a silent drop. */
export interface SkippedFile {
  path: string;
  /**
   * - `size`: larger than the cap (`maxUntrackedBytes`);
   * - `time`: the time budget for untracked files ran out before it;
   * - `name`: git refuses the name (e.g. `git~1`, which is `.git` on NTFS);
   * - `repository`: a nested git repository (its own history keeps it).
   */
  reason: 'size' | 'time' | 'name' | 'repository' | 'budget' | 'folder' | 'unreadable';
  bytes?: number;
  /** Outside the work tree's own tree (git/kept.ts): an ignored file or folder, or inside a nested repository. */
  kind?: 'ignored' | 'nested';
}

export interface CheckpointOptions {
  reason: string;
  command: string;
  lane: string | null;
  /** Only these work-tree paths are (re)hashed; the rest is taken from the index as it is. */
  paths?: readonly string[];
  now?: Date;
  /** Untracked files larger than this are left out and recorded (default UNTRACKED_MAX_BYTES). */
  maxUntrackedBytes?: number;
  /** After this long hashing untracked files, the rest are left out and recorded (default UNTRACKED_BUDGET_MS). */
  untrackedBudgetMs?: number;
  /** The agent session this checkpoint is taken for (guard hook): recorded in its message. */
  session?: SessionMeta;
  /** Extra environment for every git process (e.g. config that a repository guard does not trust must not set). */
  env?: NodeJS.ProcessEnv;
  /**
   * Records to write with the checkpoint, in the same `git fast-import` (one
   * process instead of two; nothing of either is written before the input is
   * complete). Given the checkpoint: its ref, id and commit, the commit as a
   * fast-import mark (`:N`, usable as a parent) when it is new, its id when
   * the last one was reused; and HEAD as this checkpoint read it (a reused
   * one's parent may be an older HEAD). Their own marks must stay below 1,000,000.
   */
  records?: (cp: {
    ref: string;
    id: string;
    commit: string;
    head: string | null;
  }) => RecordCommit[];
}

/** What a checkpoint's message says of its kept tree (git/kept.ts) and of the lanes present. */
export interface KeptBody {
  /** The kept commit's place among the checkpoint's parents (0-based); absent when nothing is kept. */
  parent?: number;
  files: number;
  bytes: number;
  folders: string[];
  nested: string[];
  lanes: string[];
}

/** Who a checkpoint or decision was for: harness, session id and tool-call id (DESIGN.md "session"). */
export interface SessionMeta {
  harness: string;
  session: string;
  toolCall: string | null;
}

/**
 * The cap and the budget for untracked files in a whole-tree checkpoint: a
 * build output or a model's weights dropped in the tree must not make every
 * tool call hash gigabytes. Tracked files are always kept, whatever their size.
 * GUARD_CHECKPOINT_MAX_BYTES / GUARD_CHECKPOINT_BUDGET_MS override them (tests, soak).
 */
export const UNTRACKED_MAX_BYTES = 50 * 1024 * 1024;
export const UNTRACKED_BUDGET_MS = 5_000;
/** How many skipped files a checkpoint's message lists by name (the count is always exact). */
const SKIP_LIST_MAX = 1_000;

/** Who commits guard's own records: never the user's identity, which may be unset. */
export const GUARD_IDENTITY = {
  GIT_AUTHOR_NAME: 'guard',
  GIT_AUTHOR_EMAIL: 'guard@localhost',
  GIT_COMMITTER_NAME: 'guard',
  GIT_COMMITTER_EMAIL: 'guard@localhost',
} as const;

/** The whole work tree but guard's own folder (lanes live there). */
// (.guard/ itself is kept out by .git/info/exclude, which init and start
// ensure: an exclude pathspec on an ignored folder makes `git add` fail.)
// Nor the temp files of guard's own atomic writes (a killed guard's, or a live one's
// mid-write): a checkpoint holding one would bring it back, even staged, on restore.
const WHOLE_TREE = [':(top)', ':(top,exclude,glob)**/.*.guard-tmp-*'];

function realIndex(repo: Repo): string {
  // Inside a hook git points GIT_INDEX_FILE at the index being committed.
  const env = process.env.GIT_INDEX_FILE;
  return env ? path.resolve(repo.root, env) : path.join(repo.gitDir, 'index');
}

export function checkpointId(ref: string): string {
  return ref.slice(REFS.checkpoints.length);
}

function envNumber(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** Beyond this many untracked files, guard's own index is not kept (their list would be too long to carry). */
const KEPT_UNTRACKED_MAX = 10_000;

/** The checkpoint commit's fast-import mark, and its staged index's (a caller's records use marks below these). */
const CHECKPOINT_MARK = 1_000_001;
const INDEX_MARK = 1_000_002;
const KEPT_MARK = 1_000_003;

/**
 * Record the full state of a work tree (tracked files and untracked files
 * that are not ignored) as a commit under refs/guard/checkpoints/, without
 * touching the user's index, work tree or stash:
 *
 *   guard's index (or .git/index) -> TMP    seeded, so unchanged files are not re-hashed
 *   GIT_INDEX_FILE=TMP git add -u --verbose  tracked files   } at once
 *   GIT_INDEX_FILE=TMP git ls-files -o       untracked ones  }
 *   GIT_INDEX_FILE=TMP git update-index --add --stdin   untracked files under the cap, within the budget
 *   GIT_INDEX_FILE=TMP git write-tree        } at once
 *   GIT_INDEX_FILE=TMP git ls-files --eol    } (what add hashed anew: kept as the bytes on disk)
 *   git fast-import                          the commit(s) (guard's identity, no hooks, no signing),
 *                                            the ref (new: unique under concurrency) and the caller's records
 *
 * A known-path checkpoint (`paths`, guard write's) reads only those paths
 * and writes them on HEAD's tree, in the one fast-import.
 */
export async function checkpoint(repo: Repo, opts: CheckpointOptions): Promise<Checkpoint> {
  return opts.paths ? checkpointPaths(repo, opts.paths, opts) : checkpointTree(repo, opts);
}

/** The checkpoint's message: why, and its JSON body (DESIGN "Where things are kept"). Also the hook's, which writes its own. */
export function checkpointMessage(
  repo: Pick<Repo, 'root'>,
  opts: CheckpointOptions,
  {
    now,
    head,
    index,
    skipped,
    kept,
  }: {
    now: Date;
    head: string | null;
    index: string | null;
    skipped: readonly SkippedFile[];
    kept?: KeptBody;
  },
): string {
  const body = {
    v: RECORD_VERSION,
    kind: 'checkpoint',
    reason: opts.reason,
    command: opts.command,
    lane: opts.lane,
    worktree: repo.root,
    time: now.toISOString(),
    head,
    partial: opts.paths ? true : undefined,
    // A partial checkpoint vouches only for these paths (the rest of its tree is HEAD's): restore uses them.
    paths: opts.paths ? [...opts.paths] : undefined,
    // The index's tree when it differs from the work tree's (the commit's second parent holds it).
    index: index ?? undefined,
    // Untracked files left out (over the cap, past the budget, refused by git): never a silent drop.
    skipped: skipped.length > 0 ? skipped.slice(0, SKIP_LIST_MAX) : undefined,
    skippedCount: skipped.length > 0 ? skipped.length : undefined,
    // ignored files and nested repositories' files: which parent holds them (git/kept.ts), lanes present
    kept:
      kept?.parent !== undefined
        ? {
            parent: kept.parent,
            files: kept.files,
            bytes: kept.bytes,
            folders: kept.folders.length ? kept.folders : undefined,
            nested: kept.nested.length ? kept.nested : undefined,
          }
        : undefined,
    lanes: kept?.lanes.length ? kept.lanes : undefined,
    ...(opts.session
      ? {
          harness: opts.session.harness,
          session: opts.session.session,
          toolCall: opts.session.toolCall,
        }
      : {}),
  };
  return `guard checkpoint: ${opts.reason}\n\n${JSON.stringify(body)}\n`;
}

/**
 * A known-path checkpoint: the paths as they are on disk now, byte for byte
 * (no clean filter, no eol conversion: read here, not hashed by git), on
 * HEAD's tree; a path that does not exist (the file guard write is about to
 * create) is absent from it. One git process: the fast-import that also
 * writes the caller's records.
 */
async function checkpointPaths(
  repo: Repo,
  paths: readonly string[],
  opts: CheckpointOptions,
): Promise<Checkpoint> {
  const trusted = opts.env ?? {};
  const cwd = repo.root;
  const [head, found] = await Promise.all([
    headCommit(repo, trusted),
    Promise.all(paths.map((p) => readOnDisk(cwd, p))),
  ]);
  faultPoint('checkpoint:after-add');
  const now = opts.now ?? new Date();
  const ref = newRef(REFS.checkpoints, now);
  const id = checkpointId(ref);
  const changes: RecordCommit['changes'] = paths.map((p, i) => {
    const f = found[i];
    return f
      ? { kind: 'inline', path: p, mode: f.mode, data: f.data }
      : { kind: 'delete', path: p };
  });
  const commits: RecordCommit[] = [
    {
      ref,
      mark: CHECKPOINT_MARK,
      parent: head,
      message: checkpointMessage(repo, opts, { now, head, index: null, skipped: [] }),
      changes,
    },
    ...(opts.records?.({ id, ref, commit: `:${CHECKPOINT_MARK}`, head }) ?? []),
  ];
  faultPoint('checkpoint:before-update-ref');
  const w = (await importCommits(cwd, commits, now, { env: trusted, ask: [CHECKPOINT_MARK] })).get(
    CHECKPOINT_MARK,
  )!;
  return { ref, id, commit: w.commit, tree: w.tree, index: null, reused: false, skipped: [] };
}

/** A work-tree path as git would hold it: a file's bytes and mode, a symlink's target; null when there is none. */
async function readOnDisk(
  root: string,
  rel: string,
): Promise<{ mode: string; data: Buffer } | null> {
  const abs = path.join(root, rel);
  try {
    const st = await lstat(abs);
    if (st.isSymbolicLink())
      return { mode: MODE.symlink, data: await readlink(abs, { encoding: 'buffer' }) };
    // git's own rule: the owner's execute bit
    if (st.isFile()) return { mode: fileMode(st.mode), data: await readFile(abs) };
    throw new GuardError(
      'E_USAGE',
      `${rel} is not a file`,
      'guard checkpoints files and symlinks by path',
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'EACCES' || code === 'EPERM')
      throw new GuardError(
        'E_UNREADABLE',
        `could not read ${rel}: permission denied`,
        'fix its permissions (or move it away), then run guard again',
      );
    throw err;
  }
}

/**
 * What `git add --verbose` changed in the index: paths (re)hashed to a new
 * blob or mode ("add 'P'") and paths removed ("remove 'P'", in the C locale);
 * null when its output cannot be read with certainty (a name with a newline).
 */
function addOutput(stdout: Buffer): { added: string[]; removed: string[] } | null {
  const added: string[] = [];
  const removed: string[] = [];
  for (const line of stdout.toString('utf8').split('\n')) {
    if (line === '') continue;
    if (!line.endsWith("'")) return null;
    if (line.startsWith("add '")) added.push(line.slice(5, -1));
    else if (line.startsWith("remove '")) removed.push(line.slice(8, -1));
    else return null;
  }
  return { added, removed };
}

/** Above these, the files a checkpoint hashed anew are not read into guard (git's write-tree path instead). */
const INLINE_FILE_MAX = 1 << 20;
const INLINE_TOTAL_MAX = 8 << 20;

/**
 * The tree changes that turn the last checkpoint's tree into this one, with
 * the files as they are on disk (raw bytes: no eol pass), when every path is
 * a plain file or symlink that is small enough and has no CR (a CRLF file
 * goes through git's write-tree and its raw-bytes pass, which keeps its raw
 * blob in guard's index so that a later eol-only change is still seen); null otherwise.
 */
async function changesOnDisk(
  root: string,
  changed: readonly string[],
  removed: readonly string[],
): Promise<RecordCommit['changes'] | null> {
  if (changed.length > 256) return null;
  let total = 0;
  const read = await Promise.all(
    changed.map(async (rel) => {
      const abs = path.join(root, rel);
      const st = await lstat(abs).catch(() => null);
      if (!st || st.size > INLINE_FILE_MAX || (total += st.size) > INLINE_TOTAL_MAX) return null;
      if (st.isSymbolicLink())
        return {
          mode: MODE.symlink,
          data: await readlink(abs, { encoding: 'buffer' }).catch(() => null),
        };
      if (!st.isFile()) return null;
      const data = await readFile(abs).catch(() => null);
      return {
        mode: fileMode(st.mode),
        data: data && data.length === st.size && !data.includes(13) ? data : null,
      };
    }),
  );
  const changes: RecordCommit['changes'] = removed.map((p) => ({ kind: 'delete', path: p }));
  for (const [i, f] of read.entries()) {
    if (!f?.data) return null;
    changes.push({ kind: 'inline', path: changed[i]!, mode: f.mode, data: f.data });
  }
  return changes;
}

async function checkpointTree(repo: Repo, opts: CheckpointOptions): Promise<Checkpoint> {
  const tmpIndex = path.join(repo.gitDir, `guard-index-${process.pid}-${randomHex(4)}`);
  // A second copy: its tree is the index as it is (what is staged), kept too so
  // that a staged version that differs from the file is not lost.
  const stagedIndex = `${tmpIndex}-staged`;
  const trusted = opts.env ?? {};
  const env = { ...trusted, GIT_INDEX_FILE: tmpIndex };
  const userIndex = realIndex(repo);
  const maxBytes =
    opts.maxUntrackedBytes ?? envNumber('GUARD_CHECKPOINT_MAX_BYTES') ?? UNTRACKED_MAX_BYTES;
  const budgetMs =
    opts.untrackedBudgetMs ?? envNumber('GUARD_CHECKPOINT_BUDGET_MS') ?? UNTRACKED_BUDGET_MS;
  let keptName: string | null = null;
  try {
    const [key, previous] = await Promise.all([indexKey(userIndex), lastCheckpoint(repo)]);
    const t: Taking = {
      repo,
      opts,
      cwd: repo.root,
      trusted,
      env,
      tmpIndex,
      stagedIndex,
      userIndex,
      previous,
      key,
    };
    const seed = await seedIndexes(t, maxBytes);
    const read = await addWorkTree(t, seed, { maxBytes, budgetMs });
    const { tree, onDisk } = await workTreeTree(t, seed, read);
    const untrackedNow = [...seed.carried, ...read.added];
    if (key && untrackedNow.length <= KEPT_UNTRACKED_MAX) {
      keptName = `guard-index.${key}.${randomHex(4)}`;
      await rename(tmpIndex, path.join(repo.gitDir, keptName)).catch(() => (keptName = null));
    }
    const taken: Taken = {
      ...read,
      tree,
      onDisk,
      // (a tree fast-import has yet to make differs from the last one: kept with the index beside it)
      index: read.indexTree && read.indexTree !== tree ? read.indexTree : null,
      remember: {
        head: read.head,
        userIndexKey: key,
        stagedTree: read.indexTree,
        keptIndex: keptName,
        untracked: keptName ? untrackedNow : [],
      },
      keptFiles: { files: read.keptPlan.files, folders: read.keptPlan.bigFolders },
      // the kept commit: the last one when it holds exactly this, else a new one (null: nothing kept)
      keptReused: read.keptPlan.reuse ? previous!.keptMemory!.commit : null,
      keptNone: read.keptPlan.files.length === 0,
    };
    return (await reuseLast(t, taken)) ?? (await writeCheckpoint(t, taken));
  } finally {
    await Promise.all([
      rm(tmpIndex, { force: true }),
      dropKeptIndexes(repo.gitDir, keptName),
      rm(stagedIndex, { force: true }),
    ]);
  }
}

/** One checkpoint of the whole tree being taken: where its indexes are, and what it starts from. */
interface Taking {
  repo: Repo;
  opts: CheckpointOptions;
  cwd: string;
  /** The caller's environment for git (opts.env), without the temporary index. */
  trusted: NodeJS.ProcessEnv;
  /** `trusted` with GIT_INDEX_FILE at `tmpIndex`. */
  env: NodeJS.ProcessEnv;
  tmpIndex: string;
  stagedIndex: string;
  userIndex: string;
  previous: LastCheckpoint | null;
  /** The user's index now (indexKey). */
  key: string | null;
}

interface Seed {
  /** guard's index was seeded from the last checkpoint's kept index (else from the user's). */
  seeded: boolean;
  /** The untracked files that kept index already holds. */
  carried: string[];
  /** The staged tree, known from the last checkpoint. */
  stagedKnown: string | null | undefined;
  /** The staged index was copied, to be written as a tree. */
  stagedSeeded: boolean;
}

/**
 * guard's own index from the last checkpoint, while the user's index is the one it grew from
 * (and none of the untracked files it holds has grown past the cap since); else the user's.
 */
async function seedIndexes(t: Taking, maxBytes: number): Promise<Seed> {
  const { previous, key, cwd } = t;
  const sameUserIndex = previous !== null && key !== null && previous.userIndexKey === key;
  let carried: string[] = [];
  let seeded = false;
  if (sameUserIndex && previous.keptIndex && KEPT_INDEX.test(previous.keptIndex)) {
    // (synchronously: thousands of lstat calls through the thread pool cost more than the calls)
    const sizes = previous.untracked.map(
      (p) => lstatSync(path.join(cwd, p), { throwIfNoEntry: false })?.size ?? -1,
    );
    if (sizes.every((n) => n <= maxBytes)) {
      seeded = await copyIndex(path.join(t.repo.gitDir, previous.keptIndex), t.tmpIndex);
      if (seeded) carried = previous.untracked.filter((_, i) => sizes[i]! >= 0);
    }
  }
  if (!seeded) await copyIndex(t.userIndex, t.tmpIndex);
  // The staged tree only changes with the user's index: known from the last checkpoint while its key holds.
  const stagedKnown =
    sameUserIndex && previous.stagedTree !== undefined ? previous.stagedTree : undefined;
  const stagedSeeded = stagedKnown === undefined && (await copyIndex(t.userIndex, t.stagedIndex));
  return { seeded, carried, stagedKnown, stagedSeeded };
}

/** What adding the work tree to guard's index found. */
interface Read {
  head: string | null;
  /** What add changed among the tracked files; null when its output cannot be read with certainty. */
  tracked: { added: string[]; removed: string[] } | null;
  /** The untracked files added, and every file left out with why. */
  added: string[];
  skipped: SkippedFile[];
  keptPlan: KeptPlan;
  lanes: string[];
  /** The staged tree; null when the index could not be written as a tree (a merge in progress). */
  indexTree: string | null;
}

async function addWorkTree(
  t: Taking,
  seed: Seed,
  limits: { maxBytes: number; budgetMs: number },
): Promise<Read> {
  const { repo, cwd, env, trusted, previous } = t;
  // tracked files (and deletions) and the untracked ones at once; those below, under the cap and the budget
  // (--verbose: "add 'P'" for each file hashed to a new blob, "remove 'P'" (C locale) for each gone)
  const [adding, head, , staged, names, ignored] = await Promise.all([
    // (no exclude pathspec here: git matches it against every tracked path, ~5 ms at 20,000, and it
    // keeps nothing out: a temp file the user's index tracks stays in the tree with or without it)
    git([...STRICT_STAT, 'add', '-u', '--verbose', '--ignore-errors', '--', ':(top)'], {
      cwd,
      env: { ...env, LC_ALL: 'C', LANGUAGE: 'C' },
    }),
    headCommit(repo, trusted),
    removeStaleIndexes(repo.gitDir),
    seed.stagedSeeded
      ? git(['write-tree'], {
          cwd,
          env: { ...trusted, GIT_INDEX_FILE: t.stagedIndex },
          okCodes: [128],
        })
      : null,
    git([...STRICT_STAT, 'ls-files', '-o', '--exclude-standard', '-z', '--', ...WHOLE_TREE], {
      cwd,
      env,
    }).then((r) => splitZ(r.stdout)),
    // the ignored files (wholly ignored folders once, with a trailing /), for the kept tree (git/kept.ts)
    git(
      [
        'ls-files',
        '-z',
        '--others',
        '--ignored',
        '--exclude-standard',
        '--directory',
        '--no-empty-directory',
      ],
      { cwd, env },
    ).then((r) => splitZ(r.stdout)),
  ]);
  let skipped: SkippedFile[] = [];
  let added: string[] = [];
  const nested = [...names.filter((n) => n.endsWith('/')), ...(await submodulePaths(cwd))];
  const algo = head
    ? head.length === 64
      ? 'sha256'
      : 'sha1'
    : previous?.commit
      ? previous.commit.length === 64
        ? 'sha256'
        : 'sha1'
      : null;
  const [untracked, keptPlan, lanes] = await Promise.all([
    names.length > 0 ? addUntracked(repo, env, names, limits) : null,
    planKept(cwd, {
      input: { ignored, nested },
      previous: previous?.keptMemory ?? null,
      algo,
      limits: keptLimits(),
    }),
    repo.gitDir === repo.commonDir ? presentLanes(cwd) : Promise.resolve([] as string[]),
  ]);
  if (untracked) ({ skipped, added } = untracked);
  skipped.push(...keptPlan.skipped);
  const indexTree =
    seed.stagedKnown !== undefined
      ? seed.stagedKnown
      : staged && staged.code === 0
        ? staged.stdout.toString().trim()
        : null;
  faultPoint('checkpoint:after-add');
  return { head, tracked: addOutput(adding.stdout), added, skipped, keptPlan, lanes, indexTree };
}

/**
 * The work tree's tree: from guard's kept index, what add changed is all that changed since the
 * last checkpoint, so its tree plus those files, read here as raw bytes (`onDisk`), is this one
 * (fast-import builds it: `tree` null); else git's write-tree, with the raw-bytes pass.
 */
async function workTreeTree(
  t: Taking,
  seed: Seed,
  { tracked, added, indexTree }: Read,
): Promise<{ tree: string | null; onDisk: RecordCommit['changes'] | null }> {
  const { cwd, env, trusted, previous } = t;
  // (Not on Windows, where git keeps an index entry's executable bit and symlink mode when the
  // file system cannot say them: core.fileMode and core.symlinks false.)
  const onDisk =
    seed.seeded && previous!.tree && tracked && process.platform !== 'win32'
      ? await changesOnDisk(cwd, [...tracked.added, ...added], tracked.removed)
      : null;
  if (onDisk) return { tree: onDisk.length === 0 ? previous!.tree : null, onDisk };
  // What add hashed anew is kept as the bytes on disk, not git's clean (eol) form. (From guard's
  // kept index, only what changed since the last checkpoint is hashed anew: the files it carries
  // were kept as raw bytes then. From the user's index, what differs from it.) Read beside write-tree.
  const anew = tracked && [...tracked.added, ...added];
  let [tree, eol] = await Promise.all([
    git(['write-tree'], { cwd, env }).then((r) => r.stdout.toString().trim()),
    anew ? eolConverted(cwd, env, anew) : null,
  ]);
  if (!eol || !tracked!.added.every((p) => eol!.listed.has(p))) {
    // add's output could not be read with certainty (a name with a newline): what the trees say
    const before = seed.seeded ? previous!.tree : indexTree;
    eol = await eolConverted(
      cwd,
      env,
      before && before !== tree ? await changedPaths(cwd, before, tree, trusted) : [],
    );
  }
  if (await storeRawBytes(cwd, env, eol.converted))
    tree = (await git(['write-tree'], { cwd, env })).stdout.toString().trim();
  return { tree, onDisk: null };
}

/** Everything a new checkpoint (or the reused last one) is made of. */
interface Taken extends Read {
  /** The work tree's tree; null when fast-import makes it from the last checkpoint's and `onDisk`. */
  tree: string | null;
  onDisk: RecordCommit['changes'] | null;
  /** The staged tree, when it differs from the work tree's. */
  index: string | null;
  /** What the last-checkpoint file keeps for the next one. */
  remember: Pick<
    LastCheckpoint,
    'head' | 'userIndexKey' | 'stagedTree' | 'keptIndex' | 'untracked'
  >;
  keptFiles: { files: KeptPlan['files']; folders: KeptPlan['bigFolders'] };
  keptReused: string | null;
  keptNone: boolean;
}

/** The last checkpoint, when it holds exactly this: no new commit (the caller's records are still written). */
async function reuseLast(t: Taking, x: Taken): Promise<Checkpoint | null> {
  const { previous } = t;
  const sameKept = x.keptNone
    ? !previous?.keptCommitOf
    : x.keptReused !== null && previous?.keptCommitOf === x.keptReused;
  const sameLanes = JSON.stringify(previous?.lanes ?? []) === JSON.stringify(x.lanes);
  if (
    !(
      previous &&
      x.tree !== null &&
      previous.tree === x.tree &&
      previous.index === x.index &&
      sameSkips(previous.skipped, x.skipped) &&
      sameKept &&
      sameLanes
    )
  )
    return null;
  const cp = {
    ref: previous.ref,
    id: previous.id,
    commit: previous.commit,
    tree: previous.tree,
    index: previous.index,
    skipped: x.skipped,
    reused: true,
    kept: previous.keptCommitOf ?? null,
  };
  const records =
    t.opts.records?.({ id: cp.id, ref: cp.ref, commit: cp.commit, head: x.head }) ?? [];
  await Promise.all([
    rememberLast(t.repo, {
      ...cp,
      reused: false,
      ...x.remember,
      indexCommit: previous.indexCommit,
      keptMemory: { commit: previous.keptMemory?.commit ?? '', ...x.keptFiles },
      keptCommitOf: previous.keptCommitOf,
      lanes: x.lanes,
    }),
    records.length > 0
      ? importCommits(t.cwd, records, t.opts.now ?? new Date(), { env: t.trusted })
      : null,
  ]);
  return cp;
}

/** A new checkpoint commit on HEAD, its staged index and kept tree as further parents, in one fast-import. */
async function writeCheckpoint(t: Taking, x: Taken): Promise<Checkpoint> {
  const { repo, opts, previous } = t;
  const { head, index, skipped, keptPlan, keptReused, keptNone, lanes, tree } = x;
  const now = opts.now ?? new Date();
  const ref = newRef(REFS.checkpoints, now);
  const id = checkpointId(ref);
  const { commits, merges, keptParent } = extraParents(t, x);
  const keptBody: KeptBody = {
    ...(keptParent !== undefined ? { parent: keptParent } : {}),
    files: keptPlan.files.length,
    bytes: keptPlan.bytes,
    folders: keptPlan.folders,
    nested: keptPlan.nested,
    lanes,
  };
  const message = checkpointMessage(repo, opts, { now, head, index, skipped, kept: keptBody });
  commits.push({
    ref,
    mark: CHECKPOINT_MARK,
    parent: head,
    merges,
    tree: tree ?? previous!.tree,
    message,
    changes: tree === null ? x.onDisk! : [],
  });
  commits.push(...(opts.records?.({ id, ref, commit: `:${CHECKPOINT_MARK}`, head }) ?? []));
  faultPoint('checkpoint:before-update-ref');
  const ask = [
    CHECKPOINT_MARK,
    ...(merges[0] === `:${INDEX_MARK}` ? [INDEX_MARK] : []),
    ...(merges.includes(`:${KEPT_MARK}`) ? [KEPT_MARK] : []),
  ];
  const written = await importCommits(t.cwd, commits, now, { env: t.trusted, ask });
  const { commit, tree: made } = written.get(CHECKPOINT_MARK)!;
  const indexCommit = index ? (written.get(INDEX_MARK)?.commit ?? merges[0]) : undefined;
  const keptCommit = keptNone ? null : (written.get(KEPT_MARK)?.commit ?? keptReused);
  const cp: Checkpoint = {
    ref,
    id,
    commit,
    tree: made,
    index,
    reused: false,
    skipped,
    kept: keptCommit,
  };
  await rememberLast(repo, {
    ...cp,
    ...x.remember,
    indexCommit,
    keptMemory: keptCommit
      ? { commit: keptCommit, ...x.keptFiles }
      : { commit: '', ...x.keptFiles },
    keptCommitOf: keptCommit ?? undefined,
    lanes,
  });
  return cp;
}

/**
 * The checkpoint's parents after HEAD, and the commits to write for them: the index (like
 * `git stash`, a commit of its own; the last checkpoint's when it is the same tree on the same
 * HEAD), then the kept tree of ignored files and nested repositories (reachable, so gc keeps it).
 */
function extraParents(
  { previous }: Taking,
  { head, index, keptPlan, keptReused, keptNone }: Taken,
) {
  const commits: RecordCommit[] = [];
  const merges: string[] = [];
  if (index) {
    if (previous?.indexCommit && previous.index === index && previous.head === head)
      merges.push(previous.indexCommit);
    else {
      commits.push({
        mark: INDEX_MARK,
        parent: head,
        tree: index,
        message: 'guard checkpoint: the index\n',
        changes: [],
      });
      merges.push(`:${INDEX_MARK}`);
    }
  }
  let keptParent: number | undefined;
  if (!keptNone) {
    keptParent = (head ? 1 : 0) + merges.length;
    if (keptReused) merges.push(keptReused);
    else {
      commits.push({
        mark: KEPT_MARK,
        parent: null,
        message: 'guard checkpoint: ignored files and nested repositories\n',
        changes: keptPlan.changes,
      });
      merges.push(`:${KEPT_MARK}`);
    }
  }
  return { commits, merges, keptParent };
}

function sameSkips(a: readonly SkippedFile[], b: readonly SkippedFile[]): boolean {
  return (
    a.length === b.length && a.every((s, i) => s.path === b[i]!.path && s.reason === b[i]!.reason)
  );
}

/**
 * HEAD's commit, read from the ref files when they are plain (a loose or
 * packed branch, or a detached HEAD): no process for the common case. Anything
 * else (an unborn branch, another ref store, a symref chain) asks git.
 */
async function headCommit(repo: Repo, env: NodeJS.ProcessEnv): Promise<string | null> {
  const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
  try {
    const head = (await readFile(path.join(repo.gitDir, 'HEAD'), 'utf8')).trim();
    if (OID.test(head)) return head;
    const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
    if (ref && !ref.includes('..')) {
      const loose = (await readFile(path.join(repo.commonDir, ref), 'utf8').catch(() => '')).trim();
      if (OID.test(loose)) return loose;
      if (loose === '') {
        const oid = await packedRefOid(repo.commonDir, ref);
        if (oid) return oid;
      }
    }
  } catch {
    /* ask git */
  }
  const r = await git(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], {
    cwd: repo.root,
    env,
    okCodes: [1],
  });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}

/** Paths whose blobs differ between two trees (what a checkpoint's add changed). */
async function changedPaths(
  cwd: string,
  from: string,
  to: string,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  // -r -z --name-only --no-renames: "<path> NUL" per file that differs
  const r = await git(
    ['diff-tree', '-r', '-z', '--name-only', '--no-renames', '--diff-filter=AM', from, to],
    { cwd, env },
  );
  return splitZ(r.stdout);
}

/** `:(literal)` so a file named `*.js` or `:foo` is that file, not a pattern. */
export function literal(p: string): string {
  return `:(literal)${p}`;
}

/**
 * The last whole-tree checkpoint of this work tree, from a small file in its
 * git dir (no git process), if its ref still points where it did: read as a
 * loose ref or from packed-refs; anything else (pruned, another ref store)
 * means no reuse, never a wrong one.
 */
interface LastCheckpoint extends Checkpoint {
  head: string | null;
  /** The user's index it was taken with (indexKey), and that index's tree (null: not writable as a tree). */
  userIndexKey: string | null;
  stagedTree?: string | null;
  /** The commit of the staged tree on `head` (the second parent), when there was one. */
  indexCommit?: string;
  /** guard's own index after this checkpoint (a file in the git dir), and the untracked files it holds. */
  keptIndex: string | null;
  untracked: string[];
  /** The kept tree's files as last seen (git/kept.ts), and the kept commit of this checkpoint. */
  keptMemory?: KeptMemory;
  keptCommitOf?: string;
  lanes?: string[];
}

async function lastCheckpoint(repo: Repo): Promise<LastCheckpoint | null> {
  let last: LastCheckpoint;
  try {
    last = JSON.parse(await readFile(path.join(repo.gitDir, LAST_FILE), 'utf8')) as LastCheckpoint;
  } catch {
    return null;
  }
  if (
    typeof last?.ref !== 'string' ||
    !last.ref.startsWith(REFS.checkpoints) ||
    last.ref.includes('..')
  )
    return null;
  const loose = await readFile(path.join(repo.commonDir, last.ref), 'utf8').catch(() => null);
  let oid = loose?.trim() ?? null;
  if (oid === null) {
    oid = await packedRefOid(repo.commonDir, last.ref);
  }
  if (oid !== last.commit) return null;
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  return {
    ...last,
    skipped: Array.isArray(last.skipped) ? last.skipped : [],
    untracked: strings(last.untracked),
    keptIndex: typeof last.keptIndex === 'string' ? last.keptIndex : null,
    reused: false,
  };
}

const LAST_FILE = 'guard-last-checkpoint';

async function rememberLast(repo: Repo, cp: LastCheckpoint): Promise<void> {
  const tmp = path.join(repo.gitDir, `${LAST_FILE}.${process.pid}-${randomHex(4)}`);
  try {
    await writeFile(tmp, JSON.stringify(cp));
    await rename(tmp, path.join(repo.gitDir, LAST_FILE));
  } catch {
    await rm(tmp, { force: true });
  }
}

/**
 * What a checkpoint never holds: the ignored files and folders of a work
 * tree (a wholly ignored folder is named once, with a trailing `/`).
 * https://git-scm.com/docs/git-ls-files: --others --ignored --exclude-standard --directory, -z.
 */
export async function ignoredPaths(root: string): Promise<string[]> {
  return splitZ(
    (
      await git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], {
        cwd: root,
      })
    ).stdout,
  );
}
