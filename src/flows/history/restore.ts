import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../../core/errors.js';
import { quotePath } from '../../core/quote.js';
import { catFileBatch } from '../../git/catfile.js';
import { resolveInside } from '../../worktree/atomic.js';
import {
  checkRestoreHere,
  findCheckpoint,
  type RestoreChange,
  type RestoreResult,
} from '../../git/restore.js';
import { apply } from '../../apply/apply.js';
import { openRepo } from '../../git/repo.js';
import { laneOf, type FlowOptions } from '../context.js';

export interface RestoreFlowOptions extends FlowOptions {
  /** A checkpoint id from `guard log`, or its full ref name. */
  checkpoint: string;
  /** Files or folders, relative to cwd; every path that differs when empty. */
  paths: readonly string[];
  staged: boolean;
}

export interface RestoreFlowResult {
  command: 'restore';
  checkpoint: string;
  changes: RestoreChange[];
  staged: string[];
  skipped: RestoreResult['skipped'];
  notRestored: RestoreResult['notRestored'];
  /** `guard restore UNDO` puts back the state from before this restore. */
  undo: string;
  /** Said on stderr (a stale lock of a killed guard was taken over). */
  warnings: string[];
}

const LOCK_WAIT_MS = 10_000;

export async function restore(opts: RestoreFlowOptions): Promise<RestoreFlowResult> {
  const repo = await openRepo(opts.cwd);
  const target = await findCheckpoint(repo.root, opts.checkpoint);
  // Each path proved inside the work tree before anything happens; git wants them relative to the root.
  const rels: string[] = [];
  for (const p of opts.paths) {
    const shown = path.isAbsolute(p) ? p : path.relative(repo.root, path.resolve(opts.cwd, p));
    if (shown === '') continue; // the whole work tree: same as no paths
    rels.push((await resolveInside(repo.root, shown)).rel);
  }
  const whole = opts.paths.length === 0 || rels.length < opts.paths.length;
  if (!whole)
    await namedPathsExist(repo.root, {
      tree: target.tree,
      id: target.id,
      commit: target.commit,
      rels,
      kept: target.kept,
    });
  const paths = whole ? undefined : rels;
  checkRestoreHere(repo, target, paths);
  // One writer at a time: a review or write into this tree finishes first (restore is short; it waits).
  const warnings: string[] = [];
  const lock = { holder: `guard restore ${target.id}`, waitMs: LOCK_WAIT_MS };
  const { checkpoint: undo, done: r } = await apply({
    gate: 'restore',
    repo,
    now: new Date(),
    records: [],
    target: {
      kind: 'restore',
      lock,
      warnings,
      from: target,
      ...(paths ? { paths } : {}),
      staged: opts.staged,
      lane: laneOf(repo.root),
    },
  });
  return {
    command: 'restore',
    checkpoint: target.id,
    changes: r.changes,
    staged: r.staged,
    skipped: r.skipped,
    notRestored: r.notRestored,
    undo: undo!.id,
    warnings,
  };
}

interface NamedPaths {
  tree: string;
  id: string;
  /** The checkpoint's commit: a hook call's has no ref of its own (a session chain holds it). */
  commit: string;
  rels: readonly string[];
  kept: string | null;
}

/**
 * A path named on the command line that the checkpoint does not hold and the
 * work tree has no file at is a typo, not "nothing to restore": said, with the
 * hint, before anything is written. One cat-file for all the paths.
 */
async function namedPathsExist(
  root: string,
  { tree, id, commit, rels, kept }: NamedPaths,
): Promise<void> {
  const asked = rels.filter((p) => !p.includes('\n'));
  // (and in the tree of ignored and nested files the checkpoint kept, git/kept.ts: same cat-file)
  const found = await catFileBatch(
    root,
    [...asked.map((p) => `${tree}:${p}`), ...(kept ? asked.map((p) => `${kept}:${p}`) : [])],
    0,
    () => true,
  );
  for (const [i, p] of asked.entries()) {
    if (found[i] || found[asked.length + i]) continue;
    if (
      await lstat(path.join(root, p)).then(
        () => true,
        () => false,
      )
    )
      continue;
    throw new GuardError(
      'E_USAGE',
      `checkpoint ${id} has no ${quotePath(p)}, and neither has the work tree`,
      `git ls-tree -r --name-only ${commit} lists what it holds`,
    );
  }
}
