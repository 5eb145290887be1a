import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { MODE } from '../core/modes.js';
import { READ_CAP, catFileBatch, type CatResult } from './catfile.js';
import { literal, type Checkpoint } from './checkpoint.js';
import { RAW, blobsOrFail, emptyTree, keptParent, parseRaw, type RawEntry } from './restore.js';
import type { Repo } from './repo.js';
import { git, splitZ } from './run.js';

/** Paths to put back as they are in one commit's tree (a session event's checkpoint). */
export interface PutBackGroup {
  commit: string;
  paths: string[];
}

/** What putting the groups back takes: the paths to write (with their blobs, in order) and to remove. */
export interface PutBackPlan {
  toWrite: RawEntry[];
  blobs: CatResult[];
  toRemove: RawEntry[];
}

/**
 * What putting each group's paths back as they are in its commit takes,
 * compared with `now` (the checkpoint just taken of the work tree): only
 * what differs, never a submodule. One diff-tree per group and one cat-file
 * for every blob. Paths are disjoint across groups (the caller picks, per
 * path, the earliest state). Reads only (apply's rewind target writes).
 */
export async function planPutBack(
  repo: Repo,
  now: Pick<Checkpoint, 'commit'>,
  groups: readonly PutBackGroup[],
): Promise<PutBackPlan> {
  const cwd = repo.root;
  const diffs = await Promise.all(
    groups
      .filter((g) => g.paths.length > 0)
      .map((g) =>
        git(['diff-tree', ...RAW, g.commit, now.commit, '--', ...g.paths.map(literal)], {
          cwd,
        }).then((r) => parseRaw(r.stdout)),
      ),
  );
  const entries = diffs.flat().filter((e) => e.mode !== MODE.gitlink && e.nowMode !== MODE.gitlink);
  const toWrite = entries.filter((e) => e.letter !== 'A');
  const blobs = await blobsOrFail(cwd, toWrite, "the session's checkpoint");
  return { toWrite, blobs, toRemove: entries.filter((e) => e.letter === 'A') };
}

/**
 * The paths that differ between two commits' trees, for each pair, with one
 * process per pair. `existing`: only paths the first tree holds (modified,
 * deleted, type changed), never one added since.
 */
export async function changedPathsOfPairs(
  cwd: string,
  pairs: ReadonlyArray<[string, string] | [string, string, 'existing']>,
): Promise<string[][]> {
  return Promise.all(
    pairs.map(([a, b, only]) =>
      // --diff-filter=MDT: a file added after the first tree may be a person's, not the session's
      git(
        [
          'diff-tree',
          '-r',
          '-z',
          '--name-only',
          '--no-renames',
          ...(only ? ['--diff-filter=MDT'] : []),
          a,
          b,
        ],
        { cwd },
      ).then((r) => r.stdout.toString('utf8').split('\0').filter(Boolean)),
    ),
  );
}

/** What a whole-tree checkpoint kept beside its tree (git/kept.ts): the kept commit and its wholly ignored folders. */
export interface KeptOf {
  kept: string | null;
  folders: string[];
}

/**
 * Each checkpoint's kept commit and folders, read from the checkpoint commits `specs` name (a
 * session step's `STEP^`), with one cat-file; a checkpoint that kept nothing, or is gone: null.
 */
export async function keptOfCheckpoints(cwd: string, specs: readonly string[]): Promise<KeptOf[]> {
  if (specs.length === 0) return [];
  const { parseRecordMessage } = await import('../core/record.js');
  const raws = await catFileBatch(cwd, specs, READ_CAP);
  return raws.map((r) => {
    if (r?.type !== 'commit' || !r.data) return { kept: null, folders: [] };
    const text = r.data.toString('utf8');
    const cut = text.indexOf('\n\n');
    const parents = (cut < 0 ? text : text.slice(0, cut))
      .split('\n')
      .filter((l) => l.startsWith('parent '))
      .map((l) => l.slice(7));
    const body =
      cut < 0
        ? null
        : (parseRecordMessage(text.slice(cut + 2).replace(/\n$/, '')) as {
            kept?: { parent?: unknown; folders?: unknown };
          } | null);
    const folders = Array.isArray(body?.kept?.folders)
      ? body.kept.folders.filter((f): f is string => typeof f === 'string')
      : [];
    return { kept: keptParent(parents.join(' '), body?.kept?.parent), folders };
  });
}

/** A kept file a command removed or overwrote, and what it left (its blob; null: removed). */
export interface KeptChange {
  path: string;
  left: string | null;
}

/**
 * What each command did to the files its checkpoint before kept: each pair is the kept side of
 * the checkpoints before and after it (after null: it kept nothing then). A file removed, or
 * overwritten outside a wholly ignored folder (build output changes with every build: not
 * reported by the after event either, flows/hook/shell-coverage.ts); never one added. One
 * diff-tree per pair whose sides differ.
 */
export async function keptChangesOfPairs(
  cwd: string,
  pairs: ReadonlyArray<{ before: KeptOf; after: string | null }>,
): Promise<KeptChange[][]> {
  return Promise.all(
    pairs.map(async ({ before, after }) => {
      if (!before.kept || before.kept === after) return [];
      const r = await git(['diff-tree', ...RAW, before.kept, after ?? emptyTree(before.kept)], {
        cwd,
      });
      const inFolder = (p: string) => before.folders.some((f) => p.startsWith(f));
      return rawWithNow(r.stdout).flatMap((e) =>
        e.letter === 'D'
          ? [{ path: e.path, left: null }]
          : // T: a file swapped for a link (adv10: neither told nor put back)
            (e.letter === 'M' || e.letter === 'T') && !inFolder(e.path)
            ? [{ path: e.path, left: e.nowOid }]
            : [],
      );
    }),
  );
}

/** parseRaw's entries with the other side's blob id (null: absent there). */
function rawWithNow(buf: Buffer): Array<RawEntry & { nowOid: string | null }> {
  const nows = splitZ(buf)
    .filter((_, i) => i % 2 === 0)
    .map((h) => h.slice(1).split(' ')[3] ?? '');
  return parseRaw(buf).map((e, i) => ({
    ...e,
    nowOid: /^0+$/.test(nows[i] ?? '') ? null : (nows[i] ?? null),
  }));
}

/** Kept files to put back as one kept commit holds them: `left` is what the session's last command left of each. */
export interface KeptGroup {
  commit: string;
  paths: string[];
  /** Per path, what the session's last command left there (ANY_LEFT: whatever is there now). */
  left: ReadonlyMap<string, string | null>;
}
/** A kept file the session wrote after its command took it: put back over whatever is there (adv11). */
export const ANY_LEFT = '*';

/**
 * The kept files (ignored, or in a nested repository) to write back, against the undo checkpoint's
 * kept side: one gone now (and not on disk: the undo could not keep it, over its budget), or
 * holding what the session's command left; one changed since by someone else is left as it is,
 * with why. Never a removal: a file guard did not keep is not guard's. One diff-tree per group and
 * one cat-file for every blob.
 */
export async function planKeptBack(
  repo: Repo,
  now: Pick<Checkpoint, 'kept'>,
  groups: readonly KeptGroup[],
  removing: ReadonlySet<string> = new Set(),
): Promise<{
  toWrite: RawEntry[];
  blobs: CatResult[];
  left: Array<{ path: string; why: string }>;
}> {
  const cwd = repo.root;
  const diffs = await Promise.all(
    groups.map((g) =>
      git(
        [
          'diff-tree',
          ...RAW,
          g.commit,
          now.kept ?? emptyTree(g.commit),
          '--',
          ...g.paths.map(literal),
        ],
        {
          cwd,
        },
      ).then((r) => ({ g, entries: rawWithNow(r.stdout) })),
    ),
  );
  const toWrite: RawEntry[] = [];
  const left: Array<{ path: string; why: string }> = [];
  for (const { g, entries } of diffs)
    for (const e of entries) {
      if (e.letter === 'A') continue;
      const why = await keptInTheWay(cwd, e, g.left.get(e.path), removing);
      if (why) left.push({ path: e.path, why });
      else toWrite.push(e);
    }
  const blobs = await blobsOrFail(cwd, toWrite, "the session's checkpoint");
  return { toWrite, blobs, left };
}

/** Why a kept file is not written back (null: it is): changed since, or something else stands there. */
async function keptInTheWay(
  root: string,
  e: RawEntry & { nowOid: string | null },
  left: string | null | undefined,
  removing: ReadonlySet<string>,
): Promise<string | null> {
  const parts = e.path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    // a file the rewind removes first (a link the command made where the folder was: adv10)
    if (removing.has(dir)) break;
    const st = await lstat(path.join(root, dir)).catch(() => null);
    if (st === null) break;
    if (!st.isDirectory()) return `${dir} is a file now, where its folder was`;
  }
  if (e.letter === 'D' && (await lstat(path.join(root, e.path)).catch(() => null)))
    return 'something stands there now that guard could not keep';
  if (e.letter !== 'D' && left !== ANY_LEFT && left !== e.nowOid)
    return "changed since the session's command";
  return null;
}
