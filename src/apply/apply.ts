import type { Checkpoint, CheckpointOptions } from '../git/checkpoint.js';
import type { Lane } from '../git/lanes.js';
import type { RecordCommit } from '../git/records.js';
import type { Repo } from '../git/repo.js';
import { faultPoint } from '../runtime/faults.js';
import { packWhenLoose, writeRecords } from '../git/records.js';
import type { FeedbackTarget } from './feedback-target.js';
import type { FileTarget } from './file-target.js';
import type { FileOp, FilesTarget } from './files-target.js';
import type { IndexTarget } from './index-target.js';
import type { LaneDiscardDone, LaneDiscardTarget, LaneStartTarget } from './lane-target.js';
import type { PathsTarget } from './paths-target.js';
import type { PruneTarget } from './prune-target.js';
import type { RefsTarget } from './refs-target.js';
import type { TipsTarget } from './tips-target.js';
import type { RestoreDone, RestoreTarget } from './restore-target.js';
import type { RewindDone, RewindTarget } from './rewind-target.js';
import type { ApplyGate, ApplyPlan, Steps, Taken } from './steps.js';
import type { TreeDone, TreeTarget } from './tree-target.js';
import type { WorktreeTarget } from './worktree-target.js';

export type { ApplyPlan, ApplyLockOptions, Taken } from './steps.js';
export type { FeedbackTarget } from './feedback-target.js';
export type { FileTarget } from './file-target.js';
export type { FileOp, FilesTarget } from './files-target.js';
export type { IndexTarget, IndexWrite } from './index-target.js';
export type { LaneDiscardTarget, LaneStartTarget } from './lane-target.js';
export type { PathsTarget } from './paths-target.js';
export type { PruneTarget } from './prune-target.js';
export type { RefsTarget } from './refs-target.js';
export type { TipsTarget } from './tips-target.js';
export type { RestoreTarget } from './restore-target.js';
export type { RewindTarget } from './rewind-target.js';
export type { TreeDone, TreeFile, TreeTarget } from './tree-target.js';
export type { WorktreeTarget } from './worktree-target.js';

/**
 * Apply: the one place where guard passes the point of no return and
 * writes: the records and refs, checkpoints, the index, the work tree. A
 * flow reads, plans (core/plan), then hands apply a typed target built from
 * what it read; apply runs the same steps for every target, in one order,
 * so that nothing is ever lost whichever step guard dies at:
 *
 *   1. the point of no return: the deadline is checked a last time and
 *      disarmed (from here on guard finishes what it writes);
 *   2. the plan's records (rejected refs, decision records), before the
 *      target is touched, so nothing a later step drops is lost; or, for
 *      the targets that checkpoint first, in the checkpoint's fast-import;
 *   3. when there is something to change: the tree lock, a last check that
 *      the target is still what was judged, the checkpoint, the write;
 *   4. unlocked: what the write leaves to record, and git's own packing.
 *
 * What each step is for a target is in the target's file (the table
 * below): `index` (check), `file` (write), `tree` and `feedback` (review),
 * `paths` and `worktree` (the hook's write and shell calls, lanes, run),
 * `restore`, `rewind`, `prune` (log --prune), `lane-start` and
 * `lane-discard`, `tips` (the branch gate's verified tips), `files`
 * (setup: the hooks and settings guard installs), `refs` (guard recover).
 * The fault points (runtime/faults.ts,
 * docs/reliability/faults.md) of each gate are named here, at the steps
 * where they always were.
 */
interface Kinds {
  index: { target: IndexTarget; done: undefined; taken: Taken };
  file: { target: FileTarget; done: undefined; taken: Taken };
  tree: { target: TreeTarget; done: TreeDone; taken: Taken };
  paths: { target: PathsTarget; done: undefined; taken: Taken };
  worktree: { target: WorktreeTarget; done: undefined; taken: Checkpoint };
  restore: { target: RestoreTarget; done: RestoreDone; taken: Checkpoint };
  rewind: { target: RewindTarget; done: RewindDone; taken: Checkpoint };
  feedback: { target: FeedbackTarget; done: { written: boolean }; taken: Taken };
  prune: { target: PruneTarget; done: undefined; taken: Taken };
  'lane-start': {
    target: LaneStartTarget;
    done: { lane: Lane; hooks: string | null };
    taken: Taken;
  };
  'lane-discard': { target: LaneDiscardTarget; done: LaneDiscardDone; taken: Checkpoint };
  tips: { target: TipsTarget; done: { adopted: string[] }; taken: Taken };
  files: { target: FilesTarget; done: undefined; taken: Taken };
  refs: { target: RefsTarget; done: undefined; taken: Taken };
}

export type Target = Kinds[keyof Kinds]['target'];
type KindOf<T> = T extends { kind: infer K extends keyof Kinds } ? K : never;

/**
 * Each target's steps load with it, when a call needs it: guard runs on
 * every tool call, and a hook's write should not compile review's merge
 * (scripts/bundle.mjs keeps each in its own chunk).
 */
type StepsOf<K extends keyof Kinds> = Steps<
  Kinds[K]['target'],
  Kinds[K]['done'],
  Kinds[K]['taken']
>;
const STEPS: { [K in keyof Kinds]: () => Promise<StepsOf<K>> } = {
  index: async () => (await import('./index-target.js')).indexSteps,
  file: async () => (await import('./file-target.js')).fileSteps,
  tree: async () => (await import('./tree-target.js')).treeSteps,
  paths: async () => (await import('./paths-target.js')).pathsSteps,
  worktree: async () => (await import('./worktree-target.js')).worktreeSteps,
  restore: async () => (await import('./restore-target.js')).restoreSteps,
  rewind: async () => (await import('./rewind-target.js')).rewindSteps,
  feedback: async () => (await import('./feedback-target.js')).feedbackSteps,
  prune: async () => (await import('./prune-target.js')).pruneSteps,
  'lane-start': async () => (await import('./lane-target.js')).laneStartSteps,
  'lane-discard': async () => (await import('./lane-target.js')).laneDiscardSteps,
  tips: async () => (await import('./tips-target.js')).tipsSteps,
  files: async () => (await import('./files-target.js')).filesSteps,
  refs: async () => (await import('./refs-target.js')).refsSteps,
};

type Step = 'beforeRecords' | 'afterRecords' | 'afterLock' | 'afterCheckpoint';
const FAULTS: Partial<Record<ApplyGate, Partial<Record<Step, string>>>> = {
  check: {
    beforeRecords: 'check:before-records',
    afterRecords: 'check:after-records',
    afterCheckpoint: 'check:before-unstage',
  },
  write: { afterCheckpoint: 'write:after-checkpoint' },
  review: {
    afterRecords: 'review:after-refs',
    afterLock: 'review:after-lock',
    afterCheckpoint: 'review:after-checkpoint',
  },
};

export interface ApplyResult<T> {
  /** The checkpoint taken before the write (null: nothing was written but records). */
  checkpoint: KindOf<T> extends never ? null : Kinds[KindOf<T>]['taken'] | null;
  /** What the target became (undefined for a plan with no target). */
  done: KindOf<T> extends never ? undefined : Kinds[KindOf<T>]['done'];
}

export async function apply<T extends Target>(p: ApplyPlan<T>): Promise<ApplyResult<T>> {
  p.deadline?.pointOfNoReturn(); // past this point guard writes: finish, never stop half way
  const t = p.target;
  const faults = FAULTS[p.gate] ?? {};
  const s = (t ? await STEPS[t.kind]() : null) as Steps<T, unknown, Taken> | null;
  if (!s || s.recordsFirst) {
    fault(faults.beforeRecords);
    if (p.records.length > 0) await writeRecords(p.repo.root, p.records, p.now);
    fault(faults.afterRecords);
  }
  const out = (checkpoint: Taken | null, done: unknown) => ({ checkpoint, done }) as ApplyResult<T>;
  if (!t || !s) return pack(p, out(null, undefined));
  if (!s.changes(t)) return pack(p, out(null, await s.nothing?.(p, t)));
  const lockWith = s.lock?.(t) ?? null;
  const lock = lockWith ? await lockFor(p, lockWith, faults.afterLock) : null;
  let taken: Taken | null = null;
  let done: unknown;
  try {
    await s.verify?.(t);
    taken = (await s.checkpoint?.(p, t)) ?? null;
    fault(faults.afterCheckpoint);
    done = await s.write?.(p, t, taken);
  } finally {
    await lock?.release();
  }
  await s.after?.(p, t, taken, done);
  return pack(p, out(taken, done));
}

function fault(name: string | undefined): void {
  if (name) faultPoint(name);
}

async function pack<R>(p: ApplyPlan<unknown>, r: R): Promise<R> {
  if (p.pack) await packWhenLoose(p.repo.commonDir, p.repo.root);
  return r;
}

async function lockFor(
  p: ApplyPlan<unknown>,
  w: { opts: { holder: string; waitMs?: number }; warnings: string[] },
  afterLock: string | undefined,
): Promise<{ release(): Promise<void> }> {
  const { lockTree, staleLockNotice } = await import('../worktree/lock.js');
  const lock = await lockTree(
    p.repo,
    w.opts.holder,
    w.opts.waitMs !== undefined ? { waitMs: w.opts.waitMs } : {},
  );
  const stale = staleLockNotice(lock);
  if (stale) w.warnings.push(stale);
  fault(afterLock);
  return lock;
}

/** The worktree target alone: a whole-tree checkpoint of `repo` (and the records it names, in its fast-import). */
export async function takeCheckpoint(
  gate: ApplyGate,
  repo: Repo,
  checkpoint: CheckpointOptions,
  pack = false,
): Promise<Checkpoint> {
  const { checkpoint: taken } = await apply({
    gate,
    repo,
    now: checkpoint.now ?? new Date(),
    records: [],
    target: { kind: 'worktree', checkpoint },
    pack,
  });
  return taken!;
}

export interface RecordOptions {
  now: Date;
  pack?: boolean;
}

/** Records alone (session steps, decision records, rejected refs): one fast-import. */
export async function record(
  gate: ApplyGate,
  repo: Repo,
  records: RecordCommit[],
  { now, pack = false }: RecordOptions,
): Promise<void> {
  await apply({ gate, repo, now, records, target: null, pack });
}

/**
 * The files target alone: setup (guard init, a harness's settings) writes
 * no records and takes no checkpoint, and may run outside any repository
 * (the global route's hooks folder).
 */
export async function installFiles(ops: FileOp[]): Promise<void> {
  const { writeOps } = await import('./files-target.js');
  await writeOps(ops);
}
