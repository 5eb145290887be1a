import { checkpoint, type Checkpoint } from '../git/checkpoint.js';
import { faultPoint } from '../runtime/faults.js';
import type { RestoreChange } from '../git/restore.js';
import { planKeptBack, planPutBack, type KeptGroup, type PutBackGroup } from '../git/rewind.js';
import { removeFile, writeFileAtomic } from '../worktree/atomic.js';
import { sortByPath } from './restore-target.js';
import type { ApplyLockOptions, Steps } from './steps.js';

/** rewind: every path a session wrote, put back as it was before the session first wrote it. */
export interface RewindTarget {
  kind: 'rewind';
  lock: ApplyLockOptions;
  /** Said on stderr: a stale lock of a killed guard was taken over. */
  warnings: string[];
  session: string;
  lane: string | null;
  /**
   * Which paths go back to which commit's tree, read against the undo
   * checkpoint (a shell call with no after-event is compared with the tree
   * as it is now). Reads only.
   */
  groups(undo: Checkpoint): Promise<{ groups: PutBackGroup[]; kept?: KeptGroup[]; paths: number }>;
}

export interface RewindDone {
  changes: RestoreChange[];
  /** How many paths the groups named (those that already held their earlier content are not in `changes`). */
  paths: number;
}

/**
 * Under the tree lock: the undo checkpoint (`guard restore UNDO` undoes the
 * rewind), then only what differs written or removed, atomically, never
 * through a link, never a folder.
 */
export const rewindSteps: Steps<RewindTarget, RewindDone, Checkpoint> = {
  recordsFirst: true,
  changes: () => true,
  lock: (t) => ({ opts: t.lock, warnings: t.warnings }),
  checkpoint: (p, t) =>
    checkpoint(p.repo, {
      reason: `before guard rewind ${t.session}`,
      command: 'rewind',
      lane: t.lane,
    }),
  write: async (p, t, undo) => {
    const { groups, kept, paths } = await t.groups(undo!);
    const plan = await planPutBack(p.repo, undo!, groups);
    // the ignored files (and nested repositories' files) its commands took: written back only,
    // past what the rewind removes first
    const removing = new Set(plan.toRemove.map((e) => e.path));
    const keptPlan = await planKeptBack(p.repo, undo!, kept ?? [], removing);
    for (const left of keptPlan.left)
      t.warnings.push(
        `${left.path} (kept outside git's tree): ${left.why}: left as it is; guard log --session ${t.session} lists the checkpoints that hold it`,
      );
    plan.toWrite.push(...keptPlan.toWrite);
    plan.blobs.push(...keptPlan.blobs);
    const cwd = p.repo.root;
    const changes: RestoreChange[] = [];
    for (const e of plan.toRemove) {
      if (await removeFile(cwd, e.path)) changes.push({ path: e.path, action: 'removed' });
      faultPoint('rewind:between-files');
    }
    for (const [i, e] of plan.toWrite.entries()) {
      // past the undo checkpoint a file that cannot be written (a file where its folder was) is
      // said and the rest still put back, as restore does (holes7: it failed the rewind half way)
      try {
        await writeFileAtomic(cwd, e.path, plan.blobs[i]!.data!, e.mode);
        changes.push({ path: e.path, action: e.letter === 'D' ? 'recreated' : 'rewritten' });
      } catch (err) {
        t.warnings.push(
          `${e.path}: not put back: ${err instanceof Error ? err.message : String(err)}; guard restore ${undo!.id} undoes this rewind`,
        );
      }
      faultPoint('rewind:between-files');
    }
    return { changes: sortByPath(changes), paths };
  },
};
