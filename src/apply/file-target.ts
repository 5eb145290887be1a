import { GuardError } from '../core/errors.js';
import { MODE } from '../core/modes.js';
import type { CheckpointOptions } from '../git/checkpoint.js';
import { faultPoint } from '../runtime/faults.js';
import type { OnDisk, StagedWrite } from '../worktree/atomic.js';
import type { ApplyPlan, ApplyLockOptions, Steps, Taken } from './steps.js';

/** write: one file, replaced by a prepared temp file. */
export interface FileTarget {
  kind: 'file';
  checkpoint: CheckpointOptions;
  lock: ApplyLockOptions;
  /** Said on stderr: a stale lock of a killed guard was taken over. */
  warnings: string[];
  /** The prepared result (worktree/atomic stageWrite), renamed over the file. */
  staged: StagedWrite;
  /** What was judged: the file must still be it under the lock, else E_CHANGED and nothing is written or recorded. */
  judged: { abs: string; rel: string; old: OnDisk | null; content: Buffer | null };
  /** The session's first touch of the path: recorded with the checkpoint, so later writes are measured against it. */
  session?: Array<{ id: string; path: string; worktree: string; outcome: string; store?: string }>;
}

/**
 * The records go with the checkpoint, after the file was verified under its
 * lock (another writer may have changed it): a write refused as stale
 * records nothing.
 */
export const fileSteps: Steps<FileTarget, undefined> = {
  recordsFirst: false,
  changes: () => true,
  lock: (t) => ({ opts: t.lock, warnings: t.warnings }),
  verify: (t) => sameOnDisk(t.judged),
  checkpoint: (p, t) => checkpointFile(p, t),
  write: async (_p, t) => {
    const { commitWrite } = await import('../worktree/atomic.js');
    faultPoint('write:before-rename');
    await commitWrite(t.staged);
    faultPoint('write:after-rename');
    return undefined;
  },
};

/** The file on disk is still what was judged; another writer got there first otherwise. */
async function sameOnDisk({ abs, rel, old, content }: FileTarget['judged']): Promise<void> {
  const [{ readFile, readlink }, { statOnDisk }] = await Promise.all([
    import('node:fs/promises'),
    import('../worktree/atomic.js'),
  ]);
  const now = await statOnDisk(abs);
  let same = now === null ? old === null : old !== null && now.mode === old.mode;
  if (same && now !== null) {
    const onDisk =
      now.mode === MODE.symlink
        ? Buffer.from(await readlink(abs, { encoding: 'buffer' }))
        : await readFile(abs);
    same = content !== null && onDisk.equals(content);
  }
  if (!same)
    throw new GuardError(
      'E_CHANGED',
      `${rel} changed on disk while guard was judging the write (another writer?)`,
      'nothing was written; run the command again to judge the new content',
    );
}

/** The file's checkpoint, with the records and the session's first touch (it names the checkpoint) in its one fast-import. */
async function checkpointFile(p: ApplyPlan<FileTarget>, t: FileTarget): Promise<Taken> {
  const [{ checkpoint }, { sessionEvent }] = await Promise.all([
    import('../git/checkpoint.js'),
    import('../git/session-base.js'),
  ]);
  const s = t.session;
  const first = (cp: Taken) =>
    (s ?? []).map((e) =>
      sessionEvent(
        cp.commit,
        {
          session: e.id,
          checkpoint: cp.id,
          path: e.path,
          worktree: e.worktree,
          outcome: e.outcome,
          ...(e.store ? { store: e.store } : {}),
        },
        p.now,
      ),
    );
  return checkpoint(p.repo, { ...t.checkpoint, records: (cp) => [...first(cp), ...p.records] });
}
