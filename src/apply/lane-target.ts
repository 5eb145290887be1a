import { checkpoint, ignoredPaths, type Checkpoint } from '../git/checkpoint.js';
import { faultPoint } from '../runtime/faults.js';
import {
  branchTip,
  checkpointCommit,
  createLane,
  ensureExcluded,
  laneRepo,
  removeLaneParts,
  type Lane,
} from '../git/lanes.js';
import { keepNested, nestedRepos, type KeptNested } from '../git/nested.js';
import type { Repo } from '../git/repo.js';
import type { Steps } from './steps.js';

/** guard start: a lane's branch, base ref and work tree, after `.guard/` is excluded (the main tree's `git status` never shows it). */
export interface LaneStartTarget {
  kind: 'lane-start';
  name: string;
  base: string;
}

/**
 * guard discard (and a lane made for a `guard run` whose command never
 * started): the worktree, the branch and the base ref removed, after the
 * lane's last state is checkpointed (`keep`; a lane made just now holds
 * nothing to keep).
 */
export interface LaneDiscardTarget {
  kind: 'lane-discard';
  lane: Lane;
  keep: boolean;
}

export const laneStartSteps: Steps<LaneStartTarget, { lane: Lane; hooks: string | null }> = {
  recordsFirst: true,
  changes: () => true,
  write: async (p, t) => {
    await ensureExcluded(p.repo);
    return createLane(p.repo, t.name, t.base);
  },
};

export interface LaneDiscardDone {
  /** Files and folders git ignores in the lane: not kept. */
  notKept: string[];
  /** Repositories inside the lane, each kept as a checkpoint of its own. */
  nested: KeptNested[];
}

/**
 * The lane's work tree checkpointed (commits, uncommitted and untracked
 * files), a submodule or clone inside it kept as its own, or, for a lane
 * whose folder is gone, its branch tip; only then is anything removed.
 */
/** The lane's work tree, opened once per discard (one rev-parse). */
const laneRepos = new WeakMap<LaneDiscardTarget, Promise<Repo>>();
function laneRepoOf(t: LaneDiscardTarget): Promise<Repo> {
  let r = laneRepos.get(t);
  if (!r) laneRepos.set(t, (r = laneRepo(t.lane)));
  return r;
}

export const laneDiscardSteps: Steps<LaneDiscardTarget, LaneDiscardDone, Checkpoint> = {
  recordsFirst: true,
  changes: () => true,
  checkpoint: async (p, t) => {
    const { lane } = t;
    if (!t.keep) return null;
    const why = { command: 'discard', lane: lane.name };
    if (!lane.broken)
      return checkpoint(await laneRepoOf(t), {
        reason: `before guard discard ${lane.name}`,
        ...why,
      });
    const tip = await branchTip(p.repo.root, lane.branch);
    return tip
      ? checkpointCommit(p.repo, tip, {
          reason: `before guard discard ${lane.name} (work tree was missing: branch tip kept)`,
          ...why,
          worktree: lane.path,
        })
      : null;
  },
  write: async (p, t, taken) => {
    const { lane } = t;
    const done: LaneDiscardDone = { notKept: [], nested: [] };
    if (t.keep && !lane.broken && taken) {
      const repo = await laneRepoOf(t);
      // what a checkpoint never holds, named so that nobody is surprised it is gone
      done.notKept = notKeptOrder(await ignoredPaths(repo.root));
      // A submodule or a clone inside the lane is only a gitlink in that checkpoint: keep its own state too, or refuse.
      const inTree = await nestedRepos(repo.root, taken.tree);
      // an untracked clone is left out of the checkpoint (skipped as a repository), a submodule is a gitlink in it
      const skippedRepos = taken.skipped
        .filter((k) => k.reason === 'repository')
        .map((k) => k.path.replace(/\/$/, ''));
      done.nested = await keepNested(repo, [...new Set([...inTree, ...skippedRepos])], {
        reason: `before guard discard ${lane.name}`,
        command: 'discard',
        lane: lane.name,
      });
      faultPoint('discard:after-checkpoint');
    }
    if (t.keep) faultPoint('discard:before-remove');
    await removeLaneParts(p.repo, lane);
    return done;
  },
};

/**
 * The ignored paths a discard names as lost, real ones first: guard's own
 * `.guard/` and what husky regenerates at install (`.husky/_/`, listed file by
 * file since its own .gitignore ignores `*`) are left out; files (`.env`,
 * local config) come before folders (`node_modules/`, build output).
 */
export function notKeptOrder(ignored: readonly string[]): string[] {
  const generated = (p: string) =>
    p === '.guard/' || p.startsWith('.guard/') || p === '.husky/_/' || p.startsWith('.husky/_/');
  const real = ignored.filter((p) => !generated(p));
  return [...real.filter((p) => !p.endsWith('/')), ...real.filter((p) => p.endsWith('/'))];
}
