import { GuardError } from '../core/errors.js';
import { MODE, approvalKind } from '../core/modes.js';
import { decisionRecords, type FileOutcome, type Plan, type PlanFile } from '../core/plan.js';
import { decisionRecord, type RecordContext } from '../core/record.js';
import type { CheckpointOptions } from '../git/checkpoint.js';
import type { DiffEntry } from '../git/diff.js';
import { faultPoint } from '../runtime/faults.js';
import {
  REFS,
  decisionBatch,
  newRef,
  proposalChanges,
  rejectedCommit,
  writeRecords,
  type RecordCommit,
} from '../git/records.js';
import type { ApplyPlan, ApplyLockOptions, Steps, Taken } from './steps.js';
import { blobId } from '../git/blob-id.js';

/** review: files merged into a work tree (the main tree) and staged, then recorded and committed. */
export interface TreeTarget {
  kind: 'tree';
  checkpoint: CheckpointOptions;
  lock: ApplyLockOptions;
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
  /** Refusals made while merging (a file the tree could not take after all): recorded once the tree is unlocked. */
  late: RecordCommit[];
}

/**
 * The records first; under the lock the checkpoint, then each file written,
 * deleted or merged onto what the tree holds now (a file changed since it
 * was read is a conflict) and staged; then, unlocked, the decision record
 * (it names the blobs written and the conflicts) and the commit where asked.
 */
export const treeSteps: Steps<TreeTarget, TreeDone> = {
  recordsFirst: true,
  changes: (t) => treeChanges(t),
  nothing: async (p, t) => {
    const done = treeDone(t);
    await recordTree(p, t, { done, late: [], taken: null });
    return done;
  },
  lock: (t) => ({ opts: t.lock, warnings: t.warnings }),
  checkpoint: async (p, t) =>
    (await import('../git/checkpoint.js')).checkpoint(p.repo, t.checkpoint),
  write: async (p, t, taken) => {
    const done = treeDone(t);
    done.late = await writeTree(p, t, done, taken!);
    return done;
  },
  after: (p, t, taken, done) => recordTree(p, t, { done, late: done.late, taken }),
};

function treeChanges(t: TreeTarget): boolean {
  return t.files.some((f) => toWrite(f.outcome) && f.outcome.action !== 'conflict');
}

const toWrite = (o: FileOutcome) =>
  o.action === 'write' || o.action === 'delete' || o.action === 'merge' || o.action === 'conflict';

/** Before anything is merged: what the plan already knows cannot be (when nothing is merged, every file to write is a conflict). */
function treeDone(t: TreeTarget): TreeDone {
  const done: TreeDone = {
    merged: 0,
    staged: [],
    blobs: new Map(),
    conflicts: new Set(),
    late: [],
  };
  if (!treeChanges(t))
    for (const f of t.files) if (toWrite(f.outcome)) done.conflicts.add(f.outcome.path);
  return done;
}

/** A refusal's rejected ref: parent the base, tree the base with the proposal (`git diff R^ R` shows it). */
export function refusal(
  t: Pick<TreeTarget, 'lane' | 'ctx' | 'refs'>,
  f: TreeFile,
  now: Date,
): RecordCommit {
  const { outcome: o, entry: e } = f;
  const ref = newRef(REFS.rejected, now);
  t.refs.set(o.path, ref);
  const rec = decisionRecord(
    f.file.c,
    o.decision === 'blocked' ? 'blocked' : 'rejected',
    o.decider,
    {
      ref,
      ...(e.newOid ? { blob: e.newOid } : {}),
      ...(e.newOid && approvalKind(e.newMode) !== 'file' ? { mode: e.newMode! } : {}),
      ...(o.strategy ? { strategy: o.strategy } : {}),
    },
  );
  return rejectedCommit(t.ctx, {
    kept: rec,
    ref,
    parent: t.lane.base,
    changes: proposalChanges(e),
  });
}

/** The tree cannot take this file without writing outside itself: it is blocked, with the reason, and said. */
export async function blockFile(f: TreeFile, why: string, warnings: string[]): Promise<void> {
  // classify (and its compiled patterns) loads only here: write's path imports this module and loads it late, beside git
  const { withReason } = await import('../core/classify.js');
  const o = f.outcome;
  Object.assign(o, {
    decision: 'blocked',
    action: 'blocked',
    keep: 'proposal',
    content: undefined,
  });
  delete o.taken;
  delete o.strategy;
  f.file.c = withReason(f.file.c, { rule: 'not-written', text: `not written: ${why}` });
  warnings.push(`${o.path}: not written: ${why}`);
}

/** Merge and stage; returns the refusals to keep of files the tree could not take after all. */
async function writeTree(
  p: ApplyPlan<TreeTarget>,
  t: TreeTarget,
  done: TreeDone,
  taken: Taken,
): Promise<RecordCommit[]> {
  const root = p.repo.root;
  const late: RecordCommit[] = [];
  // A deletion that clears the way (a file that became a folder, or the reverse) goes before what takes its
  // place; everything else in plan order.
  const writes = t.files
    .filter((f) => f.outcome.action !== 'delete' && toWrite(f.outcome))
    .map((f) => f.entry.path);
  const clears = (f: TreeFile) =>
    f.outcome.action === 'delete' &&
    writes.some((w) => w.startsWith(`${f.entry.path}/`) || f.entry.path.startsWith(`${w}/`));
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
        const inTheWay =
          fsCode === 'ENOTDIR' ||
          fsCode === 'EISDIR' ||
          fsCode === 'EEXIST' ||
          fsCode === 'ENOTEMPTY';
        if (
          !inTheWay &&
          (!(err instanceof GuardError) || (err.code !== 'E_PATH_ESCAPE' && err.code !== 'E_USAGE'))
        )
          throw err;
        const kept = t.refs.has(f.outcome.path);
        await blockFile(
          f,
          inTheWay
            ? 'the main tree has a file where its folder goes, or a folder where the file goes'
            : (err as Error).message,
          t.warnings,
        );
        if (!kept) late.push(refusal(t, f, p.now));
      }
    }
    // staged in the order written: git's index takes x/y out before x goes in as a file
    faultPoint('review:before-stage');
    const { stagePaths } = await import('../git/staging.js');
    await stagePaths(root, done.staged);
  } catch (err) {
    const code = err instanceof GuardError ? err.code : 'E_INTERNAL';
    throw new GuardError(
      code,
      `guard review stopped while merging into the main tree: ${(err as Error).message}`,
      `undo what was written: guard restore ${taken.id} --staged`,
    );
  }
  return late;
}

/**
 * Put one planned result into the tree. The plan chose the action from what
 * the tree held when it was read; under the lock it is read again, and a
 * file that changed since is a conflict (left as it is).
 */
async function mergeOne(
  root: string,
  t: TreeTarget,
  { outcome: o, file: f, entry: e }: TreeFile,
): Promise<{ conflict: boolean; paths: string[]; blob?: string }> {
  const conflict = { conflict: true, paths: [] as string[] };
  if (o.action === 'conflict') return conflict;
  const [{ readCurrent }, { removeFile, writeFileAtomic }, { mergeFile }] = await Promise.all([
    import('../worktree/current.js'),
    import('../worktree/atomic.js'),
    import('../git/merge.js'),
  ]);
  // x/x -> x: the folder at x goes with its last file (refuseUnwritable saw it holds nothing else)
  const nested =
    e.oldPath !== undefined &&
    (e.path.startsWith(`${e.oldPath}/`) || e.oldPath.startsWith(`${e.path}/`));
  const folderAt = (err: unknown) =>
    nested && err instanceof GuardError && err.code === 'E_USAGE' ? null : Promise.reject(err);
  const [now, nowOld] = await Promise.all([
    readCurrent(root, e.path).catch(folderAt),
    e.oldPath !== undefined ? readCurrent(root, e.oldPath) : null,
  ]);
  const same = (
    a: { content: Buffer; mode: string } | null,
    b: { content: Buffer; mode: string } | null | undefined,
  ) =>
    a === null || b === null || b === undefined
      ? a === (b ?? null)
      : a.content.equals(b.content) && a.mode === b.mode;
  if (!same(now, f.current?.at) || (e.oldPath !== undefined && !same(nowOld, f.current?.atOld)))
    return conflict;
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
    return {
      conflict: false,
      paths: e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path],
      blob: blobId(content!, 'sha1'),
    };
  }
  const m = await mergeFile(root, {
    ours: now!.content,
    base: f.base ?? Buffer.alloc(0),
    theirs: content!,
    labels: ['main', 'base', `lane ${t.lane.name}`],
  });
  await writeFileAtomic(root, e.path, m.content, mode);
  if (m.conflicts > 0) return conflict;
  return { conflict: false, paths: [e.path], blob: blobId(m.content, 'sha1') };
}

interface TreeRecordInput {
  done: TreeDone;
  late: RecordCommit[];
  taken: Taken | null;
}

/** Once the tree holds the result (and is unlocked): late refusals, the decision record of every file, then the commit where asked. */
async function recordTree(
  p: ApplyPlan<TreeTarget>,
  t: TreeTarget,
  { done, late, taken }: TreeRecordInput,
): Promise<void> {
  if (late.length > 0) await writeRecords(p.repo.root, late, p.now);
  faultPoint('review:before-record');
  const records = decisionRecords(
    t.plan,
    t.files.map((f) => f.file.c),
    {
      refs: t.refs,
      blobs: done.blobs,
      modes: new Map(t.files.map((f) => [f.outcome.path, f.entry.newMode])),
      conflicts: done.conflicts,
    },
  );
  await writeRecords(p.repo.root, [decisionBatch(t.ctx, records, p.now, t.record)], p.now);
  if (!t.commit || done.merged === 0) return;
  if (done.conflicts.size > 0) {
    done.commitWarning = 'not committed: resolve the conflicts, then commit';
    return;
  }
  const [{ DELETION_BLOB, approvalTrailer }, { commitPaths }] = await Promise.all([
    import('../git/approvals.js'),
    import('../git/commits.js'),
  ]);
  const trailers = t.files
    .filter((f) => f.file.c.needsApproval && f.outcome.decision === 'approved')
    .map((f) =>
      approvalTrailer(
        f.outcome.path,
        done.blobs.get(f.outcome.path) ?? DELETION_BLOB,
        f.outcome.mode ?? f.entry.newMode,
      ),
    );
  const text =
    t.commit.message.trimEnd() + (trailers.length ? `\n\n${trailers.join('\n')}\n` : '\n');
  try {
    // the hook's check honours this review's record: the person is not asked again about what they approved
    done.commit = await commitPaths(p.repo.root, done.staged, text, {
      GUARD_APPROVED_RECORD: t.record,
    });
  } catch (err) {
    if (!(err instanceof GuardError)) throw err;
    // the merge is done and staged; only the commit failed (identity, a hook, signing)
    done.commitFailed = err.message;
    done.commitWarning = `not committed: ${err.message}; the merge is in the work tree and staged: commit it yourself, or undo it with guard restore ${taken?.id ?? null} --staged`;
  }
}
