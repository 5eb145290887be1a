import { checkpoint, type Checkpoint, type CheckpointOptions } from '../git/checkpoint.js';
import type { Steps } from './steps.js';

/**
 * A whole work tree checkpointed (before and after an agent's shell
 * command, a lane before it is discarded or run in), with the plan's
 * records and any the checkpoint names (a session step) in its one
 * fast-import. Nothing else is written: the command itself is the harness's.
 */
export interface WorktreeTarget {
  kind: 'worktree';
  checkpoint: CheckpointOptions;
}

export const worktreeSteps: Steps<WorktreeTarget, undefined, Checkpoint> = {
  recordsFirst: false,
  changes: () => true,
  checkpoint: (p, t) =>
    checkpoint(p.repo, {
      ...t.checkpoint,
      records: (cp) => [...(t.checkpoint.records?.(cp) ?? []), ...p.records],
    }),
};
