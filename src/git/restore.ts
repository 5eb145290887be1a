import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { parseRecordMessage } from '../core/record.js';
import { MODE } from '../core/modes.js';
import { READ_CAP, catFileBatch, type CatResult } from './catfile.js';
import { checkpointId, literal, type Checkpoint } from './checkpoint.js';
import { REFS } from './records.js';
import type { Repo } from './repo.js';
import { git, splitZ } from './run.js';

export interface CheckpointInfo {
  ref: string;
  id: string;
  commit: string;
  tree: string;
  /** The index's tree when it differed from the work tree's (what `--staged` puts back). */
  index: string | null;
  /** The work tree it was taken of; null when the record does not say (hand-made). */
  worktree: string | null;
  /** Set for a partial checkpoint: the only paths it vouches for (the rest of its tree is the index). */
  paths: string[] | null;
  time: string | null;
  reason: string | null;
  /** Untracked files the checkpoint left out (too large, past its time budget, refused by git): never removed by a restore. */
  skipped: string[];
  /** The commit holding the ignored files and nested repositories' files it kept (git/kept.ts); null: none. */
  kept: string | null;
}

/** Ids are what newRef makes: a timestamp and random hex; nothing that could walk out of refs/guard/checkpoints/. */
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function noCheckpoint(name: string): GuardError {
  return new GuardError(
    'E_NO_CHECKPOINT',
    `no checkpoint "${name}"`,
    'guard log lists the checkpoints; pass an id from there',
  );
}

/**
 * Which record a checkpoint id names: its ref (null returned) or a chain's step. The agent can
 * plant a ref or a chain beside guard's that claims the id with a commit of its own, and a restore
 * of the id put back what it forged (adv9). When the ref and the chains' steps do not agree, the
 * one guard's journal has a word on stands; none or several: refused.
 */
async function oneClaim(
  cwd: string,
  id: string,
  byRef: { ref: string; commit: string } | null,
  claims: ReadonlyArray<{ chain: string; step: string }>,
): Promise<string | null> {
  if (claims.length === 0 || (!byRef && new Set(claims.map((c) => c.step)).size === 1))
    return claims[0]?.step ?? null;
  // what each claim names as the checkpoint: the ref's commit, a step's parent (a shell call's
  // checkpoint keeps its ref and its link names it too: the same commit)
  const parents = await catFileBatch(
    cwd,
    claims.map((c) => `${c.step}^`),
    READ_CAP,
    () => false,
  );
  const all = [
    ...(byRef ? [{ by: byRef.ref, cp: byRef.commit, step: null }] : []),
    ...claims.map((c, i) => ({ by: c.chain, cp: parents[i]?.oid ?? c.step, step: c.step })),
  ];
  const one = (l: typeof all) => new Set(l.map((c) => c.cp)).size === 1;
  if (one(all)) return byRef ? null : all[0]!.step;
  const { commonDirOf, journalNames } = await import('./journal.js');
  const commonDir = commonDirOf(cwd);
  const named = commonDir
    ? await journalNames(
        commonDir,
        all.map((c) => c.by),
      )
    : null;
  const ours = all.filter((c) => named?.has(c.by));
  if (ours.length > 0 && one(ours)) return ours.some((c) => c.step === null) ? null : ours[0]!.step;
  throw new GuardError(
    'E_UNREADABLE',
    `checkpoint ${id} is claimed by records that differ (${[...new Set(all.map((c) => c.by))].join(', ')}), and guard's journal does not say which is its own`,
    'guard doctor shows what changed outside guard; guard log lists the checkpoints',
  );
}

/** Find a checkpoint by its id (`guard log`) or full ref name, with one for-each-ref. */
export async function findCheckpoint(cwd: string, name: string): Promise<CheckpointInfo> {
  const id = name.startsWith(REFS.checkpoints) ? name.slice(REFS.checkpoints.length) : name;
  if (!ID.test(id) || id.includes('..') || id.endsWith('.lock')) throw noCheckpoint(name);
  const ref = REFS.checkpoints + id;
  const fmt = '%(refname)%00%(objectname)%00%(tree)%00%(parent)%00%(contents)';
  const r = await git(['for-each-ref', `--format=${fmt}`, ref], { cwd });
  let [refname, commit, tree, parents, ...rest] = r.stdout.toString('utf8').split('\0');
  // a hook call's checkpoint has no ref of its own when its session's steps chain; the chains are
  // read for one with a ref too: a ref planted at a chained checkpoint's id is not guard's
  const { chainedClaims, stepCheckpoint } = await import('./session-chain.js');
  const claims = await chainedClaims(cwd, id);
  const step = await oneClaim(cwd, id, refname === ref ? { ref, commit: commit! } : null, claims);
  const found = step ? await stepCheckpoint(cwd, step) : null;
  if (found) [refname, commit, tree, parents, ...rest] = [ref, ...found];
  if (refname !== ref || !commit || !tree) throw noCheckpoint(name);
  const body = parseRecordMessage(rest.join('\0').replace(/\n$/, '')) as {
    worktree?: unknown;
    paths?: unknown;
    partial?: unknown;
    time?: unknown;
    reason?: unknown;
    index?: unknown;
    skipped?: unknown;
    kept?: { parent?: unknown };
  } | null;
  const paths = Array.isArray(body?.paths)
    ? body.paths.filter((p): p is string => typeof p === 'string')
    : null;
  return {
    ref,
    id: checkpointId(ref),
    commit,
    tree,
    index:
      typeof body?.index === 'string' && /^[0-9a-f]{40,64}$/.test(body.index) ? body.index : null,
    worktree: typeof body?.worktree === 'string' ? body.worktree : null,
    // a partial checkpoint whose paths are unknown vouches for nothing
    paths: body?.partial ? (paths ?? []) : null,
    time: typeof body?.time === 'string' ? body.time : null,
    reason: typeof body?.reason === 'string' ? body.reason : null,
    skipped: Array.isArray(body?.skipped)
      ? body.skipped
          .map((s: { path?: unknown }) => s?.path)
          .filter((p): p is string => typeof p === 'string')
      : [],
    kept: keptParent(parents ?? '', body?.kept?.parent),
  };
}

/** The kept commit among a checkpoint's parents ("<oid> <oid> ..."), by the place its message names. */
export function keptParent(parents: string, place: unknown): string | null {
  if (typeof place !== 'number' || !Number.isInteger(place) || place < 0) return null;
  const oid = parents.split(' ').filter(Boolean)[place];
  return oid && /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
}

/** git's empty tree, in each hash: what a checkpoint with nothing kept is compared against. */
export function emptyTree(oid: string): string {
  return oid.length === 64
    ? '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321'
    : '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
}

export type RestoreAction = 'rewritten' | 'recreated' | 'removed';

export interface RestoreChange {
  path: string;
  action: RestoreAction;
}

export interface RestoreResult {
  /** The checkpoint of the state before the restore: restoring it undoes this one. */
  undo: Checkpoint;
  changes: RestoreChange[];
  /** Index entries put back (with --staged). */
  staged: string[];
  /** Paths left alone, with why (a submodule, or not recorded by a partial checkpoint). */
  skipped: Array<{ path: string; why: string }>;
  /** Paths the restore could not put back (a folder in the way, a failed write), with why; the rest was restored. */
  notRestored: Array<{ path: string; why: string }>;
}

export interface RestoreOptions {
  /** Work-tree paths (files or folders, relative to the root); all that differ when absent. */
  paths?: readonly string[];
  staged: boolean;
  lane: string | null;
}

/**
 * Flags for the tree diffs below:
 * -r: every file, not folders; -z: any name survives; --no-renames: a rename
 * is a removal and a re-creation here; --no-abbrev: ids go to cat-file.
 * https://git-scm.com/docs/git-diff-tree#_raw_output_format
 *   :<old mode> SP <new mode> SP <old oid> SP <new oid> SP <letter> NUL <path> NUL
 */
export const RAW = ['-r', '-z', '--raw', '--no-renames', '--no-abbrev'] as const;

export interface RawEntry {
  path: string;
  letter: string;
  /** The checkpoint's side ("old" in `diff CHECKPOINT NOW`). */
  mode: string;
  oid: string;
  /** The current side's mode. */
  nowMode: string;
}

export function parseRaw(buf: Buffer): RawEntry[] {
  const f = splitZ(buf);
  const out: RawEntry[] = [];
  for (let i = 0; i + 1 < f.length; i += 2) {
    const [mode, nowMode, oid, , letter] = f[i]!.slice(1).split(' ');
    out.push({ path: f[i + 1]!, letter: letter ?? '?', mode: mode!, oid: oid!, nowMode: nowMode! });
  }
  return out;
}

/**
 * Writes that would meet something guard must not remove: a folder where the
 * file goes that still holds files the restore does not remove (ignored or
 * unknown ones), or a file in place of one of its folders that the restore
 * does not remove. Those writes are left out, and so are the removals under
 * a folder left standing, so each path is either restored whole or left as it
 * is. A few lstat/readdir calls, only where a write meets a folder.
 */
async function planAroundObstacles(
  root: string,
  plan: { write: RawEntry[]; remove: RawEntry[] },
): Promise<{
  write: RawEntry[];
  remove: RawEntry[];
  blocked: Array<{ path: string; why: string }>;
}> {
  const removing = new Set(plan.remove.map((e) => e.path));
  const blocked: Array<{ path: string; why: string }> = [];
  const standing: string[] = [];
  const write: RawEntry[] = [];
  for (const e of plan.write) {
    const why = await obstacle(root, e.path, removing);
    if (why === null) write.push(e);
    else {
      blocked.push({ path: e.path, why });
      standing.push(e.path + '/');
    }
  }
  const remove = plan.remove.filter((e) => !standing.some((dir) => e.path.startsWith(dir)));
  return { write, remove, blocked };
}

async function obstacle(root: string, rel: string, removing: Set<string>): Promise<string | null> {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    const st = await lstat(path.join(root, dir)).catch(() => null);
    if (st === null) return null;
    if (!st.isDirectory() && !removing.has(dir))
      return `${dir} is a file guard does not know about; a folder is needed there`;
  }
  const st = await lstat(path.join(root, rel)).catch(() => null);
  if (!st?.isDirectory()) return null;
  const left = await filesLeft(root, rel, removing);
  return left === null
    ? null
    : `a folder stands there holding files the checkpoint does not know (${left}); move them away and restore again`;
}

/** The first file under `dir` that the restore or merge would not remove, or null. */
export async function filesLeft(
  root: string,
  dir: string,
  removing: ReadonlySet<string>,
): Promise<string | null> {
  for (const ent of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${ent.name}`;
    if (ent.isDirectory()) {
      const deeper = await filesLeft(root, rel, removing);
      if (deeper !== null) return deeper;
    } else if (!removing.has(rel)) return rel;
  }
  return null;
}

/** The blobs of the entries to write, in order; a missing one means a damaged store: `whose` lacks it. */
export async function blobsOrFail(
  cwd: string,
  toWrite: readonly RawEntry[],
  whose: string,
): Promise<CatResult[]> {
  const blobs = await catFileBatch(
    cwd,
    toWrite.map((e) => e.oid),
    Number.MAX_SAFE_INTEGER,
  );
  for (const [i, e] of toWrite.entries()) {
    if (!blobs[i]?.data)
      throw new GuardError(
        'E_GIT',
        `${whose} lacks the content of ${e.path}`,
        'the object store may be damaged: git fsck',
      );
  }
  return blobs;
}

/**
 * The kept files (git/kept.ts) to write back: changed or gone since the
 * checkpoint. One that is there now but that guard could not keep now (over
 * the budget: its current version is in no checkpoint) is left alone.
 * Never a removal: a file the checkpoint did not keep is not guard's.
 */
async function keptToWrite(
  root: string,
  entries: RawEntry[],
  skipped: RestoreResult['skipped'],
): Promise<RawEntry[]> {
  const out: RawEntry[] = [];
  for (const e of entries) {
    if (e.letter === 'A') continue;
    if (e.letter === 'D' && (await lstat(path.join(root, e.path)).catch(() => null))) {
      skipped.push({
        path: e.path,
        why: 'it is there now and guard could not keep its current version (over the budget for ignored files): left as it is',
      });
      continue;
    }
    out.push(e);
  }
  return out;
}

/** What a restore writes, removes and stages, read before anything is written (apply's restore target writes it). */
export interface RestorePlan {
  toWrite: RawEntry[];
  toRemove: RawEntry[];
  /** The blobs of toWrite, in its order. */
  blobs: CatResult[];
  /** Index entries to put back (with --staged). */
  index: RawEntry[];
  skipped: RestoreResult['skipped'];
  notRestored: RestoreResult['notRestored'];
}

/**
 * A checkpoint taken of another work tree is restored there, or by naming
 * paths: said before anything is written (the undo checkpoint included).
 */
export function checkRestoreHere(
  repo: Repo,
  target: CheckpointInfo,
  paths: readonly string[] | undefined,
): void {
  if (target.worktree && target.worktree !== repo.root && !paths) {
    throw new GuardError(
      'E_USAGE',
      `checkpoint ${target.id} was taken of ${target.worktree}, not of ${repo.root}`,
      `run it there (--cwd ${target.worktree}), or name the paths to take from it: guard restore ${target.id} -- PATH...`,
    );
  }
}

/**
 * What putting the work tree (and with `staged` the index) back as it was at
 * a checkpoint takes, compared with `undo`, the checkpoint just taken of it
 * now, as two trees (so untracked-not-ignored files are seen, and ignored
 * files never are): a constant number of git processes however many files
 * differ. Never `git clean`: only a file present now, known to git (tracked,
 * or untracked and not ignored) and absent from the checkpoint is removed. A
 * partial checkpoint (guard write's) restores only its paths. Reads only.
 */
export async function planRestore(
  repo: Repo,
  target: CheckpointInfo,
  undo: Pick<Checkpoint, 'tree' | 'kept'>,
  opts: Omit<RestoreOptions, 'lane'>,
): Promise<RestorePlan> {
  const cwd = repo.root;
  const none: RestorePlan = {
    toWrite: [],
    toRemove: [],
    blobs: [],
    index: [],
    skipped: [],
    notRestored: [],
  };
  // A partial checkpoint vouches only for its own paths: without a request, those are all that is compared.
  const wanted = opts.paths ?? target.paths;
  if (wanted && wanted.length === 0) return none;
  const spec = wanted ? ['--', ...wanted.map(literal)] : [];
  const [wt, idx, keptDiff] = await Promise.all([
    git(['diff-tree', ...RAW, target.tree, undo.tree, ...spec], { cwd }),
    // the index goes back to what was staged then (its own tree when it differed from the files)
    opts.staged
      ? git(['diff-index', '--cached', ...RAW, target.index ?? target.tree, ...spec], { cwd })
      : null,
    // the ignored files and nested repositories' files it kept: only ever written back, never removed
    target.kept
      ? git(['diff-tree', ...RAW, target.kept, undo.kept ?? emptyTree(target.kept), ...spec], {
          cwd,
        })
      : null,
  ]);

  const skipped: RestoreResult['skipped'] = [];
  const vouched = target.paths ? new Set(target.paths) : null;
  const work = parseRaw(wt.stdout).filter(restorable(target, vouched, skipped));
  const index = idx ? parseRaw(idx.stdout).filter((e) => !vouched || vouched.has(e.path)) : [];

  const keptWrites = keptDiff ? await keptToWrite(cwd, parseRaw(keptDiff.stdout), skipped) : [];
  const planned = {
    write: [...work.filter((e) => e.letter !== 'A'), ...keptWrites],
    remove: work.filter((e) => e.letter === 'A'),
  };
  // Checked before anything changes: a write that cannot finish is left out with its why,
  // together with the removals below it, so the restore finishes and reports.
  const { write: toWrite, remove: toRemove, blocked } = await planAroundObstacles(cwd, planned);
  const blobs = await blobsOrFail(cwd, toWrite, `checkpoint ${target.id}`);
  return { toWrite, toRemove, blobs, index, skipped, notRestored: [...blocked] };
}

/** Which differences the checkpoint can put back; each one it cannot goes to `skipped` with why. */
function restorable(
  target: CheckpointInfo,
  vouched: Set<string> | null,
  skipped: RestoreResult['skipped'],
): (e: RawEntry) => boolean {
  const leftOut = new Set(target.skipped ?? []);
  return (e) => {
    if (vouched && !vouched.has(e.path)) {
      skipped.push({
        path: e.path,
        why: `checkpoint ${target.id} recorded only ${target.paths!.join(', ')}`,
      });
      return false;
    }
    if (e.letter === 'A' && leftOut.has(e.path)) {
      skipped.push({
        path: e.path,
        why: `checkpoint ${target.id} did not keep it (see guard log)`,
      });
      return false;
    }
    if (e.mode === MODE.gitlink || e.nowMode === MODE.gitlink) {
      skipped.push({ path: e.path, why: 'a submodule' });
      return false;
    }
    return true;
  };
}
