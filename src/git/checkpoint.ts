import { randomBytes } from 'node:crypto';
import { copyFile, readdir, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { RECORD_VERSION, parseRecordMessage } from '../core/record.js';
import { faultPoint } from './faults.js';
import type { Repo } from './repo.js';
import { REFS, newRef } from './records.js';
import { keepRawBytes } from './rawbytes.js';
import { git, splitZ } from './run.js';
import { processAlive as alive } from './alive.js';

export interface Checkpoint {
  /** The ref, e.g. refs/guard/checkpoints/20261123T020512Z-9f3ab2c1; `guard restore` takes its last part. */
  ref: string;
  id: string;
  commit: string;
  tree: string;
  /** The index's tree, when what was staged differed from the work tree (else null). */
  index: string | null;
  /** True when the state had not changed since the last checkpoint, which was reused. */
  reused: boolean;
}

export interface CheckpointOptions {
  reason: string;
  command: string;
  lane: string | null;
  /** Only these work-tree paths are (re)hashed; the rest is taken from the index as it is. */
  paths?: readonly string[];
  now?: Date;
  /** The agent session this checkpoint is taken for (guard hook): recorded in its message. */
  session?: SessionMeta;
}

/** Who a checkpoint or decision was for: harness, session id and tool-call id (DESIGN.md "session"). */
export interface SessionMeta {
  harness: string;
  session: string;
  toolCall: string | null;
}

/** Who commits guard's own records: never the user's identity, which may be unset. */
export const GUARD_IDENTITY = {
  GIT_AUTHOR_NAME: 'guard',
  GIT_AUTHOR_EMAIL: 'guard@localhost',
  GIT_COMMITTER_NAME: 'guard',
  GIT_COMMITTER_EMAIL: 'guard@localhost',
} as const;

/** The whole work tree but guard's own folder (lanes live there). */
// (.guard/ itself is kept out by .git/info/exclude, which init and start
// ensure: an exclude pathspec on an ignored folder makes `git add` fail.)
// Nor the temp files of guard's own atomic writes (a killed guard's, or a live one's
// mid-write): a checkpoint holding one would bring it back, even staged, on restore.
const WHOLE_TREE = [':(top)', ':(top,exclude,glob)**/.*.guard-tmp-*'];

/** How many recent checkpoints are looked at for one to reuse. */
const REUSE_WINDOW = 50;

function realIndex(repo: Repo): string {
  // Inside a hook git points GIT_INDEX_FILE at the index being committed.
  const env = process.env.GIT_INDEX_FILE;
  return env ? path.resolve(repo.root, env) : path.join(repo.gitDir, 'index');
}

export function checkpointId(ref: string): string {
  return ref.slice(REFS.checkpoints.length);
}

/**
 * Record the full state of a work tree (tracked files and untracked files
 * that are not ignored) as a commit under refs/guard/checkpoints/, without
 * touching the user's index, work tree or stash:
 *
 *   cp .git/index TMP              seeded, so unchanged files are not re-hashed
 *   GIT_INDEX_FILE=TMP git add -A  (or -- PATHS)
 *   GIT_INDEX_FILE=TMP git write-tree
 *   git commit-tree TREE -p HEAD   (guard's identity, no hooks, no signing)
 *   git update-ref REF COMMIT ""   ("" = the ref must not exist yet: unique under concurrency)
 */
export async function checkpoint(repo: Repo, opts: CheckpointOptions): Promise<Checkpoint> {
  const tmpIndex = path.join(repo.gitDir, `guard-index-${process.pid}-${randomBytes(4).toString('hex')}`);
  // A second copy for a whole-tree checkpoint: its tree is the index as it is (what is
  // staged), kept too so that a staged version that differs from the file is not lost.
  const stagedIndex = opts.paths ? null : `${tmpIndex}-staged`;
  const env = { GIT_INDEX_FILE: tmpIndex };
  const cwd = repo.root;
  try {
    let seeded = false;
    try {
      await copyFile(realIndex(repo), tmpIndex);
      // Keep the index's mtime on the copy: git's racy-clean check compares each
      // entry's mtime with the index file's, and a fresh mtime would make a file
      // rewritten in the same second with the same size look unchanged (its
      // change would be missing from the checkpoint).
      // https://git-scm.com/docs/racy-git
      const st = await stat(realIndex(repo));
      await utimes(tmpIndex, st.atime, st.mtime);
      if (stagedIndex) await copyFile(tmpIndex, stagedIndex);
      seeded = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // Only a whole-tree checkpoint is reused, and only for another whole-tree one: a
    // partial tree that happens to equal an older full one vouches for less than it.
    // (Looked up alongside the add: it reads refs, not the work tree.)
    const [, head, previous, , staged] = await Promise.all([
      opts.paths
        ? opts.paths.length > 0
          ? // update-index, not `add -A -- PATH`: a path that does not exist yet (the
            // file guard write is about to create) is skipped instead of failing the pathspec.
            git(['update-index', '--add', '--remove', '-z', '--stdin'], { cwd, env, input: opts.paths.join('\0') + '\0' })
          : Promise.resolve(null)
        : git(['add', '-A', '--ignore-errors', '--', ...WHOLE_TREE], { cwd, env }),
      git(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], { cwd, okCodes: [1] }),
      opts.paths ? null : lastCheckpoint(repo),
      removeStaleIndexes(repo.gitDir),
      stagedIndex && seeded ? git(['write-tree'], { cwd, env: { GIT_INDEX_FILE: stagedIndex }, okCodes: [128] }) : null,
    ]);
    // null when the index could not be written as a tree (a merge in progress): only the work tree is kept
    const indexTree = staged && staged.code === 0 ? staged.stdout.toString().trim() : null;
    faultPoint('checkpoint:after-add');
    let tree = (await git(['write-tree'], { cwd, env })).stdout.toString().trim();
    // What add hashed anew is kept as the bytes on disk, not git's clean (eol) form.
    const hashedAnew = opts.paths ?? (indexTree && indexTree !== tree ? await changedPaths(cwd, indexTree, tree) : []);
    if (await keepRawBytes(cwd, env, hashedAnew)) tree = (await git(['write-tree'], { cwd, env })).stdout.toString().trim();
    const headOid = head.code === 0 ? head.stdout.toString().trim() : null;

    const index = indexTree && indexTree !== tree ? indexTree : null;
    if (previous && previous.tree === tree && previous.index === index) return { ...previous, reused: true };

    const now = opts.now ?? new Date();
    const ref = newRef(REFS.checkpoints, now);
    const body = {
      v: RECORD_VERSION,
      kind: 'checkpoint',
      reason: opts.reason,
      command: opts.command,
      lane: opts.lane,
      worktree: repo.root,
      time: now.toISOString(),
      head: headOid,
      partial: opts.paths ? true : undefined,
      // A partial checkpoint vouches only for these paths (the rest of its tree is the index): restore uses them.
      paths: opts.paths ? [...opts.paths] : undefined,
      // The index's tree when it differs from the work tree's (the commit's second parent holds it).
      index: index ?? undefined,
      ...(opts.session ? { harness: opts.session.harness, session: opts.session.session, toolCall: opts.session.toolCall } : {}),
    };
    const message = `guard checkpoint: ${opts.reason}\n\n${JSON.stringify(body)}\n`;
    const parents = headOid ? ['-p', headOid] : [];
    if (index) {
      // like `git stash`: the staged state is a commit of its own, the checkpoint's second parent
      const r = await git(['commit-tree', index, ...parents], { cwd, input: `guard checkpoint: the index\n`, env: { ...GUARD_IDENTITY } });
      parents.push('-p', r.stdout.toString().trim());
    }
    const args = ['commit-tree', tree, ...parents];
    const commit = (await git(args, { cwd, input: message, env: { ...GUARD_IDENTITY } })).stdout.toString().trim();
    faultPoint('checkpoint:before-update-ref');
    await git(['update-ref', '-m', 'guard checkpoint', ref, commit, ''], { cwd });
    return { ref, id: checkpointId(ref), commit, tree, index, reused: false };
  } finally {
    await rm(tmpIndex, { force: true });
    if (stagedIndex) await rm(stagedIndex, { force: true });
  }
}

/** Temporary indexes left by a guard killed in the middle of a checkpoint (another live guard's stay). */
async function removeStaleIndexes(gitDir: string): Promise<void> {
  const names = await readdir(gitDir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = /^guard-index-(\d+)-[0-9a-f]+(?:-staged)?$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    await rm(path.join(gitDir, name), { force: true });
  }
}

/** Paths whose blobs differ between two trees (what a checkpoint's add changed). */
async function changedPaths(cwd: string, from: string, to: string): Promise<string[]> {
  // -r -z --name-only --no-renames: "<path> NUL" per file that differs
  const r = await git(['diff-tree', '-r', '-z', '--name-only', '--no-renames', '--diff-filter=AM', from, to], { cwd });
  return splitZ(r.stdout);
}

/** `:(literal)` so a file named `*.js` or `:foo` is that file, not a pattern. */
export function literal(p: string): string {
  return `:(literal)${p}`;
}

async function lastCheckpoint(repo: Repo): Promise<Checkpoint | null> {
  const fmt = '%(refname)%00%(objectname)%00%(tree)%00%(contents)%00%01';
  const r = await git(
    ['for-each-ref', '--sort=-refname', `--count=${REUSE_WINDOW}`, `--format=${fmt}`, REFS.checkpoints],
    { cwd: repo.root },
  );
  for (const rec of r.stdout.toString('utf8').split('\0\x01\n')) {
    const [ref, commit, tree, ...rest] = rec.split('\0');
    if (!ref || !commit || !tree) continue;
    const parsed = parseRecordMessage(rest.join('\0')) as { worktree?: string; partial?: boolean; index?: string } | null;
    if (parsed?.worktree !== repo.root || parsed.partial) continue;
    return { ref, id: checkpointId(ref), commit, tree, index: typeof parsed.index === 'string' ? parsed.index : null, reused: false };
  }
  return null;
}

/**
 * What a checkpoint never holds: the ignored files and folders of a work
 * tree (a wholly ignored folder is named once, with a trailing `/`).
 * https://git-scm.com/docs/git-ls-files: --others --ignored --exclude-standard --directory, -z.
 */
export async function ignoredPaths(root: string): Promise<string[]> {
  return splitZ((await git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], { cwd: root })).stdout);
}
