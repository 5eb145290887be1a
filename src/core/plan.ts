/**
 * The plan: what a gate (check, write, review, hook) does with each file.
 *
 * Every gate reads (classifications, contents, the person's answers), then
 * calls `plan`, then applies the result in one place. `plan` is pure: it
 * does no I/O (it is async only because the `extend` strategy loads its
 * parser on first use). One computation feeds the confirm, the final report,
 * the JSON and the record, so they cannot disagree.
 *
 * The API a front end needs is small:
 *   - `Answer`: what a person (or a decisions file, or a harness) said about
 *     one file. Files with no answer follow the policy: allowed, or blocked
 *     as in auto mode. That is also what `q` (stop asking) leaves behind.
 *     Ctrl-C is not an answer: it aborts the command before `plan` is called.
 *   - `PlanFile`: one file's facts; `plan(gate, files, answers)` -> `Plan`.
 *   - `alreadyThere(gate, file)`: a file the target already holds (ask nothing).
 *   - `mergeStrategies(file)`: the whole-file strategies that apply to a file.
 *   - `decisionRecords(plan, refs, blobs)`, `summarize(plan)`, `outcomeWords(o)`.
 */
import type { Classification } from './classify.js';
import { GuardError } from './errors.js';
import { MODE, approvalKind } from './modes.js';
import { plural } from './quote.js';
import type { Hunk } from './hunks.js';
import { decisionRecord, type Decider, type Decision, type DecisionRecord } from './record.js';
import { applyStrategy, type StrategyName } from './strategies.js';

export type Gate = 'check' | 'write' | 'review' | 'hook';

/** One answer model for every gate. */
export type Answer =
  /**
   * Take the change as it is. `via: 'review'`: approved earlier in `guard review` (check honours it);
   * `via: 'own'`: the person committing at the terminal wrote it (no agent session did, config `judge: agents`).
   */
  | { take: 'all'; via?: 'review' | 'own' }
  /** Approve with a whole-file strategy (replace is the same as `all`). */
  | { take: 'strategy'; strategy: StrategyName; insertAt?: number }
  /** Take these hunks (by index into `hunks`, the file's hunks as the person saw them, after splits). */
  | { take: 'hunks'; indices: ReadonlySet<number>; hunks?: readonly Hunk[] }
  /** Refuse it: kept as a rejected ref, left out. */
  | { take: 'none' };

/** A file as a gate's target holds it now. */
export interface Held {
  content: Buffer;
  mode: string;
}

export interface PlanFile {
  c: Classification;
  /** The text hunks from base to proposal; [] for a whole-file change (binary, symlink, mode only). */
  hunks: readonly Hunk[];
  /** The content in base (null: absent) and the proposal (null: deleted). */
  base: Buffer | null;
  proposed: Buffer | null;
  baseMode: string | null;
  proposedMode: string | null;
  /**
   * What the target holds now at `c.path` (and at `c.oldPath` for a rename).
   * Given by review (the main tree). When absent: check's target (the index)
   * holds the proposal, write's and hook's (the disk) holds the base.
   */
  current?: { at: Held | null; atOld?: Held | null };
  /**
   * A version guard did not read (a submodule's commit, content over the read
   * cap): unknown, never equal to anything, so never "already there" and
   * never written; review leaves it for a person to take by hand.
   */
  unread?: boolean;
}

/**
 * What happens to the target: `write` (or `delete`) the result; `merge` it
 * three ways onto what the target holds now (the merge may still conflict);
 * `conflict`: it cannot be merged and is left as it is; `blocked`: refused,
 * nothing written; `none`: the target already holds the result.
 */
export type MergeAction = 'write' | 'delete' | 'merge' | 'conflict' | 'blocked' | 'none';

export interface FileOutcome {
  path: string;
  oldPath?: string;
  decision: Decision;
  decider: Decider;
  /** replace, append, insert, extend, hunks (a subset), or review (approved in guard review). */
  strategy?: string;
  /** Ids of the hunks taken, and how many the person saw, when only some were taken. */
  taken?: string[];
  hunkCount?: number;
  /** Of the hunks taken, how many a person edited by hand (`e`), when any. */
  edited?: number;
  /** The result (null: the path is deleted); undefined when refused. */
  content?: Buffer | null;
  mode: string | null;
  action: MergeAction;
  /**
   * What to keep as a rejected ref: `proposal` (the whole proposal, parent the
   * base: refused, or merged by a strategy into something else), `rest` (what
   * a partial take left out: parent the base with the part taken), or null.
   */
  keep: 'proposal' | 'rest' | null;
  /** The target already held the proposal: nothing was asked or done. */
  already?: true;
  /** A side of it was never read (PlanFile.unread): not merged, left for a person (action `conflict`). */
  unread?: true;
  warning?: string;
}

export interface Plan {
  gate: Gate;
  files: FileOutcome[];
}

const SYMLINK = MODE.symlink;
const GITLINK = MODE.gitlink;

function same(h: Held | null | undefined, content: Buffer | null, mode: string | null): boolean {
  if (h === undefined) return false;
  if (h === null || content === null) return h === null && content === null;
  return h.content.equals(content) && (mode === null || h.mode === mode);
}

function textual(f: PlanFile): boolean {
  const modes = [f.baseMode, f.proposedMode];
  return (
    !f.c.binary &&
    !f.c.submodule &&
    !f.c.symlink &&
    !modes.includes(SYMLINK) &&
    !modes.includes(GITLINK)
  );
}

/** The whole-file strategies besides replace that can merge this file: none for a new file, a delete, binary, a symlink. */
export function mergeStrategies(f: PlanFile): StrategyName[] {
  if (
    f.base === null ||
    f.proposed === null ||
    f.c.status === 'delete' ||
    f.c.status === 'new' ||
    !textual(f)
  )
    return [];
  return ['append', 'insert', 'extend'];
}

/** The strategies a prompt offers: only for a whole-file rewrite (a replace), where taking hunks makes little sense. */
export function offeredStrategies(f: PlanFile): StrategyName[] {
  return f.c.status === 'replace' ? mergeStrategies(f) : [];
}

/** The target already holds the proposal (review of a lane that was merged before): nothing to ask, nothing to do. */
export function alreadyThere(gate: Gate, f: PlanFile): boolean {
  if (gate !== 'review' || f.current === undefined || f.unread) return false;
  const { at, atOld } = f.current;
  if (!same(at, f.proposed, f.proposedMode)) return false;
  return f.c.oldPath === undefined || atOld === null || atOld === undefined;
}

function checkAnswer(f: PlanFile, a: Answer): void {
  const name = f.c.path;
  if (
    a.take === 'strategy' &&
    a.strategy !== 'replace' &&
    !mergeStrategies(f).includes(a.strategy)
  ) {
    const what =
      f.c.status === 'delete'
        ? 'a deletion'
        : f.c.status === 'new'
          ? 'a new file'
          : 'a file that is not text';
    throw new GuardError(
      'E_USAGE',
      `strategy ${a.strategy} cannot merge "${name}" (${what})`,
      'approve it as it is (replace), or reject it',
    );
  }
  if (a.take === 'hunks') {
    const hunks = a.hunks ?? f.hunks;
    if (hunks.length === 0 && a.indices.size > 0) {
      throw new GuardError(
        'E_USAGE',
        `"${name}" has no hunks to pick (binary, symlink, mode or rename only)`,
        'approve it or reject it whole',
      );
    }
    const known = new Set(hunks.map((h) => h.index));
    for (const i of a.indices)
      if (!known.has(i))
        throw new GuardError(
          'E_USAGE',
          `"${name}" has no hunk #${i}`,
          'guard review NAME --dry-run lists the hunks',
        );
  }
}

/** Plan every file; `answers` by path (a rename's new path). Throws E_USAGE for an answer that does not fit its file. */
export async function plan(
  gate: Gate,
  files: readonly PlanFile[],
  answers: ReadonlyMap<string, Answer>,
): Promise<Plan> {
  const out: FileOutcome[] = [];
  for (const f of files) out.push(await planOne(gate, f, answers.get(f.c.path)));
  return { gate, files: out };
}

async function planOne(gate: Gate, f: PlanFile, answer: Answer | undefined): Promise<FileOutcome> {
  const base = { path: f.c.path, ...(f.c.oldPath !== undefined ? { oldPath: f.c.oldPath } : {}) };
  if (alreadyThere(gate, f))
    return {
      ...base,
      decision: 'allowed',
      decider: 'policy',
      mode: f.proposedMode,
      content: f.proposed,
      action: 'none',
      keep: null,
      already: true,
    };
  if (answer) checkAnswer(f, answer);
  const refused = (decision: Decision, decider: Decider): FileOutcome => ({
    ...base,
    decision,
    decider,
    mode: null,
    action: 'blocked',
    keep: 'proposal',
  });
  if (!answer) {
    if (f.c.needsApproval) return refused('blocked', 'auto');
    return target(gate, f, {
      ...base,
      decision: 'allowed',
      decider: 'policy',
      content: f.proposed,
      mode: f.proposedMode,
      action: 'none',
      keep: null,
    });
  }
  if (answer.take === 'none') return refused('rejected', 'person');
  const approved = {
    ...base,
    decision: 'approved' as const,
    decider: 'person' as const,
    action: 'none' as const,
    keep: null,
  };
  if (answer.take === 'all' || (answer.take === 'strategy' && answer.strategy === 'replace')) {
    return target(gate, f, {
      ...approved,
      strategy: answer.take === 'all' && answer.via ? answer.via : 'replace',
      content: f.proposed,
      mode: f.proposedMode,
    });
  }
  if (answer.take === 'hunks') {
    if (answer.indices.size === 0) return refused('rejected', 'person');
    return planHunks(gate, f, answer, approved);
  }
  return planStrategy(gate, f, answer, approved);
}

type Approved = Pick<FileOutcome, 'path' | 'oldPath' | 'decision' | 'decider' | 'action' | 'keep'>;

/** Some of the hunks taken (`y`/`n`, perhaps `e`): what they make, the rest kept as a ref. */
async function planHunks(
  gate: Gate,
  f: PlanFile,
  answer: Extract<Answer, { take: 'hunks' }>,
  approved: Approved,
): Promise<FileOutcome> {
  const hunks = answer.hunks ?? f.hunks;
  // Every hunk taken is the proposal, unless a person edited one by hand (`e`): then it is what they made.
  if (answer.indices.size === hunks.length && !hunks.some((h) => h.edited))
    return target(gate, f, {
      ...approved,
      strategy: 'replace',
      content: f.proposed,
      mode: f.proposedMode,
    });
  // Byte for byte: hunks were read as UTF-8, so their lines are taken again from both sides read as latin1.
  // (hunks.js, and jsdiff with it, loads only here: the commit gate's silent path never needs it.)
  const { applyHunks, relineHunks } = await import('./hunks.js');
  const [b, p] = [f.base?.toString('latin1') ?? '', f.proposed?.toString('latin1') ?? ''];
  const content = Buffer.from(applyHunks(b, relineHunks(hunks, b, p), answer.indices), 'latin1');
  const taken = hunks.filter((h) => answer.indices.has(h.index));
  const edited = taken.filter((h) => h.edited).length;
  const ids = taken.map((h) => h.id);
  return target(gate, f, {
    ...approved,
    strategy: 'hunks',
    taken: ids,
    hunkCount: hunks.length,
    ...(edited > 0 ? { edited } : {}),
    content,
    mode: f.proposedMode ?? f.baseMode,
    keep: 'rest',
  });
}

/** A merge strategy other than replace (append, insert, extend): its result, the proposal kept as a ref. */
async function planStrategy(
  gate: Gate,
  f: PlanFile,
  answer: Extract<Answer, { take: 'strategy' }>,
  approved: Approved,
): Promise<FileOutcome> {
  const r = await applyStrategy(
    answer.strategy,
    f.base?.toString('utf8') ?? '',
    f.proposed?.toString('utf8') ?? '',
    {
      path: f.c.path,
      ...(answer.insertAt !== undefined ? { insertAt: answer.insertAt } : {}),
    },
  );
  const merged: FileOutcome = {
    ...approved,
    strategy: r.strategy,
    content: Buffer.from(r.content, 'utf8'),
    mode: f.proposedMode ?? f.baseMode,
    keep: 'proposal',
  };
  if (r.warning) merged.warning = r.warning;
  return target(gate, f, merged);
}

/** What the result does to the gate's target, from what the target holds now. */
function target(gate: Gate, f: PlanFile, o: FileOutcome): FileOutcome {
  // what guard did not read it cannot compare, merge or write: a person takes it by hand
  if (f.unread && gate === 'review') return { ...o, action: 'conflict', unread: true };
  const content = o.content ?? null;
  const implied =
    gate === 'check'
      ? {
          at:
            f.proposed === null ? null : { content: f.proposed, mode: f.proposedMode ?? MODE.file },
        }
      : { at: f.base === null ? null : { content: f.base, mode: f.baseMode ?? MODE.file } };
  const cur = f.current ?? implied;
  const holdsBase = (h: Held | null | undefined) => same(h, f.base, f.baseMode);
  // check's target is the index, which holds the proposal: a result is staged over it.
  const holdsOurs = (h: Held | null | undefined) =>
    holdsBase(h) || (gate === 'check' && same(h, f.proposed, f.proposedMode));
  if (f.c.oldPath !== undefined && f.current !== undefined) {
    const { at, atOld } = f.current;
    if (same(at, content, o.mode) && (atOld === null || atOld === undefined))
      return { ...o, action: 'none' };
    const sourceOk = atOld === null || atOld === undefined || same(atOld, f.base, f.baseMode);
    const targetOk = at === null || same(at, content, o.mode);
    return { ...o, action: sourceOk && targetOk ? 'write' : 'conflict' };
  }
  if (same(cur.at, content, o.mode)) return { ...o, action: 'none' };
  if (holdsOurs(cur.at)) return { ...o, action: content === null ? 'delete' : 'write' };
  const mergeable = content !== null && cur.at !== null && textual(f) && cur.at.mode !== SYMLINK;
  return { ...o, action: mergeable ? 'merge' : 'conflict' };
}

export interface RecordedObjects {
  refs: ReadonlyMap<string, string>;
  blobs: ReadonlyMap<string, string>;
  /** The mode of each blob in `blobs`, where the outcome has none (a refusal keeps the proposal's). */
  modes?: ReadonlyMap<string, string | null>;
  conflicts?: ReadonlySet<string>;
}

/** The decision record of each outcome, with the refs made for it and the blobs written (by path). */
export function decisionRecords(
  p: Plan,
  classifications: readonly Classification[],
  { refs, blobs, modes, conflicts = new Set() }: RecordedObjects,
): DecisionRecord[] {
  const byPath = new Map(classifications.map((c) => [c.path, c]));
  return p.files.map((o) => {
    const extra: Partial<DecisionRecord> = {};
    const blob = blobs.get(o.path);
    const ref = refs.get(o.path);
    if (blob) extra.blob = blob;
    // the kind of thing approved, as a trailer names it: the same blob as a symlink is not the file a person saw
    const mode = o.mode ?? modes?.get(o.path) ?? null;
    if (blob && approvalKind(mode) !== 'file') extra.mode = mode!;
    if (ref) extra.ref = ref;
    if (o.strategy) extra.strategy = o.strategy;
    if (o.taken) extra.hunks = o.taken;
    const rec = decisionRecord(byPath.get(o.path)!, o.decision, o.decider, extra);
    return {
      ...rec,
      ...(conflicts.has(o.path) ? { conflict: true } : {}),
      ...(o.already ? { already: true } : {}),
    };
  });
}

export interface PlanSummary {
  files: number;
  allowed: number;
  approved: number;
  rejected: number;
  blocked: number;
  /** Files whose result goes into the target (write, delete or merge). */
  taken: number;
  /** Of those, taken in part (some hunks) or merged by a strategy. */
  partly: number;
  /** Refused: nothing of them goes in. */
  left: number;
  /** Already held by the target. */
  already: number;
  /** Rejected refs this plan makes. */
  kept: number;
  /** Files the plan already knows cannot be merged. */
  conflicts: number;
}

export function summarize(p: Plan): PlanSummary {
  const n = (pred: (o: FileOutcome) => boolean) => p.files.filter(pred).length;
  return {
    files: p.files.length,
    allowed: n((o) => o.decision === 'allowed'),
    approved: n((o) => o.decision === 'approved'),
    rejected: n((o) => o.decision === 'rejected'),
    blocked: n((o) => o.decision === 'blocked'),
    taken: n((o) => o.action === 'write' || o.action === 'delete' || o.action === 'merge'),
    partly: n((o) => o.taken !== undefined && o.action !== 'none' && o.action !== 'blocked'),
    left: n((o) => o.action === 'blocked'),
    already: n((o) => o.already === true),
    kept: n((o) => o.keep !== null),
    conflicts: n((o) => o.action === 'conflict'),
  };
}

/** Every file was refused: for check, nothing of what was staged would be committed. */
export function everythingRefused(p: Plan): boolean {
  return (
    p.files.length > 0 &&
    p.files.every((o) => o.decision === 'rejected' || o.decision === 'blocked')
  );
}

/** What happens to one file, in words: "taken in part (3 of 5 hunks)", "approved (append)", "already in the main tree". */
export function outcomeWords(o: FileOutcome): string {
  if (o.already) return 'already in the main tree';
  if (o.unread)
    return `${o.decision}, not merged: guard did not read it (a submodule, or too large to read); take it by hand`;
  if (o.decision === 'blocked') return 'blocked (needs a person)';
  if (o.decision === 'rejected') return 'rejected';
  const how =
    o.taken !== undefined
      ? `taken in part (${o.taken.length} of ${plural(o.hunkCount ?? 0, 'hunk')}${o.edited ? `, ${o.edited} edited by hand` : ''})`
      : o.decision === 'approved'
        ? `approved (${o.strategy ?? 'replace'})`
        : 'allowed';
  const what: Partial<Record<MergeAction, string>> = {
    delete: 'deleted',
    merge: 'merged with later changes',
    conflict: 'conflicts with later changes',
  };
  return what[o.action] ? `${how}, ${what[o.action]}` : how;
}
