import type { RecordCommit } from '../git/records.js';
import type { Deadline } from '../runtime/deadline.js';
import type { Repo } from '../git/repo.js';

/**
 * The types every target of apply shares (apply.ts runs the steps; one file
 * per target says what each step is for it).
 */

/** Who asked: names the fault points and the records' command. */
export type ApplyGate =
  | 'check'
  | 'write'
  | 'review'
  | 'feedback'
  | 'hook'
  | 'restore'
  | 'rewind'
  | 'lanes'
  | 'run'
  | 'ref-gate'
  | 'setup'
  | 'recover'
  | 'log';

export interface ApplyPlan<T = unknown> {
  gate: ApplyGate;
  repo: Repo;
  now: Date;
  deadline?: Deadline | undefined;
  /** The rejected refs and records that nothing later may lose. */
  records: RecordCommit[];
  /** What to change; null: nothing but the records. */
  target: T | null;
  /** Start git's own packing in the background when loose objects pile up (the hook's calls, many a minute). */
  pack?: boolean;
}

/** A checkpoint apply took (or the hook's known-path one): its id and commit. */
export interface Taken {
  id: string;
  commit: string;
}

/** Hold the tree lock while checkpointing and writing (another guard write, review, restore or rewind into the same tree). */
export interface ApplyLockOptions {
  holder: string;
  waitMs?: number;
}

/**
 * One target's steps, in the order apply runs them (apply.ts). Every step
 * is optional but `changes`; what a step returns feeds the next.
 */
export interface Steps<T, D, C extends Taken = Taken> {
  /** The plan's records go before the target is touched (false: the target writes them with its checkpoint). */
  recordsFirst: boolean;
  /** Is there anything to write? Otherwise no lock and no checkpoint; `nothing` says what the target became. */
  changes(t: T): boolean;
  nothing?(p: ApplyPlan<T>, t: T): Promise<D>;
  /** The tree lock to hold from the checkpoint to the end of the write (null: none). */
  lock?(t: T): { opts: ApplyLockOptions; warnings: string[] } | null;
  /** Under the lock, before anything: is the target still what was judged? */
  verify?(t: T): Promise<void>;
  /** What can be put back afterwards (null: the target keeps its own, e.g. the records themselves). */
  checkpoint?(p: ApplyPlan<T>, t: T): Promise<C | null>;
  /** The change itself. */
  write?(p: ApplyPlan<T>, t: T, taken: C | null): Promise<D>;
  /** Once the tree holds the result and is unlocked: the records made late, the commit. */
  after?(p: ApplyPlan<T>, t: T, taken: C | null, done: D): Promise<void>;
}
