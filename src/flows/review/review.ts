import type { Classification } from '../../core/classify.js';
import {
  alreadyThere,
  outcomeWords,
  plan,
  summarize,
  type Answer,
  type FileOutcome,
  type MergeAction,
  type Plan,
  type PlanSummary,
} from '../../core/plan.js';
import { displayName, plural, shellQuote } from '../../core/quote.js';
import type { Decider, Decision } from '../../core/record.js';
import { approvalTrailer } from '../../git/approvals.js';
import type { Prompt } from '../../ui/prompt.js';
import type { FlowOptions } from '../context.js';
import {
  FEEDBACK_FILE,
  applyReview,
  predictConflicts,
  writeFeedback,
  type Applied,
} from './review-apply.js';
import { readReview, scriptedAnswers, type ReviewInput } from './review-read.js';
import { askAboutFiles } from '../ask.js';

export { FEEDBACK_FILE, approvalTrailer };

export interface ReviewOptions extends FlowOptions {
  name?: string;
  auto: boolean;
  all: boolean;
  decisionsFile?: string;
  commit?: boolean;
  message?: string;
  /** Plan only: say what would happen, write nothing (no lock, checkpoint, ref or record). */
  dryRun?: boolean;
}

export interface ReviewedFile extends Classification {
  decision: Decision;
  decider: Decider;
  strategy?: string;
  hunks: Array<{ id: string; index: number; header: string }>;
  /** Ids of the hunks taken, when only some were. */
  taken?: string[];
  /** How many hunks the person saw (after splits), when only some were taken. */
  hunkCount?: number;
  /** What happens (with --dry-run: would happen) to the main tree's file. */
  action: MergeAction;
  /** The same, in words: "taken in part (3 of 5 hunks)", "rejected", "already in the main tree". */
  outcome: string;
  /** The rejected ref: what was refused (`git diff REF^ REF`). */
  ref?: string;
  /** The main tree got (or would get) conflict markers for this file, or could not take it. */
  conflict?: boolean;
  /** Blob id written to the main tree (absent for deletions and untouched files). */
  blob?: string;
  warning?: string;
  /** The main tree already held the lane's version: nothing asked, nothing done. */
  already?: true;
  /** A version guard did not read (a submodule's commit, a file over the read cap): not merged, take it by hand. */
  unread?: true;
  /** For an unread file: the git command that takes the lane's version (a person runs it, having looked). */
  takeByHand?: string;
}

export interface ReviewResult {
  command: 'review';
  lane: string;
  /** The lane's work tree. */
  lanePath: string;
  base: string;
  /** The lane's state that was reviewed. */
  laneCheckpoint: string | null;
  /** The main tree before the merge: `guard restore` it to undo the review. */
  checkpoint: string | null;
  files: ReviewedFile[];
  merged: number;
  blocked: number;
  rejected: number;
  conflicts: number;
  summary: PlanSummary;
  record: string | null;
  feedback: string | null;
  commit?: string;
  /** --commit was asked for and git commit failed (the merge itself stands, staged). */
  commitFailed?: string;
  cancelled?: boolean;
  dryRun?: boolean;
  /** A person was asked at the terminal (what is blocked was left undecided with q). */
  asked?: boolean;
  warnings: string[];
  /**
   * Files of the lane that are not in what was reviewed: left out of the lane's
   * checkpoint (over its size cap, past its time budget, a nested repository).
   * Never merged, never silent: named in the report, and the review exits 1.
   */
  notReviewed: Array<{ path: string; why: string }>;
}

const SKIP_WHY: Record<string, string> = {
  size: "larger than the checkpoint's size cap: guard did not read it",
  time: "the checkpoint's time budget ran out before it: guard did not read it",
  name: 'git refuses the name',
  repository: 'a repository of its own inside the lane (guard reviews its files, not its history)',
};

/** Opens the person's prompt; null when there is no terminal. */
export type Prompter = () => Promise<Prompt | null>;

/**
 * Review a lane against its base and merge what is allowed or approved into
 * the main tree: read (review-read), ask, plan (core/plan), confirm, apply
 * (review-apply). Testable in process: pass a Prompter, or --decisions.
 */
export async function review(opts: ReviewOptions, prompter?: Prompter): Promise<ReviewResult> {
  const input = await readReview(opts.cwd, opts.name);
  const answers = opts.decisionsFile
    ? await scriptedAnswers(opts.decisionsFile, opts.cwd, input)
    : new Map<string, Answer>();
  const pending = input.files.filter(
    (f) =>
      !answers.has(f.c.path) &&
      !alreadyThere('review', f) &&
      (f.c.needsApproval || (opts.all && !opts.decisionsFile)),
  );
  const asking = !opts.auto && !opts.decisionsFile && !opts.dryRun && pending.length > 0;
  const person = asking ? await (prompter ?? defaultPrompter(opts.color, input))() : null;
  try {
    if (person) {
      opts.deadline?.disarm(); // --timeout bounds guard's work, not a person's thinking
      await askAboutFiles(
        person,
        pending.map((f) => ({ f })),
        answers,
      );
    }
    const planned = await plan('review', input.files, answers);
    const predicted = await predictConflicts(input, planned);
    if (opts.dryRun)
      return resultOf(input, planned, {
        done: null,
        conflicts: predicted,
        extra: { dryRun: true },
      });
    if (person && !(await person.confirm(confirmText(planned, predicted), 'Merge now [y,n]? '))) {
      return {
        ...resultOf(input, planned, { done: null, conflicts: new Set(), extra: {} }),
        cancelled: true,
        merged: 0,
        blocked: 0,
        rejected: 0,
        conflicts: 0,
      };
    }
    person?.close();
    const done = await applyLane(opts, input, planned, predicted);
    if (person) done.asked = true;
    return done;
  } finally {
    person?.close();
  }
}

async function applyLane(
  opts: ReviewOptions,
  input: ReviewInput,
  planned: Plan,
  predicted: Set<string>,
): Promise<ReviewResult> {
  // A lane already merged makes nothing: no checkpoint, no ref, no record.
  if (planned.files.length > 0 && planned.files.every((o) => o.already))
    return resultOf(input, planned, { done: null, conflicts: predicted, extra: {} });
  const now = opts.now ?? new Date();
  const commit = opts.commit
    ? { message: opts.message ?? `Merge lane ${input.lane.name} (guard review)` }
    : null;
  return finish(
    input,
    planned,
    await applyReview(input, planned, { now, deadline: opts.deadline, commit }),
    now,
  );
}

/** Past the merge and the commit (review-apply): the report and the agent's feedback. */
async function finish(
  input: ReviewInput,
  planned: Plan,
  done: Applied,
  now: Date,
): Promise<ReviewResult> {
  const result = resultOf(input, planned, { done, conflicts: done.conflicts, extra: {} });
  result.feedback = await writeFeedback(input.main, input.lane, result.files, now);
  if (done.commit !== undefined) result.commit = done.commit;
  if (done.commitFailed !== undefined) result.commitFailed = done.commitFailed;
  if (done.commitWarning !== undefined) result.warnings.push(done.commitWarning);
  return result;
}

interface ResultParts {
  done: Applied | null;
  conflicts: Set<string>;
  extra: { dryRun?: true };
}

/** The one report of a review: files, counts and words all from the plan (and what the apply did). */
function resultOf(
  input: ReviewInput,
  planned: Plan,
  { done, conflicts, extra }: ResultParts,
): ReviewResult {
  const files = planned.files.map((o, i) =>
    reviewedFile({
      c: input.files[i]!.c,
      hunks: input.files[i]!.hunks,
      o,
      done,
      conflicts,
      laneHead: input.lc.head,
    }),
  );
  const { lane, lc } = input;
  return {
    command: 'review',
    lane: lane.name,
    lanePath: lane.path,
    base: lane.base,
    laneCheckpoint: lc.checkpoint?.id ?? null,
    checkpoint: done?.checkpoint ?? null,
    files,
    merged: done?.merged ?? 0,
    blocked: files.filter((f) => f.decision === 'blocked').length,
    rejected: files.filter((f) => f.decision === 'rejected' || f.taken !== undefined).length,
    conflicts: files.filter((f) => f.conflict).length,
    summary: summarize(planned),
    record: done?.record ?? null,
    feedback: null,
    warnings: done?.warnings ?? [],
    notReviewed: (lc.checkpoint?.skipped ?? []).map((k) => ({
      path: k.path,
      why: SKIP_WHY[k.reason] ?? k.reason,
    })),
    ...extra,
  };
}

interface ReviewedFileInput {
  c: Classification;
  hunks: ReviewInput['files'][number]['hunks'];
  o: FileOutcome;
  done: Applied | null;
  conflicts: Set<string>;
  laneHead: string;
}

function reviewedFile({ c, hunks, o, done, conflicts, laneHead }: ReviewedFileInput): ReviewedFile {
  const f: ReviewedFile = {
    ...c,
    decision: o.decision,
    decider: o.decider,
    hunks: hunks.map((h) => ({ id: h.id, index: h.index, header: h.header })),
    action: o.action,
    outcome:
      conflicts.has(o.path) && !o.unread
        ? 'conflicts with later changes in the main tree'
        : outcomeWords(o),
  };
  if (o.strategy) f.strategy = o.strategy;
  if (o.taken) [f.taken, f.hunkCount] = [o.taken, o.hunkCount!];
  if (o.warning) f.warning = o.warning;
  if (o.already) f.already = true;
  if (o.unread) {
    f.unread = true;
    // checkout of a gitlink sets the index entry only; of a blob, writes it (git streams what guard would not hold)
    const p = shellQuote(o.path);
    f.takeByHand =
      c.status !== 'delete'
        ? `git checkout ${laneHead} -- ${p}`
        : c.submodule
          ? `git rm --cached -- ${p}`
          : `git rm -- ${p}`;
  }
  if (conflicts.has(o.path)) f.conflict = true;
  const ref = done?.refs.get(o.path);
  const blob = done?.blobs.get(o.path);
  if (ref) f.ref = ref;
  if (blob) f.blob = blob;
  if (done && o.warning) done.warnings.push(`${o.path}: ${o.warning}`);
  return f;
}

/** What the merge will do, file by file, before anything is written. */
function confirmText(planned: Plan, conflicts: Set<string>): string {
  const s = summarize(planned);
  const names = planned.files.map((o) => displayName(o));
  const width = Math.min(60, Math.max(...names.map((n) => n.length)));
  const rows = planned.files.map(
    (o, i) =>
      `  ${names[i]!.padEnd(width)}  ${conflicts.has(o.path) && !o.unread ? 'conflicts with later changes (conflict markers; exit 1)' : outcomeWords(o)}`,
  );
  const head = `${plural(s.files, 'file')}: ${s.taken} to merge into the main tree, ${s.left} left out (kept as refs)${s.already ? `, ${s.already} already there` : ''}.`;
  return `\n${head}\n${rows.join('\n')}\n`;
}

function defaultPrompter(color: boolean, input: ReviewInput): Prompter {
  return async () => {
    const { openFilePrompt } = await import('../ask.js');
    return openFilePrompt({ color, root: input.main.root, title: (name) => name });
  };
}
