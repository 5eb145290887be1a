import { checkpoint, type Checkpoint } from '../git/checkpoint.js';
import { faultPoint } from '../runtime/faults.js';
import { ZERO_OID } from '../git/records.js';
import {
  planRestore,
  type CheckpointInfo,
  type RawEntry,
  type RestoreChange,
  type RestoreResult,
} from '../git/restore.js';
import { git } from '../git/run.js';
import { removeFile, writeFileAtomic } from '../worktree/atomic.js';
import type { ApplyLockOptions, Steps } from './steps.js';

/** restore: the work tree (and with `staged` the index) put back as a checkpoint holds it. */
export interface RestoreTarget {
  kind: 'restore';
  lock: ApplyLockOptions;
  /** Said on stderr: a stale lock of a killed guard was taken over. */
  warnings: string[];
  from: CheckpointInfo;
  /** Work-tree paths (relative to the root); every path that differs when absent. */
  paths?: readonly string[];
  staged: boolean;
  lane: string | null;
}

export type RestoreDone = Omit<RestoreResult, 'undo'>;

/**
 * Under the tree lock: the undo checkpoint (`guard restore UNDO` puts back
 * the state from before), then what differs, read against it
 * (git/restore.ts planRestore), removed and written file by file, then the
 * index entries.
 */
export const restoreSteps: Steps<RestoreTarget, RestoreDone, Checkpoint> = {
  recordsFirst: true,
  changes: () => true,
  lock: (t) => ({ opts: t.lock, warnings: t.warnings }),
  checkpoint: async (p, t) => {
    const undo = await checkpoint(p.repo, {
      reason: `before guard restore ${t.from.id}`,
      command: 'restore',
      lane: t.lane,
    });
    faultPoint('restore:after-undo-checkpoint');
    return undo;
  },
  write: async (p, t, undo) => {
    const plan = await planRestore(p.repo, t.from, undo!, {
      ...(t.paths ? { paths: t.paths } : {}),
      staged: t.staged,
    });
    const changes = await writeBack(p.repo.root, plan, plan.notRestored);
    const staged = await restage(p.repo.root, plan.index, plan.notRestored);
    return {
      changes: sortByPath(changes),
      staged,
      skipped: plan.skipped,
      notRestored: plan.notRestored,
    };
  },
};

export function sortByPath(changes: RestoreChange[]): RestoreChange[] {
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Removals first: a folder that became a file (or the reverse) must be cleared before the write.
 * Past this point a file that fails is reported (`notRestored`) and the rest still restored: the
 * undo checkpoint is taken, so stopping half way would only leave more to untangle.
 */
async function writeBack(
  cwd: string,
  {
    toRemove,
    toWrite,
    blobs,
  }: Pick<Awaited<ReturnType<typeof planRestore>>, 'toRemove' | 'toWrite' | 'blobs'>,
  notRestored: RestoreResult['notRestored'],
): Promise<RestoreChange[]> {
  const changes: RestoreChange[] = [];
  const failed = (e: RawEntry, err: unknown) =>
    notRestored.push({
      path: e.path,
      why: `not restored: ${err instanceof Error ? err.message : String(err)}`,
    });
  for (const e of toRemove) {
    try {
      if (await removeFile(cwd, e.path)) changes.push({ path: e.path, action: 'removed' });
    } catch (err) {
      failed(e, err);
    }
    faultPoint('restore:between-files');
  }
  for (const [i, e] of toWrite.entries()) {
    try {
      await writeFileAtomic(cwd, e.path, blobs[i]!.data!, e.mode);
      changes.push({ path: e.path, action: e.letter === 'D' ? 'recreated' : 'rewritten' });
    } catch (err) {
      failed(e, err);
    }
    faultPoint('restore:between-files');
  }
  return changes;
}

/** The index entries back as they were staged; a path whose file could not be put back keeps its entry too. */
async function restage(
  cwd: string,
  entries: RawEntry[],
  notRestored: RestoreResult['notRestored'],
): Promise<string[]> {
  const untouched = new Set(notRestored.map((s) => s.path));
  const index = entries.filter(
    (e) => !untouched.has(e.path) && !notRestored.some((s) => e.path.startsWith(s.path + '/')),
  );
  if (index.length === 0) return [];
  // https://git-scm.com/docs/git-update-index#_using_index_info  "<mode> SP <oid> TAB <path>"; mode 0 removes
  const lines = index.map((e) =>
    e.letter === 'A' ? `0 ${ZERO_OID}\t${e.path}` : `${e.mode} ${e.oid}\t${e.path}`,
  );
  faultPoint('restore:before-stage');
  await git(['update-index', '-z', '--index-info'], { cwd, input: lines.join('\0') + '\0' });
  return index.map((e) => e.path);
}
