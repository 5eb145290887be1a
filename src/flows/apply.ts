import type { Deadline } from '../git/deadline.js';
import type { CheckpointOptions } from '../git/checkpoint.js';
import { faultPoint } from '../git/faults.js';
import type { Repo } from '../git/repo.js';

/**
 * Apply: the one place where check, write and review pass the point of no
 * return and change something. A gate reads, plans (core/plan), then hands
 * apply what its plan asks for; apply does it in one order, so that nothing
 * is ever lost whichever step guard dies at:
 *
 *   1. the point of no return: the deadline is checked a last time and
 *      disarmed (from here on guard finishes what it writes);
 *   2. `keep`: the rejected refs and records, before the target is touched,
 *      so nothing a later step drops is lost. When the target must first be
 *      verified under its lock (`target.verify`: write's file may have been
 *      changed by another writer), they are written after the verification,
 *      beside the checkpoint: a write refused as stale records nothing;
 *   3. `target`: lock it (where asked), checkpoint it, then write, stage or
 *      merge (`target.write`, given the checkpoint);
 *   4. `after`: what comes once the target holds the result (late refs, the
 *      decision record, the agent's feedback, a commit).
 *
 * Fault points (git/faults.ts) are named by the gate and stay where they were.
 */
export interface ApplySteps<T> {
  deadline?: Deadline | undefined;
  /** The rejected refs and records that nothing later may lose. */
  keep?: () => Promise<void>;
  /** The work tree or index to change; null or absent: nothing to write. */
  target?: ApplyTarget | null;
  /** After the target holds the result: what the gate reports. */
  after: (checkpoint: Taken | null) => Promise<T>;
}

export interface Taken {
  id: string;
  commit: string;
}

export interface ApplyTarget {
  repo: Repo;
  /** Hold the tree lock while checkpointing and writing; absent: no lock (check's index). */
  lock?: { holder: string; waitMs?: number; warnings: string[]; fault?: string };
  /** Under the lock, before anything is written: throw if the target is no longer what was judged. */
  verify?: () => Promise<void>;
  checkpoint: CheckpointOptions;
  /** The fault point right after the checkpoint, if the gate names one. */
  afterCheckpoint?: string;
  /** Write, stage or merge the result. */
  write: (checkpoint: Taken) => Promise<void>;
}

export async function apply<T>(steps: ApplySteps<T>): Promise<T> {
  steps.deadline?.pointOfNoReturn(); // past this point guard writes: finish, never stop half way
  const target = steps.target ?? null;
  if (steps.keep && !target?.verify) await steps.keep();
  const taken = target ? await applyTarget(target, target.verify ? steps.keep : undefined) : null;
  return steps.after(taken);
}

async function applyTarget(t: ApplyTarget, keep: (() => Promise<void>) | undefined): Promise<Taken> {
  const lock = t.lock ? await lockFor(t) : null;
  try {
    await t.verify?.();
    const { checkpoint } = await import('../git/checkpoint.js');
    const [taken] = await Promise.all([checkpoint(t.repo, t.checkpoint), keep?.()]);
    if (t.afterCheckpoint) faultPoint(t.afterCheckpoint);
    await t.write(taken);
    return taken;
  } finally {
    await lock?.release();
  }
}

async function lockFor(t: ApplyTarget): Promise<{ release(): Promise<void> }> {
  const { lockTree, staleLockNotice } = await import('../worktree/lock.js');
  const opts = t.lock!;
  const lock = await lockTree(t.repo, opts.holder, opts.waitMs !== undefined ? { waitMs: opts.waitMs } : {});
  const stale = staleLockNotice(lock);
  if (stale) opts.warnings.push(stale);
  if (opts.fault) faultPoint(opts.fault);
  return lock;
}
