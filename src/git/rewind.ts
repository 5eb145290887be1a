import { MODE } from '../core/modes.js';
import type { CatResult } from './catfile.js';
import { literal, type Checkpoint } from './checkpoint.js';
import { RAW, blobsOrFail, parseRaw, type RawEntry } from './restore.js';
import type { Repo } from './repo.js';
import { git } from './run.js';

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
