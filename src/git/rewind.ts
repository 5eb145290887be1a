import { GuardError } from '../core/errors.js';
import { MODE } from '../core/modes.js';
import { removeFile, writeFileAtomic } from '../worktree/atomic.js';
import { catFileBatch } from './catfile.js';
import { literal, type Checkpoint } from './checkpoint.js';
import { faultPoint } from './faults.js';
import { RAW, parseRaw, type RestoreChange } from './restore.js';
import type { Repo } from './repo.js';
import { git } from './run.js';

/** Paths to put back as they are in one commit's tree (a session event's checkpoint). */
export interface PutBackGroup {
  commit: string;
  paths: string[];
}

/**
 * Put each group's paths back as they are in its commit, comparing with
 * `now` (the checkpoint just taken of the work tree): only what differs is
 * written or removed, atomically, never through a link, never a folder.
 * One diff-tree per group and one cat-file for every blob. Paths are
 * disjoint across groups (the caller picks, per path, the earliest state).
 */
export async function putBack(repo: Repo, now: Checkpoint, groups: readonly PutBackGroup[]): Promise<RestoreChange[]> {
  const cwd = repo.root;
  const diffs = await Promise.all(
    groups.filter((g) => g.paths.length > 0).map((g) => git(['diff-tree', ...RAW, g.commit, now.commit, '--', ...g.paths.map(literal)], { cwd }).then((r) => parseRaw(r.stdout))),
  );
  const entries = diffs.flat().filter((e) => e.mode !== MODE.gitlink && e.nowMode !== MODE.gitlink);
  const toWrite = entries.filter((e) => e.letter !== 'A');
  const toRemove = entries.filter((e) => e.letter === 'A');
  const blobs = await catFileBatch(cwd, toWrite.map((e) => e.oid), Number.MAX_SAFE_INTEGER);
  const changes: RestoreChange[] = [];
  for (const e of toRemove) {
    if (await removeFile(cwd, e.path)) changes.push({ path: e.path, action: 'removed' });
    faultPoint('rewind:between-files');
  }
  for (const [i, e] of toWrite.entries()) {
    const blob = blobs[i];
    if (!blob?.data) throw new GuardError('E_GIT', `the session's checkpoint lacks the content of ${e.path}`, 'the object store may be damaged: git fsck');
    await writeFileAtomic(cwd, e.path, blob.data, e.mode);
    changes.push({ path: e.path, action: e.letter === 'D' ? 'recreated' : 'rewritten' });
    faultPoint('rewind:between-files');
  }
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return changes;
}

/**
 * The paths that differ between two commits' trees, for each pair, with one
 * process per pair. `existing`: only paths the first tree holds (modified,
 * deleted, type changed), never one added since.
 */
export async function changedPaths(cwd: string, pairs: ReadonlyArray<[string, string] | [string, string, 'existing']>): Promise<string[][]> {
  return Promise.all(
    pairs.map(([a, b, only]) =>
      // --diff-filter=MDT: a file added after the first tree may be a person's, not the session's
      git(['diff-tree', '-r', '-z', '--name-only', '--no-renames', ...(only ? ['--diff-filter=MDT'] : []), a, b], { cwd }).then((r) => r.stdout.toString('utf8').split('\0').filter(Boolean)),
    ),
  );
}
