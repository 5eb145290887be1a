import { classify, type Classification } from '../../core/classify.js';
import { withAggregateLoss } from '../../core/aggregate.js';
import { type Config } from '../../core/config.js';
import { GuardError } from '../../core/errors.js';
import { READ_CAP } from '../../git/catfile.js';
import { collectFacts } from '../../git/changes.js';
import type { Checkpoint } from '../../git/checkpoint.js';
import { treeDiff, type DiffEntry } from '../../git/diff.js';
import { laneBase } from '../../git/moves.js';
import {
  branchTip,
  findLane,
  laneRepo,
  listLanes,
  mainRepo,
  resolveCommit,
  validateLaneName,
  type Lane,
} from '../../git/lanes.js';
import type { KeptNested } from '../../git/nested.js';
import type { Repo } from '../../git/repo.js';
import { type FlowOptions } from '../context.js';
import { apply, takeCheckpoint } from '../../apply/apply.js';
import { readPolicy } from '../../git/policy.js';
export { notKeptOrder } from '../../apply/lane-target.js';

export interface StartOptions extends FlowOptions {
  name: string;
  /** Start from this revision (default HEAD of the main tree). */
  from?: string;
}

export interface StartResult {
  name: string;
  path: string;
  branch: string;
  base: string;
  /** The relative core.hooksPath copied into the lane, when one was. */
  hooks: string | null;
}

/**
 * Create lane NAME. `.guard/` is excluded before the worktree appears, so the
 * main tree's `git status` never shows it.
 */
export async function start(opts: StartOptions): Promise<StartResult> {
  validateLaneName(opts.name);
  const main = await mainRepo(opts.cwd);
  const base = await resolveCommit(main.root, opts.from ?? 'HEAD');
  const { done } = await apply({
    gate: 'lanes',
    repo: main,
    now: new Date(),
    records: [],
    target: { kind: 'lane-start', name: opts.name, base },
  });
  const { lane, hooks } = done;
  return { name: lane.name, path: lane.path, branch: lane.branch, base: lane.base, hooks };
}

/** Lane NAME, created from `from` (default HEAD) when it does not exist yet. */
export async function startOrReuse(
  opts: StartOptions,
): Promise<{ main: Repo; lane: Lane; created: boolean }> {
  validateLaneName(opts.name);
  const main = await mainRepo(opts.cwd);
  const existing = (await listLanes(main)).find((l) => l.name === opts.name);
  if (existing) {
    if (existing.broken) {
      throw new GuardError(
        'E_NO_LANE',
        `lane "${existing.name}" is broken: its folder ${existing.path} is missing`,
        `guard discard ${existing.name} cleans it up (its branch is checkpointed first)`,
      );
    }
    return { main, lane: existing, created: false };
  }
  const r = await start(opts);
  return {
    main,
    lane: { name: r.name, path: r.path, branch: r.branch, base: r.base, broken: false },
    created: true,
  };
}

export interface LaneChanges {
  lane: Lane;
  /** The checkpoint whose tree was measured; null for a broken lane (its branch tip is measured). */
  checkpoint: Checkpoint | null;
  /** The commit whose tree was measured against the base. */
  head: string;
  files: Classification[];
  /** The diff entries behind `files`, in the same order (blob ids and modes). */
  entries: DiffEntry[];
  /** The policy committed at the base. */
  config: Config;
  filesChanged: number;
  needsApproval: number;
}

/**
 * What a lane changed since its base (commits and uncommitted work, untracked
 * files too), classified under the policy committed at the base. The lane is
 * checkpointed first, and the checkpoint's tree is what is measured; when
 * nothing changed since the last checkpoint, that one is reused. A constant
 * number of git processes per lane: checkpoint (about six), diff, two cat-file.
 */
export async function laneChanges(
  main: Repo,
  lane: Lane,
  opts: { reason?: string; command?: string } = {},
): Promise<LaneChanges> {
  let cp: Checkpoint | null = null;
  let head: string;
  if (lane.broken) {
    head = (await branchTip(main.root, lane.branch)) ?? lane.base;
  } else {
    const repo = await laneRepo(lane);
    cp = await takeCheckpoint('lanes', repo, {
      reason: opts.reason ?? `guard measured lane ${lane.name}`,
      command: opts.command ?? 'lanes',
      lane: lane.name,
    });
    head = cp.commit;
  }
  // integrity: base = merge-base(lane, main HEAD), policy = main HEAD's config; never refs/guard/lanes/NAME
  const trusted = await laneBase(main.root, head);
  if (trusted) lane = { ...lane, base: trusted.base };
  const policyRev = trusted?.policyRev ?? lane.base;
  const [entries, { config, policy }] = await Promise.all([
    treeDiff(main.root, lane.base, head),
    readPolicy(main.root, policyRev),
  ]);
  const { facts } = await collectFacts(main.root, entries, {
    maxBytes: Math.min(config.maxFileBytes, READ_CAP),
    whitespace: { range: [lane.base, head], changeRatio: config.changeRatio },
  });
  const files = withAggregateLoss(
    facts.map((f) => classify(f, policy)),
    config,
  );
  return {
    lane,
    checkpoint: cp,
    head,
    files,
    entries,
    config,
    filesChanged: files.length,
    needsApproval: files.filter((f) => f.needsApproval).length,
  };
}

export interface LaneSummary {
  name: string;
  path: string;
  branch: string;
  base: string;
  filesChanged: number;
  needsApproval: number;
  broken: boolean;
}

/** Every lane with what it changed; lanes are measured side by side. */
export async function lanes(opts: FlowOptions): Promise<{ root: string; lanes: LaneSummary[] }> {
  const main = await mainRepo(opts.cwd);
  const all = await listLanes(main);
  const measured = await Promise.all(all.map((l) => laneChanges(main, l)));
  return {
    root: main.root,
    lanes: measured.map(({ lane, filesChanged, needsApproval }) => ({
      name: lane.name,
      path: lane.path,
      branch: lane.branch,
      base: lane.base,
      filesChanged,
      needsApproval,
      broken: lane.broken,
    })),
  };
}

export interface DiscardResult {
  name: string;
  path: string;
  branch: string;
  base: string;
  broken: boolean;
  /** The lane's last state; null only when a broken lane had no branch left to keep. */
  checkpoint: { id: string; ref: string; commit: string } | null;
  /** Files and folders git ignores in the lane (node_modules/, .env, build output): not kept. */
  notKept: string[];
  /** Repositories inside the lane (submodules, clones), each kept as a checkpoint of its own. */
  nested: KeptNested[];
}

/**
 * Remove a lane. Its last state (commits, uncommitted and untracked files) is
 * checkpointed first; only then are the worktree, the branch and the base ref
 * removed. Checkpoints and decision records stay.
 */
export async function discard(opts: FlowOptions & { name: string }): Promise<DiscardResult> {
  const main = await mainRepo(opts.cwd);
  const lane = await findLane(main, opts.name);
  const { checkpoint: cp, done } = await apply({
    gate: 'lanes',
    repo: main,
    now: new Date(),
    records: [],
    target: { kind: 'lane-discard', lane, keep: true },
  });
  const { notKept, nested } = done;
  return {
    name: lane.name,
    path: lane.path,
    branch: lane.branch,
    base: lane.base,
    broken: lane.broken,
    checkpoint: cp ? { id: cp.id, ref: cp.ref, commit: cp.commit } : null,
    notKept,
    nested,
  };
}
