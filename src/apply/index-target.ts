import type { CheckpointOptions } from '../git/checkpoint.js';
import type { DiffEntry } from '../git/diff.js';
import type { Steps } from './steps.js';
import { blobId } from '../git/blob-id.js';

/** check: the index, which holds what was staged. */
export interface IndexTarget {
  kind: 'index';
  checkpoint: CheckpointOptions;
  /** Staged changes a person refused: put back as HEAD has them (the work tree keeps them). */
  unstage: DiffEntry[];
  /** Results staged as blobs (a strategy, some hunks). */
  stage: IndexWrite[];
}

export interface IndexWrite {
  path: string;
  mode: string;
  content: Buffer;
  /** Also write the result to the work tree, but only while it still holds this blob (what was staged); null: the index only. */
  worktreeIfHolds: string | null;
}

export const indexSteps: Steps<IndexTarget, undefined> = {
  recordsFirst: true,
  changes: (t) => t.unstage.length > 0 || t.stage.length > 0,
  // the index has its own lock (git's index.lock): no tree lock
  checkpoint: async (p, t) =>
    (await import('../git/checkpoint.js')).checkpoint(p.repo, t.checkpoint),
  write: async (p, t) => writeIndex(p.repo.root, t),
};

/**
 * Unstage what was refused; stage each result as a blob. For a strategy the
 * file on disk is rewritten too, but only when it still holds exactly what
 * was staged, so an edit made after `git add` is never overwritten; for some
 * hunks the work tree keeps the whole change (as with `git add -p`).
 */
async function writeIndex(cwd: string, t: IndexTarget): Promise<undefined> {
  const { stageBlobs, unstagePaths, writeBlob } = await import('../git/staging.js');
  if (t.unstage.length > 0) await unstagePaths(cwd, t.unstage);
  if (t.stage.length === 0) return;
  const [{ writeFileAtomic }, { readCurrent }] = await Promise.all([
    import('../worktree/atomic.js'),
    import('../worktree/current.js'),
  ]);
  const index = [];
  for (const s of t.stage) {
    const oid = await writeBlob(cwd, s.content);
    const onDisk = s.worktreeIfHolds === null ? null : await readCurrent(cwd, s.path);
    if (onDisk !== null && blobId(onDisk.content, 'sha1') === s.worktreeIfHolds)
      await writeFileAtomic(cwd, s.path, s.content, s.mode);
    index.push({ mode: s.mode, oid, path: s.path });
  }
  await stageBlobs(cwd, index);
}
