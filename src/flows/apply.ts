import { GuardError } from '../core/errors.js';
import { MODE } from '../core/modes.js';
import { decisionRecords, type FileOutcome, type Plan, type PlanFile } from '../core/plan.js';
import { batchMessage, decisionRecord, rejectedMessage, type RecordContext } from '../core/record.js';
import type { CheckpointOptions } from '../git/checkpoint.js';
import type { Deadline } from '../git/deadline.js';
import type { DiffEntry } from '../git/diff.js';
import { faultPoint } from '../git/faults.js';
import { REFS, newRef, proposalChanges, writeRecords, type RecordCommit } from '../git/records.js';
import type { Repo } from '../git/repo.js';
import type { OnDisk, Staged } from '../worktree/atomic.js';

/**
 * Apply: the one place where check, write and review pass the point of no
 * return and change something. A gate reads, plans (core/plan), then hands
 * apply a typed target built from the plan's outcomes; apply does it all in
 * one order, so that nothing is ever lost whichever step guard dies at:
 *
 *   1. the point of no return: the deadline is checked a last time and
 *      disarmed (from here on guard finishes what it writes);
 *   2. `records`: the rejected refs and records, before the target is
 *      touched, so nothing a later step drops is lost. A `file` target is
 *      first verified under its lock (another writer may have changed it):
 *      its records are written then, beside the checkpoint, so a write
 *      refused as stale records nothing;
 *   3. the target, when there is something to change: lock it (file, tree),
 *      checkpoint it, then write it:
 *      - `index` (check): unstage what was refused, stage the results as blobs;
 *      - `file` (write): rename the prepared file over the judged one;
 *      - `tree` (review): write, delete or three-way merge each file onto what
 *        the tree holds now (a file changed since it was read is a conflict),
 *        stage, then the decision record (it names the blobs written and the
 *        conflicts) and the commit where asked.
 *
 * The fault points (git/faults.ts, docs/reliability/faults.md) of each gate
 * are named here, at the steps where they always were.
 */
export interface ApplyPlan {
  /** Names the fault points. */
  gate: 'check' | 'write' | 'review';
  repo: Repo;
  now: Date;
  deadline?: Deadline | undefined;
  /** The rejected refs and records that nothing later may lose. */
  records: RecordCommit[];
  /** What to change; null: nothing but the records. */
  target: Target | null;
}

export type Target = IndexTarget | FileTarget | TreeTarget;

interface Common {
  checkpoint: CheckpointOptions;
}

/** Hold the tree lock while checkpointing and writing (another guard write or review into the same tree). */
export interface LockOptions {
  holder: string;
  waitMs?: number;
}

/** check: the index, which holds what was staged. */
export interface IndexTarget extends Common {
  kind: 'index';
  /** Staged changes a person refused: put back as HEAD has them (the work tree keeps them). */
  unstage: DiffEntry[];
  /** Results staged as blobs (a strategy, some hunks). */
  stage: IndexWrite[];
}

export interface IndexWrite {
  path: string;
  mode: string;
  content: Buffer;
  /** Also write the result to the work tree, but only while it still holds this blob (what was staged); null: the index only. */
  worktreeIfHolds: string | null;
}

/** write: one file, replaced by a prepared temp file. */
export interface FileTarget extends Common {
  kind: 'file';
  lock: LockOptions;
  /** Said on stderr: a stale lock of a killed guard was taken over. */
  warnings: string[];
  /** The prepared result (worktree/atomic stageWrite), renamed over the file. */
  staged: Staged;
  /** What was judged: the file must still be it under the lock, else E_CHANGED and nothing is written or recorded. */
  judged: { abs: string; rel: string; old: OnDisk | null; content: Buffer | null };
  /** The session's first touch of the path: recorded with the checkpoint, so later writes are measured against it. */
  session?: Array<{ id: string; path: string; worktree: string; outcome: string; store?: string }>;
}

/** review: files merged into a work tree (the main tree) and staged, then recorded and committed. */
export interface TreeTarget extends Common {
  kind: 'tree';
  lock: LockOptions;
  /** Said on stderr: a stale lock taken over, a file the tree cannot take. */
  warnings: string[];
  /** The lane: names the labels of a three-way merge, and is the parent of a refusal made late. */
  lane: { name: string; base: string };
  ctx: RecordContext;
  /** Every file of the plan, in plan order: what each becomes is its outcome's action. */
  files: TreeFile[];
  /** The rejected refs the records make, by path (apply adds the ones it makes). */
  refs: Map<string, string>;
  /** The decision record's ref. */
  record: string;
  plan: Plan;
  /** Commit what was staged, with a `Guard-Approved:` trailer per approval. */
  commit?: { message: string };
}

export interface TreeFile {
  outcome: FileOutcome;
  /** The file as planned; its classification gains a reason when the tree cannot take it. */
  file: PlanFile;
  entry: DiffEntry;
}

export interface Taken {
  id: string;
  commit: string;
}

/** What a tree target became. */
export interface TreeDone {
  merged: number;
  staged: string[];
  blobs: Map<string, string>;
  conflicts: Set<string>;
  commit?: string;
  /** --commit was asked for and git commit failed: why (the merge itself stands, staged). */
  commitFailed?: string;
  /** Why nothing was committed (said after everything else). */
  commitWarning?: string;
}

export interface ApplyResult {
  checkpoint: Taken | null;
  tree?: TreeDone;
}

type Step = 'beforeRecords' | 'afterRecords' | 'afterLock' | 'afterCheckpoint';
const FAULTS: Record<ApplyPlan['gate'], Partial<Record<Step, string>>> = {
  check: { beforeRecords: 'check:before-records', afterRecords: 'check:after-records', afterCheckpoint: 'check:before-unstage' },
  write: { afterCheckpoint: 'write:after-checkpoint' },
  review: { afterRecords: 'review:after-refs', afterLock: 'review:after-lock', afterCheckpoint: 'review:after-checkpoint' },
};

export async function apply(p: ApplyPlan): Promise<ApplyResult> {
  p.deadline?.pointOfNoReturn(); // past this point guard writes: finish, never stop half way
  const t = p.target;
  const faults = FAULTS[p.gate];
  const keep = async () => {
    fault(faults.beforeRecords);
    await writeRecords(p.repo.root, p.records, p.now);
    fault(faults.afterRecords);
  };
  if (t?.kind !== 'file') await keep();
  if (!t) return { checkpoint: null };
  const tree = t.kind === 'tree' ? treeDone(t) : undefined;
  if (!changes(t)) {
    if (t.kind === 'tree') await recordTree(p, t, tree!, [], null);
    return { checkpoint: null, ...(tree ? { tree } : {}) };
  }
  const lock = t.kind === 'index' ? null : await lockFor(p.repo, t.lock, t.warnings, faults.afterLock);
  let taken: Taken;
  let late: RecordCommit[] = [];
  try {
    if (t.kind === 'file') await sameOnDisk(t.judged);
    taken = t.kind === 'file' ? await checkpointFile(p, t) : await (await import('../git/checkpoint.js')).checkpoint(p.repo, t.checkpoint);
    fault(faults.afterCheckpoint);
    if (t.kind === 'index') await writeIndex(p.repo.root, t);
    else if (t.kind === 'file') await writeFile(t);
    else late = await writeTree(p, t, tree!, taken);
  } finally {
    await lock?.release();
  }
  if (t.kind === 'tree') await recordTree(p, t, tree!, late, taken);
  return { checkpoint: taken, ...(tree ? { tree } : {}) };
}

function fault(name: string | undefined): void {
  if (name) faultPoint(name);
}

/** Is there anything to write? Otherwise no lock and no checkpoint. */
function changes(t: Target): boolean {
  if (t.kind === 'index') return t.unstage.length > 0 || t.stage.length > 0;
  if (t.kind === 'file') return true;
  return t.files.some((f) => toWrite(f.outcome) && f.outcome.action !== 'conflict');
}

async function lockFor(repo: Repo, opts: LockOptions, warnings: string[], afterLock: string | undefined): Promise<{ release(): Promise<void> }> {
  const { lockTree, staleLockNotice } = await import('../worktree/lock.js');
  const lock = await lockTree(repo, opts.holder, opts.waitMs !== undefined ? { waitMs: opts.waitMs } : {});
  const stale = staleLockNotice(lock);
  if (stale) warnings.push(stale);
  fault(afterLock);
  return lock;
}

// ---------------------------------------------------------------------------
// index (check)

/**
 * Unstage what was refused; stage each result as a blob. For a strategy the
 * file on disk is rewritten too, but only when it still holds exactly what
 * was staged, so an edit made after `git add` is never overwritten; for some
 * hunks the work tree keeps the whole change (as with `git add -p`).
 */
async function writeIndex(cwd: string, t: IndexTarget): Promise<void> {
  const { stageBlobs, unstagePaths, writeBlob } = await import('../git/staging.js');
  if (t.unstage.length > 0) await unstagePaths(cwd, t.unstage);
  if (t.stage.length === 0) return;
  const [{ writeFileAtomic }, { blobId }, { readCurrent }] = await Promise.all([import('../worktree/atomic.js'), import('../git/merge.js'), import('../worktree/current.js')]);
  const index = [];
  for (const s of t.stage) {
    const oid = await writeBlob(cwd, s.content);
    const onDisk = s.worktreeIfHolds === null ? null : await readCurrent(cwd, s.path);
    if (onDisk !== null && blobId(onDisk.content) === s.worktreeIfHolds) await writeFileAtomic(cwd, s.path, s.content, s.mode);
    index.push({ mode: s.mode, oid, path: s.path });
  }
  await stageBlobs(cwd, index);
}

// ---------------------------------------------------------------------------
// file (write)

/** The file on disk is still what was judged; another writer got there first otherwise. */
async function sameOnDisk({ abs, rel, old, content }: FileTarget['judged']): Promise<void> {
  const [{ readFile, readlink }, { statOnDisk }] = await Promise.all([import('node:fs/promises'), import('../worktree/atomic.js')]);
  const now = await statOnDisk(abs);
  let same = now === null ? old === null : old !== null && now.mode === old.mode;
  if (same && now !== null) {
    const onDisk = now.mode === MODE.symlink ? Buffer.from(await readlink(abs, { encoding: 'buffer' })) : await readFile(abs);
    same = content !== null && onDisk.equals(content);
  }
  if (!same) throw new GuardError('E_CHANGED', `${rel} changed on disk while guard was judging the write (another writer?)`, 'nothing was written; run the command again to judge the new content');
}

/** The file's checkpoint, with the records and the session's first touch (it names the checkpoint) in its one fast-import. */
async function checkpointFile(p: ApplyPlan, t: FileTarget): Promise<Taken> {
  const [{ checkpoint }, { sessionEvent }] = await Promise.all([import('../git/checkpoint.js'), import('../git/session-base.js')]);
  const s = t.session;
  const first = (cp: Taken) => (s ?? []).map((e) => sessionEvent(cp.commit, { session: e.id, checkpoint: cp.id, path: e.path, worktree: e.worktree, outcome: e.outcome, ...(e.store ? { store: e.store } : {}) }, p.now));
  return checkpoint(p.repo, { ...t.checkpoint, records: (cp) => [...first(cp), ...p.records] });
}

async function writeFile(t: FileTarget): Promise<void> {
  const { commitWrite } = await import('../worktree/atomic.js');
  faultPoint('write:before-rename');
  await commitWrite(t.staged);
  faultPoint('write:after-rename');
}

// ---------------------------------------------------------------------------
// tree (review)

const toWrite = (o: FileOutcome) => o.action === 'write' || o.action === 'delete' || o.action === 'merge' || o.action === 'conflict';

/** Before anything is merged: what the plan already knows cannot be (when nothing is merged, every file to write is a conflict). */
function treeDone(t: TreeTarget): TreeDone {
  const done: TreeDone = { merged: 0, staged: [], blobs: new Map(), conflicts: new Set() };
  if (!changes(t)) for (const f of t.files) if (toWrite(f.outcome)) done.conflicts.add(f.outcome.path);
  return done;
}

/** A refusal's rejected ref: parent the base, tree the base with the proposal (`git diff R^ R` shows it). */
export function refusal(t: Pick<TreeTarget, 'lane' | 'ctx' | 'refs'>, f: TreeFile, now: Date): RecordCommit {
  const { outcome: o, entry: e } = f;
  const ref = newRef(REFS.rejected, now);
  t.refs.set(o.path, ref);
  const rec = decisionRecord(f.file.c, o.decision === 'blocked' ? 'blocked' : 'rejected', o.decider, { ref, ...(e.newOid ? { blob: e.newOid } : {}), ...(o.strategy ? { strategy: o.strategy } : {}) });
  return { ref, parent: t.lane.base, message: rejectedMessage(t.ctx, rec), changes: proposalChanges(e) };
}

/** The tree cannot take this file without writing outside itself: it is blocked, with the reason, and said. */
export async function blockFile(f: TreeFile, why: string, warnings: string[]): Promise<void> {
  // classify (and its compiled patterns) loads only here: write's path imports this module and loads it late, beside git
  const { withReason } = await import('../core/classify.js');
  const o = f.outcome;
  Object.assign(o, { decision: 'blocked', action: 'blocked', keep: 'proposal', content: undefined });
  delete o.taken;
  delete o.strategy;
  f.file.c = withReason(f.file.c, { rule: 'not-written', text: `not written: ${why}` });
  warnings.push(`${o.path}: not written: ${why}`);
}

/** Merge and stage; returns the refusals to keep of files the tree could not take after all. */
async function writeTree(p: ApplyPlan, t: TreeTarget, done: TreeDone, taken: Taken): Promise<RecordCommit[]> {
  const root = p.repo.root;
  const late: RecordCommit[] = [];
  // A deletion that clears the way (a file that became a folder, or the reverse) goes before what takes its
  // place; everything else in plan order.
  const writes = t.files.filter((f) => f.outcome.action !== 'delete' && toWrite(f.outcome)).map((f) => f.entry.path);
  const clears = (f: TreeFile) => f.outcome.action === 'delete' && writes.some((w) => w.startsWith(`${f.entry.path}/`) || f.entry.path.startsWith(`${w}/`));
  const ordered = [...t.files.filter(clears), ...t.files.filter((f) => !clears(f))];
  try {
    for (const f of ordered) {
      if (!toWrite(f.outcome)) continue;
      try {
        const r = await mergeOne(root, t, f);
        if (r.conflict) done.conflicts.add(f.outcome.path);
        else {
          done.staged.push(...r.paths);
          done.merged++;
        }
        if (r.blob) done.blobs.set(f.outcome.path, r.blob);
        faultPoint('review:between-files');
      } catch (err) {
        // A folder there became a symlink leading out, or a folder stands where the file goes (or a file where
        // its folder goes): never write there.
        const fsCode = (err as NodeJS.ErrnoException).code;
        const inTheWay = fsCode === 'ENOTDIR' || fsCode === 'EISDIR' || fsCode === 'EEXIST' || fsCode === 'ENOTEMPTY';
        if (!inTheWay && (!(err instanceof GuardError) || (err.code !== 'E_PATH_ESCAPE' && err.code !== 'E_USAGE'))) throw err;
        const kept = t.refs.has(f.outcome.path);
        await blockFile(f, inTheWay ? 'the main tree has a file where its folder goes, or a folder where the file goes' : (err as Error).message, t.warnings);
        if (!kept) late.push(refusal(t, f, p.now));
      }
    }
    // staged in the order written: git's index takes x/y out before x goes in as a file
    faultPoint('review:before-stage');
    const { stagePaths } = await import('../git/staging.js');
    await stagePaths(root, done.staged);
  } catch (err) {
    const code = err instanceof GuardError ? err.code : 'E_INTERNAL';
    throw new GuardError(code, `guard review stopped while merging into the main tree: ${(err as Error).message}`, `undo what was written: guard restore ${taken.id} --staged`);
  }
  return late;
}

/**
 * Put one planned result into the tree. The plan chose the action from what
 * the tree held when it was read; under the lock it is read again, and a
 * file that changed since is a conflict (left as it is).
 */
async function mergeOne(root: string, t: TreeTarget, { outcome: o, file: f, entry: e }: TreeFile): Promise<{ conflict: boolean; paths: string[]; blob?: string }> {
  const conflict = { conflict: true, paths: [] as string[] };
  if (o.action === 'conflict') return conflict;
  const [{ readCurrent }, { removeFile, writeFileAtomic }, { blobId, mergeFile }] = await Promise.all([import('../worktree/current.js'), import('../worktree/atomic.js'), import('../git/merge.js')]);
  // x/x -> x: the folder at x goes with its last file (refuseUnwritable saw it holds nothing else)
  const nested = e.oldPath !== undefined && (e.path.startsWith(`${e.oldPath}/`) || e.oldPath.startsWith(`${e.path}/`));
  const folderAt = (err: unknown) => (nested && err instanceof GuardError && err.code === 'E_USAGE' ? null : Promise.reject(err));
  const [now, nowOld] = await Promise.all([readCurrent(root, e.path).catch(folderAt), e.oldPath !== undefined ? readCurrent(root, e.oldPath) : null]);
  const same = (a: { content: Buffer; mode: string } | null, b: { content: Buffer; mode: string } | null | undefined) =>
    a === null || b === null || b === undefined ? a === (b ?? null) : a.content.equals(b.content) && a.mode === b.mode;
  if (!same(now, f.current?.at) || (e.oldPath !== undefined && !same(nowOld, f.current?.atOld))) return conflict;
  const content = o.content ?? null;
  if (o.action === 'delete') {
    await removeFile(root, e.oldPath ?? e.path);
    return { conflict: false, paths: [e.oldPath ?? e.path] };
  }
  const mode = o.mode ?? now?.mode ?? MODE.file;
  if (o.action === 'write') {
    // x -> x/x, or x/x -> x: the old path stands where the new one goes, so it goes first (the checkpoint holds it)
    if (nested && nowOld !== null) await removeFile(root, e.oldPath!);
    await writeFileAtomic(root, e.path, content!, mode);
    if (e.oldPath !== undefined && nowOld !== null && !nested) await removeFile(root, e.oldPath);
    return { conflict: false, paths: e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path], blob: blobId(content!) };
  }
  const m = await mergeFile(root, now!.content, f.base ?? Buffer.alloc(0), content!, ['main', 'base', `lane ${t.lane.name}`]);
  await writeFileAtomic(root, e.path, m.content, mode);
  if (m.conflicts > 0) return conflict;
  return { conflict: false, paths: [e.path], blob: blobId(m.content) };
}

/** Once the tree holds the result (and is unlocked): late refusals, the decision record of every file, then the commit where asked. */
async function recordTree(p: ApplyPlan, t: TreeTarget, done: TreeDone, late: RecordCommit[], taken: Taken | null): Promise<void> {
  if (late.length > 0) await writeRecords(p.repo.root, late, p.now);
  faultPoint('review:before-record');
  const records = decisionRecords(t.plan, t.files.map((f) => f.file.c), t.refs, done.blobs, done.conflicts);
  await writeRecords(p.repo.root, [{ ref: t.record, parent: null, message: batchMessage(t.ctx, records), changes: [] }], p.now);
  if (!t.commit || done.merged === 0) return;
  if (done.conflicts.size > 0) {
    done.commitWarning = 'not committed: resolve the conflicts, then commit';
    return;
  }
  const [{ DELETION_BLOB, approvalTrailer }, { commitPaths }] = await Promise.all([import('../git/approvals.js'), import('../git/commits.js')]);
  const trailers = t.files
    .filter((f) => f.file.c.needsApproval && f.outcome.decision === 'approved')
    .map((f) => approvalTrailer(f.outcome.path, done.blobs.get(f.outcome.path) ?? DELETION_BLOB));
  const text = t.commit.message.trimEnd() + (trailers.length ? `\n\n${trailers.join('\n')}\n` : '\n');
  try {
    // the hook's check honours this review's record: the person is not asked again about what they approved
    done.commit = await commitPaths(p.repo.root, done.staged, text, { GUARD_APPROVED_RECORD: t.record });
  } catch (err) {
    if (!(err instanceof GuardError)) throw err;
    // the merge is done and staged; only the commit failed (identity, a hook, signing)
    done.commitFailed = err.message;
    done.commitWarning = `not committed: ${err.message}; the merge is in the work tree and staged: commit it yourself, or undo it with guard restore ${taken?.id ?? null} --staged`;
  }
}
