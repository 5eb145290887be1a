import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { quotePath } from '../../core/quote.js';
import { GuardError } from '../../core/errors.js';
import { MODE } from '../../core/modes.js';
import type { Plan } from '../../core/plan.js';
import type { Deadline } from '../../runtime/deadline.js';
import type { Lane } from '../../git/lanes.js';
import { mergeFile } from '../../git/merge.js';
import { filesLeft } from '../../git/restore.js';
import {
  REFS,
  newRef,
  proposalChanges,
  rejectedCommit,
  type RecordCommit,
} from '../../git/records.js';
import { decisionRecord, type RecordContext } from '../../core/record.js';
import { resolveInside } from '../../worktree/atomic.js';
import type { Repo } from '../../git/repo.js';
import { apply, type TreeFile, type TreeTarget } from '../../apply/apply.js';
import { blockFile, refusal } from '../../apply/tree-target.js';
import type { ReviewInput } from './review-read.js';

/**
 * A review's plan, handed to flows/apply as a tree target. Before the point
 * of no return it only reads (a file the main tree cannot take is blocked, so
 * it is kept like any refusal); apply then keeps every refusal as a ref, locks
 * and checkpoints the main tree, writes, merges and stages, records every
 * decision and commits where asked.
 */
export interface Applied {
  checkpoint: string | null;
  record: string;
  refs: Map<string, string>;
  blobs: Map<string, string>;
  conflicts: Set<string>;
  merged: number;
  staged: string[];
  warnings: string[];
  /** The commit made (--commit). */
  commit?: string;
  /** --commit was asked for and git commit failed (the merge itself stands, staged). */
  commitFailed?: string;
  /** Why nothing was committed: said after everything else. */
  commitWarning?: string;
}

export const FEEDBACK_FILE = path.join('.guard', 'feedback.md');

export interface ReviewApplyOptions {
  now: Date;
  deadline: Deadline | undefined;
  commit: { message: string } | null;
}

/** Apply the plan to the main tree; `commit`: commit what was merged (--commit). The agent's feedback is the caller's. */
export async function applyReview(
  input: ReviewInput,
  plan: Plan,
  { now, deadline, commit }: ReviewApplyOptions,
): Promise<Applied> {
  const { main, lane } = input;
  const ctx: RecordContext = {
    command: 'review',
    lane: lane.name,
    time: now.toISOString(),
    base: lane.base,
  };
  const record = newRef(REFS.decisions, now);
  const warnings: string[] = [];
  const files: TreeFile[] = plan.files.map((o, i) => ({
    outcome: o,
    file: input.files[i]!,
    entry: input.lc.entries[i]!,
  }));
  // It only reads: before the point of no return, so a refusal here is kept as a ref like any other.
  await refuseUnwritable(main.root, files, warnings);
  const target: TreeTarget = {
    kind: 'tree',
    checkpoint: {
      reason: `before guard review merges lane ${lane.name}`,
      command: 'review',
      lane: lane.name,
    },
    lock: { holder: `guard review ${lane.name}` },
    warnings,
    lane: { name: lane.name, base: lane.base },
    ctx,
    files,
    refs: new Map(),
    record,
    plan,
    ...(commit ? { commit } : {}),
  };
  const r = await apply({
    gate: 'review',
    repo: main,
    now,
    deadline,
    records: keptParts(target, now),
    target,
  });
  const t = r.done;
  const done: Applied = {
    checkpoint: r.checkpoint?.id ?? null,
    record,
    refs: target.refs,
    blobs: t.blobs,
    conflicts: t.conflicts,
    merged: t.merged,
    staged: t.staged,
    warnings,
  };
  if (t.commit !== undefined) done.commit = t.commit;
  if (t.commitFailed !== undefined) done.commitFailed = t.commitFailed;
  if (t.commitWarning !== undefined) done.commitWarning = t.commitWarning;
  return done;
}

/** Block a file the main tree cannot take without writing outside itself, before refs are made (so it is kept too). */
async function refuseUnwritable(
  root: string,
  files: TreeFile[],
  warnings: string[],
): Promise<void> {
  // A symlink this review deletes first (the lane made it a folder) is no reason to block what goes under it.
  const deleted = new Set(
    files
      .filter((f) => f.outcome.action === 'delete' && f.entry.oldMode === MODE.symlink)
      .map((f) => f.outcome.path),
  );
  const underDeleted = (p: string) =>
    p.split('/').some((_, i, parts) => i > 0 && deleted.has(parts.slice(0, i).join('/')));
  // What this review removes from the main tree: deletions and the old paths of renames.
  const removing = new Set(
    files
      .filter(
        (f) =>
          f.outcome.action === 'delete' ||
          (f.outcome.action === 'write' && f.entry.oldPath !== undefined),
      )
      .map((f) => f.entry.oldPath ?? f.entry.path),
  );
  for (const f of files) {
    const o = f.outcome;
    if (o.action === 'blocked' || o.action === 'none' || underDeleted(o.path)) continue;
    const e = f.entry;
    for (const p of e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]) {
      const why = await resolveInside(root, p).then(
        () => null,
        (err: unknown) =>
          err instanceof GuardError && err.code === 'E_PATH_ESCAPE'
            ? err.message
            : Promise.reject(err),
      );
      if (why) {
        await blockFile(f, why, warnings);
        break;
      }
    }
    const action: string = o.action; // blockFile may have changed it
    if (action === 'blocked' || action === 'delete' || action === 'conflict') continue;
    const inTheWay = await obstacle(root, e.path, removing);
    if (inTheWay) await blockFile(f, inTheWay, warnings);
  }
}

/**
 * A file or folder of the main tree standing where this file goes that the
 * review does not remove: a file where one of its folders goes, or a folder
 * (holding files the review leaves) where the file goes. Checked before
 * anything is written, so a file that turns into a folder (or the reverse)
 * is merged whole or not at all. A few lstat/readdir calls, only where a
 * path meets something.
 */
async function obstacle(
  root: string,
  rel: string,
  removing: ReadonlySet<string>,
): Promise<string | null> {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    const st = await lstat(path.join(root, dir)).catch(() => null);
    if (st === null) return null;
    if (!st.isDirectory() && !removing.has(dir))
      return `the main tree has a file at ${quotePath(dir)}, where a folder of ${quotePath(rel)} goes`;
  }
  const st = await lstat(path.join(root, rel)).catch(() => null);
  if (!st?.isDirectory()) return null;
  const left = await filesLeft(root, rel, removing);
  return left === null
    ? null
    : `a folder stands at ${quotePath(rel)} holding ${quotePath(left)}, which this review does not remove; move it away and review again`;
}

/** The first file under `dir` that the review would not remove, or null. */

/** The rejected refs the plan asks for: a refusal's proposal; for a partial take, the rest on top of what was taken. */
function keptParts(t: TreeTarget, now: Date): RecordCommit[] {
  const out: RecordCommit[] = [];
  let mark = 0;
  for (const f of t.files) {
    const o = f.outcome;
    if (o.keep === 'proposal') out.push(refusal(t, f, now));
    if (o.keep !== 'rest' || !o.content) continue;
    const e = f.entry;
    const ref = newRef(REFS.rejected, now);
    t.refs.set(o.path, ref);
    mark += 1;
    // parent: the base with what was taken; the ref: the lane's version. `git diff R^ R` = what was left.
    const taken: RecordCommit['changes'] = [
      { kind: 'inline', path: e.path, mode: e.newMode ?? e.oldMode ?? MODE.file, data: o.content },
    ];
    if (e.oldPath !== undefined) taken.push({ kind: 'delete', path: e.oldPath });
    const rec = decisionRecord(f.file.c, 'rejected', o.decider, {
      ref,
      ...(o.taken ? { hunks: o.taken } : {}),
      ...(e.newOid ? { blob: e.newOid } : {}),
    });
    out.push({
      mark,
      parent: t.lane.base,
      message: `guard review: the part of ${o.path} that was taken\n`,
      changes: taken,
    });
    out.push(
      rejectedCommit(t.ctx, { kept: rec, ref, parent: `:${mark}`, changes: proposalChanges(e) }),
    );
  }
  return out;
}

/** The files the three-way merge would leave conflicted, on the main tree as read (writes nothing but temp files). */
export async function predictConflicts(input: ReviewInput, plan: Plan): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [i, o] of plan.files.entries()) {
    if (o.action === 'conflict') out.add(o.path);
    if (o.action !== 'merge') continue;
    const f = input.files[i]!;
    const m = await mergeFile(input.main.root, {
      ours: f.current!.at!.content,
      base: f.base ?? Buffer.alloc(0),
      theirs: o.content!,
      labels: ['main', 'base', `lane ${input.lane.name}`],
    });
    if (m.conflicts > 0) out.add(o.path);
  }
  return out;
}

/** Tell the agent, inside its lane, what was refused and why. */
export async function writeFeedback(
  main: Repo,
  lane: Lane,
  files: Array<{
    path: string;
    status: string;
    decision: string;
    reasons: string[];
    ref?: string;
    conflict?: boolean;
    taken?: string[];
  }>,
  now: Date,
): Promise<string | null> {
  const refused = files.filter((f) => f.ref !== undefined || f.conflict);
  const lines = [`# guard review of lane ${lane.name}`, '', `${now.toISOString()}`, ''];
  if (refused.length === 0) lines.push('Everything in this lane was taken into the main tree.');
  else {
    lines.push(
      'These changes were not taken into the main tree. The refused content is kept; `git diff REF^ REF` shows it.',
      '',
    );
    for (const f of refused) {
      const what = f.conflict
        ? 'approved, but it conflicts with changes made in the main tree since this lane started'
        : f.decision === 'blocked'
          ? 'blocked: it needs a person to approve it'
          : f.decision === 'rejected'
            ? 'rejected by the reviewer'
            : f.taken
              ? `partly taken: hunks ${f.taken.join(', ')} were taken, the rest was left`
              : 'approved and merged with a strategy: the proposal itself was kept whole';
      lines.push(`- \`${f.path}\` (${f.status}): ${what}`);
      for (const r of f.reasons) lines.push(`  - ${r}`);
      if (f.ref) lines.push(`  - kept as \`${f.ref}\``);
    }
    lines.push(
      '',
      'Keep the code that stood there; make smaller, additive changes; never replace code with placeholders like "... existing code ...".',
    );
  }
  const { done } = await apply({
    gate: 'feedback',
    repo: main,
    now,
    records: [],
    target: {
      kind: 'feedback',
      dir: lane.path,
      rel: FEEDBACK_FILE,
      content: Buffer.from(lines.join('\n') + '\n'),
    },
  });
  if (!done.written) return null;
  return path.join(lane.path, FEEDBACK_FILE);
}
