import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { decisionRecords, type FileOutcome, type Plan, type PlanFile } from '../core/plan.js';
import { batchMessage, decisionRecord, rejectedMessage, type RecordContext } from '../core/record.js';
import type { Deadline } from '../git/deadline.js';
import { faultPoint } from '../git/faults.js';
import type { Lane } from '../git/lanes.js';
import { blobId, mergeFile } from '../git/merge.js';
import { stagePaths } from '../git/staging.js';
import { commitPaths } from '../git/commits.js';
import { withReason } from '../core/classify.js';
import { REFS, newRef, proposalChanges, writeRecords, type RecordCommit } from '../git/records.js';
import { removeFile, resolveInside, writeFileAtomic } from '../worktree/atomic.js';
import { readCurrent } from '../worktree/current.js';
import { apply } from './apply.js';
import type { ReviewInput } from './review-read.js';

/**
 * Apply a review's plan through flows/apply, the one place past the point of
 * no return. Order, so that nothing is ever lost: refuse what the main tree
 * cannot take; keep every refusal as a ref; lock and checkpoint the main
 * tree; write, merge and stage; record every decision; tell the agent; commit.
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
}

export const FEEDBACK_FILE = path.join('.guard', 'feedback.md');

/**
 * `finish` (the report, the agent's feedback, the commit) runs last, inside
 * apply: everything past the point of no return happens through flows/apply.
 */
export async function applyReview<T>(input: ReviewInput, plan: Plan, now: Date, deadline: Deadline | undefined, finish: (done: Applied) => Promise<T>): Promise<T> {
  const { main, lane } = input;
  const ctx: RecordContext = { command: 'review', lane: lane.name, time: now.toISOString(), base: lane.base };
  const done: Applied = { checkpoint: null, record: newRef(REFS.decisions, now), refs: new Map(), blobs: new Map(), conflicts: new Set(), merged: 0, staged: [], warnings: [] };
  // It only reads: before the point of no return, so a refusal here is kept as a ref like any other.
  await refuseUnwritable(input, plan, done);
  const late: RecordCommit[] = [];
  const toWrite = plan.files.filter((o) => o.action === 'write' || o.action === 'delete' || o.action === 'merge' || o.action === 'conflict');
  const merging = toWrite.some((o) => o.action !== 'conflict');
  if (!merging) for (const o of toWrite) done.conflicts.add(o.path);
  return apply({
    deadline,
    keep: async () => {
      await writeRecords(main.root, keptRefs(input, plan, ctx, now, done.refs), now);
      faultPoint('review:after-refs');
    },
    target: merging
      ? {
          repo: main,
          lock: { holder: `guard review ${lane.name}`, warnings: done.warnings, fault: 'review:after-lock' },
          checkpoint: { reason: `before guard review merges lane ${lane.name}`, command: 'review', lane: lane.name },
          afterCheckpoint: 'review:after-checkpoint',
          write: async (cp) => {
            done.checkpoint = cp.id;
            await mergeAll(input, toWrite, done, (o) => late.push(refusal(input, o, ctx, now, done.refs)));
          },
        }
      : null,
    after: async () => {
      if (late.length > 0) await writeRecords(main.root, late, now);
      faultPoint('review:before-record');
      const records = decisionRecords(plan, input.files.map((f) => f.c), done.refs, done.blobs, done.conflicts);
      await writeRecords(main.root, [{ ref: done.record, parent: null, message: batchMessage(ctx, records), changes: [] }], now);
      return finish(done);
    },
  });
}

const fileOf = (input: ReviewInput, o: FileOutcome): PlanFile => input.files.find((f) => f.c.path === o.path)!;
const entryOf = (input: ReviewInput, o: FileOutcome) => input.lc.entries[input.files.findIndex((f) => f.c.path === o.path)]!;

/** Block a file the main tree cannot take without writing outside itself, before refs are made (so it is kept too). */
async function refuseUnwritable(input: ReviewInput, plan: Plan, done: Applied): Promise<void> {
  // A symlink this review deletes first (the lane made it a folder) is no reason to block what goes under it.
  const deleted = new Set(plan.files.filter((o) => o.action === 'delete' && entryOf(input, o).oldMode === '120000').map((o) => o.path));
  const underDeleted = (p: string) => p.split('/').some((_, i, parts) => i > 0 && deleted.has(parts.slice(0, i).join('/')));
  for (const o of plan.files) {
    if (o.action === 'blocked' || o.action === 'none' || underDeleted(o.path)) continue;
    const e = entryOf(input, o);
    for (const p of e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]) {
      const why = await resolveInside(input.main.root, p).then(
        () => null,
        (err: unknown) => (err instanceof GuardError && err.code === 'E_PATH_ESCAPE' ? err.message : Promise.reject(err)),
      );
      if (why) {
        block(input, o, why, done);
        break;
      }
    }
  }
}

function block(input: ReviewInput, o: FileOutcome, why: string, done: Applied): void {
  Object.assign(o, { decision: 'blocked', action: 'blocked', keep: 'proposal', content: undefined });
  delete o.taken;
  delete o.strategy;
  const f = fileOf(input, o);
  f.c = withReason(f.c, { rule: 'not-written', text: `not written: ${why}` });
  done.warnings.push(`${o.path}: not written: ${why}`);
}

function refusal(input: ReviewInput, o: FileOutcome, ctx: RecordContext, now: Date, refs: Map<string, string>): RecordCommit {
  const e = entryOf(input, o);
  const ref = newRef(REFS.rejected, now);
  refs.set(o.path, ref);
  const rec = decisionRecord(fileOf(input, o).c, o.decision === 'blocked' ? 'blocked' : 'rejected', o.decider, { ref, ...(e.newOid ? { blob: e.newOid } : {}), ...(o.strategy ? { strategy: o.strategy } : {}) });
  return { ref, parent: input.lane.base, message: rejectedMessage(ctx, rec), changes: proposalChanges(e) };
}

/** The rejected refs the plan asks for: a refusal's proposal; for a partial take, the rest on top of what was taken. */
function keptRefs(input: ReviewInput, plan: Plan, ctx: RecordContext, now: Date, refs: Map<string, string>): RecordCommit[] {
  const out: RecordCommit[] = [];
  let mark = 0;
  for (const o of plan.files) {
    if (o.keep === 'proposal') out.push(refusal(input, o, ctx, now, refs));
    if (o.keep !== 'rest' || !o.content) continue;
    const e = entryOf(input, o);
    const ref = newRef(REFS.rejected, now);
    refs.set(o.path, ref);
    mark += 1;
    // parent: the base with what was taken; the ref: the lane's version. `git diff R^ R` = what was left.
    const taken: RecordCommit['changes'] = [{ kind: 'inline', path: e.path, mode: e.newMode ?? e.oldMode ?? '100644', data: o.content }];
    if (e.oldPath !== undefined) taken.push({ kind: 'delete', path: e.oldPath });
    const rec = decisionRecord(fileOf(input, o).c, 'rejected', o.decider, { ref, ...(o.taken ? { hunks: o.taken } : {}), ...(e.newOid ? { blob: e.newOid } : {}) });
    out.push({ mark, parent: input.lane.base, message: `guard review: the part of ${o.path} that was taken\n`, changes: taken });
    out.push({ ref, parent: `:${mark}`, message: rejectedMessage(ctx, rec), changes: proposalChanges(e) });
  }
  return out;
}

async function mergeAll(input: ReviewInput, toWrite: FileOutcome[], done: Applied, late: (o: FileOutcome) => void): Promise<void> {
  try {
    for (const o of toWrite) {
      try {
        const r = await mergeOne(input, o);
        if (r.conflict) done.conflicts.add(o.path);
        else {
          done.staged.push(...r.paths);
          done.merged++;
        }
        if (r.blob) done.blobs.set(o.path, r.blob);
        faultPoint('review:between-files');
      } catch (err) {
        // A folder there became a symlink leading out, or a folder stands where the file goes: never write there.
        if (!(err instanceof GuardError) || (err.code !== 'E_PATH_ESCAPE' && err.code !== 'E_USAGE')) throw err;
        const kept = done.refs.has(o.path);
        block(input, o, err.message, done);
        if (!kept) late(o);
      }
    }
    faultPoint('review:before-stage');
    await stagePaths(input.main.root, done.staged);
  } catch (err) {
    const code = err instanceof GuardError ? err.code : 'E_INTERNAL';
    throw new GuardError(code, `guard review stopped while merging into the main tree: ${(err as Error).message}`, `undo what was written: guard restore ${done.checkpoint} --staged`);
  }
}

/**
 * Put one planned result into the main tree. The plan chose the action from
 * what the main tree held when it was read; under the lock it is read again,
 * and a file that changed since is a conflict (left as it is).
 */
async function mergeOne(input: ReviewInput, o: FileOutcome): Promise<{ conflict: boolean; paths: string[]; blob?: string }> {
  const root = input.main.root;
  const f = fileOf(input, o);
  const e = entryOf(input, o);
  const conflict = { conflict: true, paths: [] as string[] };
  if (o.action === 'conflict') return conflict;
  const [now, nowOld] = await Promise.all([readCurrent(root, e.path), e.oldPath !== undefined ? readCurrent(root, e.oldPath) : null]);
  const same = (a: { content: Buffer; mode: string } | null, b: { content: Buffer; mode: string } | null | undefined) =>
    a === null || b === null || b === undefined ? a === (b ?? null) : a.content.equals(b.content) && a.mode === b.mode;
  if (!same(now, f.current?.at) || (e.oldPath !== undefined && !same(nowOld, f.current?.atOld))) return conflict;
  const content = o.content ?? null;
  if (o.action === 'delete') {
    await removeFile(root, e.oldPath ?? e.path);
    return { conflict: false, paths: [e.oldPath ?? e.path] };
  }
  const mode = o.mode ?? now?.mode ?? '100644';
  if (o.action === 'write') {
    await writeFileAtomic(root, e.path, content!, mode);
    if (e.oldPath !== undefined && nowOld !== null) await removeFile(root, e.oldPath);
    return { conflict: false, paths: e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path], blob: blobId(content!) };
  }
  const m = await mergeFile(root, now!.content, f.base ?? Buffer.alloc(0), content!, ['main', 'base', `lane ${input.lane.name}`]);
  await writeFileAtomic(root, e.path, m.content, mode);
  if (m.conflicts > 0) return conflict;
  return { conflict: false, paths: [e.path], blob: blobId(m.content) };
}

/** The files the three-way merge would leave conflicted, on the main tree as read (writes nothing but temp files). */
export async function predictConflicts(input: ReviewInput, plan: Plan): Promise<Set<string>> {
  const out = new Set<string>();
  for (const o of plan.files) {
    if (o.action === 'conflict') out.add(o.path);
    if (o.action !== 'merge') continue;
    const f = fileOf(input, o);
    const m = await mergeFile(input.main.root, f.current!.at!.content, f.base ?? Buffer.alloc(0), o.content!, ['main', 'base', `lane ${input.lane.name}`]);
    if (m.conflicts > 0) out.add(o.path);
  }
  return out;
}

/** Tell the agent, inside its lane, what was refused and why. */
export async function writeFeedback(lane: Lane, files: Array<{ path: string; status: string; decision: string; reasons: string[]; ref?: string; conflict?: boolean; taken?: string[] }>, now: Date): Promise<string | null> {
  const refused = files.filter((f) => f.ref !== undefined || f.conflict);
  const lines = [`# guard review of lane ${lane.name}`, '', `${now.toISOString()}`, ''];
  if (refused.length === 0) lines.push('Everything in this lane was taken into the main tree.');
  else {
    lines.push('These changes were not taken into the main tree. The refused content is kept; `git diff REF^ REF` shows it.', '');
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
    lines.push('', 'Keep the code that stood there; make smaller, additive changes; never replace code with placeholders like "... existing code ...".');
  }
  // The lane is the agent's: its .guard/ may hold a symlink planted to make guard write elsewhere.
  try {
    await writeFileAtomic(lane.path, FEEDBACK_FILE, Buffer.from(lines.join('\n') + '\n'), '100644');
  } catch (err) {
    if (err instanceof GuardError && err.code === 'E_PATH_ESCAPE') return null;
    throw err;
  }
  return path.join(lane.path, FEEDBACK_FILE);
}

/** Commit only the merged paths, with a trailer per approval; the hook's check honours this review's record. */
export async function commitMerge(root: string, message: string, trailers: string[], staged: string[], record: string): Promise<string> {
  const text = message.trimEnd() + (trailers.length ? `\n\n${trailers.join('\n')}\n` : '\n');
  return commitPaths(root, staged, text, { GUARD_APPROVED_RECORD: record });
}
