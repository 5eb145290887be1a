import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { appendFile, cp, mkdir, readFile, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { commonDirOf, journaledRefWrite, noteGone } from './journal.js';
import { GuardError } from '../core/errors.js';
import { RECORD_VERSION } from '../core/record.js';
import { GUARD_IDENTITY, checkpointId, type Checkpoint } from './checkpoint.js';
import { REFS, newRef } from './records.js';
import { openRepo, type Repo } from './repo.js';
import { readHooksPath } from './config.js';
import { git, splitZ } from './run.js';

/**
 * A lane is a worktree at `<main>/.guard/lanes/NAME` on branch `guard/NAME`,
 * known by the ref `refs/guard/lanes/NAME`, which points at the commit the
 * lane started from (its base): a ref, so the base survives the main branch
 * moving on and `git gc`.
 */
export interface Lane {
  name: string;
  /** Absolute path of the lane's work tree. */
  path: string;
  /** `guard/NAME` */
  branch: string;
  /** The commit the lane started from. */
  base: string;
  /** The worktree folder is missing (deleted by hand) or no longer a registered worktree. */
  broken: boolean;
}

export const LANES_DIR = path.join('.guard', 'lanes');
export const LANE_REFS = 'refs/guard/lanes/';
export const LANE_BRANCH_PREFIX = 'guard/';

export const laneRef = (name: string): string => LANE_REFS + name;
export const laneBranch = (name: string): string => LANE_BRANCH_PREFIX + name;
export const lanePath = (main: Repo, name: string): string => path.join(main.root, LANES_DIR, name);

/**
 * Letters, digits, `-`, `_`, `.`; not starting with `-` (it would read as a
 * flag) or `.` (a hidden folder), no `..`, no slash; and what git refuses in a
 * ref name component (a `.lock` or `.` ending).
 */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_NAME = 100;

export function validateLaneName(name: string): void {
  const bad =
    typeof name !== 'string' ||
    name.length === 0 ||
    name.length > MAX_NAME ||
    !NAME.test(name) ||
    name.includes('..') ||
    name.endsWith('.') ||
    name.endsWith('.lock');
  if (bad) {
    throw new GuardError(
      'E_USAGE',
      `invalid lane name ${JSON.stringify(String(name))}`,
      `use letters, digits, "-", "_" and "." (not first), no ".." or "/", at most ${MAX_NAME} characters`,
    );
  }
}

interface Worktree {
  path: string;
  head: string | null;
  branch: string | null;
  bare: boolean;
}

/**
 * `git worktree list --porcelain -z` (git 2.36+): attributes separated by NUL,
 * worktrees by an empty attribute; the main worktree comes first.
 *   worktree /repo\0HEAD <oid>\0branch refs/heads/main\0\0
 *   worktree /repo/.guard/lanes/a\0HEAD <oid>\0branch refs/heads/guard/a\0prunable gitdir file points to non-existent location\0\0
 * https://git-scm.com/docs/git-worktree#_porcelain_format
 */
export function parseWorktrees(fields: string[]): Worktree[] {
  const out: Worktree[] = [];
  let cur: Worktree | null = null;
  for (const f of fields) {
    if (f === '') {
      cur = null;
      continue;
    }
    if (f.startsWith('worktree ')) {
      cur = { path: f.slice('worktree '.length), head: null, branch: null, bare: false };
      out.push(cur);
    } else if (cur && f.startsWith('HEAD ')) cur.head = f.slice(5);
    else if (cur && f.startsWith('branch ')) cur.branch = f.slice(7);
    else if (cur && f === 'bare') cur.bare = true;
  }
  return out;
}

async function worktrees(cwd: string): Promise<Worktree[]> {
  const r = await git(['worktree', 'list', '--porcelain', '-z'], { cwd });
  return parseWorktrees(splitZ(r.stdout));
}

/** Compare paths as the file system sees them (a temp dir may sit behind a symlink). */
function samePath(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return path.resolve(a) === path.resolve(b) || real(a) === real(b);
}

/** The main work tree's Repo, also when `cwd` is inside a lane. */
export async function mainRepo(cwd: string): Promise<Repo> {
  const here = await openRepo(cwd);
  if (here.gitDir === here.commonDir) return here;
  const [main] = await worktrees(here.root);
  if (!main || main.bare) {
    throw new GuardError(
      'E_NOT_A_REPO',
      'the repository has no main work tree (it is bare)',
      'lanes need a checkout: run guard in a non-bare clone',
    );
  }
  return { root: main.path, gitDir: here.commonDir, commonDir: here.commonDir };
}

/**
 * Every lane, from one for-each-ref and one worktree list, whatever the number
 * of lanes.
 */
export async function listLanes(main: Repo): Promise<Lane[]> {
  const [refs, trees] = await Promise.all([
    git(['for-each-ref', '--format=%(refname)%00%(objectname)', LANE_REFS], { cwd: main.root }),
    worktrees(main.root),
  ]);
  const lanes: Lane[] = [];
  for (const line of refs.stdout.toString('utf8').split('\n')) {
    const [ref, base] = line.split('\0');
    if (!ref || !base) continue;
    const name = ref.slice(LANE_REFS.length);
    const p = lanePath(main, name);
    const registered = trees.some((t) => samePath(t.path, p));
    lanes.push({
      name,
      path: p,
      branch: laneBranch(name),
      base,
      broken: !registered || !existsSync(path.join(p, '.git')),
    });
  }
  return lanes.sort((a, b) => a.name.localeCompare(b.name));
}

export async function findLane(main: Repo, name: string): Promise<Lane> {
  validateLaneName(name);
  const lane = (await listLanes(main)).find((l) => l.name === name);
  if (!lane)
    throw new GuardError('E_NO_LANE', `lane "${name}" does not exist`, 'guard lanes lists them');
  return lane;
}

/** The lane's own Repo (its work tree and its git dir under .git/worktrees/). */
export async function laneRepo(lane: Lane): Promise<Repo> {
  const repo = await openRepo(lane.path);
  // A folder without its `.git` file would resolve to the main tree: never act on that.
  if (!samePath(repo.root, lane.path)) {
    throw new GuardError(
      'E_NO_LANE',
      `lane "${lane.name}" is broken: ${lane.path} is not its work tree`,
      `guard discard ${lane.name} cleans it up`,
    );
  }
  return repo;
}

/** The commit REV names, or a usage error. */
export async function resolveCommit(cwd: string, rev: string): Promise<string> {
  // --end-of-options: a REV starting with "-" is a name, not a flag.
  const r = await git(['rev-parse', '-q', '--verify', '--end-of-options', `${rev}^{commit}`], {
    cwd,
    okCodes: [1, 128],
  });
  const oid = r.stdout.toString('utf8').trim();
  if (r.code !== 0 || !oid) {
    if (rev === 'HEAD')
      throw new GuardError(
        'E_USAGE',
        'the repository has no commits yet',
        'commit something first: a lane starts from a commit',
      );
    throw new GuardError(
      'E_USAGE',
      `cannot start from "${rev}": not a commit`,
      'pass --from a branch, tag or commit id',
    );
  }
  return oid;
}

export async function refExists(cwd: string, ref: string): Promise<boolean> {
  const r = await git(['show-ref', '--verify', '-q', ref], { cwd, okCodes: [1] });
  return r.code === 0;
}

/**
 * `.guard` and `.guard/lanes` must be real folders of the main tree (or not
 * exist yet): a symlink planted there would put the lane's checkout, and
 * every later write into the lane, outside the work tree.
 */
export function assertLanesContained(main: Repo): void {
  let dir = main.root;
  for (const part of LANES_DIR.split(path.sep)) {
    dir = path.join(dir, part);
    let st;
    try {
      st = lstatSync(dir);
    } catch {
      return; // absent: git worktree add makes it, inside the tree
    }
    if (st.isSymbolicLink() || !st.isDirectory()) {
      const what = st.isSymbolicLink() ? `a symlink (-> ${readlinkSync(dir)})` : 'not a folder';
      throw new GuardError(
        'E_PATH_ESCAPE',
        `${path.relative(main.root, dir)} is ${what}: a lane must live inside the work tree`,
        `remove it (rm ${path.relative(main.root, dir)}) and run the command again; guard makes the folder itself`,
      );
    }
  }
}

/**
 * Create the lane: base ref, then worktree and branch. The base ref is made
 * first with an empty old value (git's compare-and-swap), so of two guard
 * processes starting the same lane exactly one wins; if anything after it
 * fails, everything made so far is removed again.
 */
export async function createLane(
  main: Repo,
  name: string,
  base: string,
): Promise<{ lane: Lane; hooks: string | null }> {
  validateLaneName(name);
  const lane: Lane = {
    name,
    path: lanePath(main, name),
    branch: laneBranch(name),
    base,
    broken: false,
  };
  const cwd = main.root;
  const taken = () =>
    new GuardError(
      'E_LANE_EXISTS',
      `lane "${name}" already exists`,
      `guard run ${name} -- CMD reuses it; guard discard ${name} removes it`,
    );
  if (await refExists(cwd, laneRef(name))) throw taken();
  if (await refExists(cwd, `refs/heads/${lane.branch}`)) {
    throw new GuardError(
      'E_LANE_EXISTS',
      `branch ${lane.branch} already exists`,
      `pick another lane name, or delete the branch (git branch -D ${lane.branch})`,
    );
  }
  if (existsSync(lane.path)) throw taken();
  assertLanesContained(main);
  // journaled (and pinned: journal.ts), so a base ref deleted or moved from the shell is noticed and `guard recover` puts it back
  const made = await journaledRefWrite(cwd, [laneRef(name)], async () => {
    const r = await git(
      ['update-ref', '--no-deref', '-m', 'guard start', laneRef(name), base, ''],
      {
        cwd,
        okCodes: [128],
      },
    );
    return r.code === 0 ? [{ ref: laneRef(name), oid: base }] : [];
  });
  if (made.length === 0) throw taken();
  try {
    // -b: the lane's own branch; --quiet: nothing on stderr to parse.
    await git(['worktree', 'add', '--quiet', '-b', lane.branch, lane.path, base], { cwd });
    return { lane, hooks: await shareHooks(main, lane.path) };
  } catch (err) {
    await removeLaneParts(main, lane).catch(() => undefined);
    throw err;
  }
}

/**
 * Remove what makes up a lane: the worktree (with whatever is in it), the
 * branch and the base ref. Callers checkpoint first.
 */
export async function removeLaneParts(main: Repo, lane: Lane): Promise<void> {
  const cwd = main.root;
  const registered = (await worktrees(cwd)).some((t) => samePath(t.path, lane.path));
  if (registered && existsSync(path.join(lane.path, '.git'))) {
    // --force: the lane's uncommitted and untracked files go too (they are in the checkpoint).
    await git(['worktree', 'remove', '--force', lane.path], { cwd });
  } else if (registered) {
    // The folder is gone (or lost its .git file): drop git's record of it.
    await git(['worktree', 'prune'], { cwd });
  }
  await Promise.all([
    git(['update-ref', '--no-deref', '-d', `refs/heads/${lane.branch}`], {
      cwd,
      okCodes: [1, 128],
    }),
    git(['update-ref', '--no-deref', '-d', laneRef(lane.name)], { cwd, okCodes: [1, 128] }),
    // integrity: the branch gate's verified tip of the lane's branch, so a new lane of that name starts clean
    git(['update-ref', '--no-deref', '-d', `refs/guard/verified/heads/${lane.branch}`], {
      cwd,
      okCodes: [1, 128],
    }),
  ]);
  // guard removed them: the journal says so, or the journaled tips would come back (recover) or be reported as removed
  noteGone(commonDirOf(cwd), [`refs/guard/verified/heads/${lane.branch}`, laneRef(lane.name)]);
  // `worktree remove` leaves the lanes folder; drop it when it is empty.
  await rmdir(path.dirname(lane.path)).catch(() => undefined);
}

/**
 * Make the lane run the hooks the main tree runs. With `core.hooksPath`
 * relative (husky: `.husky/_`), git looks for the hooks inside each work
 * tree, and husky's folder is git-ignored and generated at install: a fresh
 * worktree has none, so its hooks would silently not run. The main tree's
 * folder is copied as it is (husky's stubs find `.husky/pre-commit` relative
 * to themselves, so the lane runs its own committed hook script). An absolute
 * hooksPath, or none (hooks in the shared .git/hooks), is shared already.
 */
export async function shareHooks(main: Repo, laneRoot: string): Promise<string | null> {
  const hooksPath = (await readHooksPath(laneRoot)).value?.trim() ?? '';
  if (!hooksPath || path.isAbsolute(hooksPath) || hooksPath.startsWith('~')) return null;
  const from = path.resolve(main.root, hooksPath);
  const to = path.resolve(laneRoot, hooksPath);
  if (!to.startsWith(laneRoot + path.sep) || existsSync(to) || !existsSync(from)) return null;
  // Modes are kept (the hooks stay executable); symlinks are copied as links.
  await cp(from, to, { recursive: true, verbatimSymlinks: true });
  return hooksPath;
}

/** The commit a branch points at, or null when the branch is gone. */
export async function branchTip(cwd: string, branch: string): Promise<string | null> {
  const r = await git(['rev-parse', '-q', '--verify', `refs/heads/${branch}^{commit}`], {
    cwd,
    okCodes: [1, 128],
  });
  return r.code === 0 ? r.stdout.toString('utf8').trim() || null : null;
}

/**
 * A checkpoint of a commit, for a lane whose work tree is gone: what is left
 * of it is its branch. Same shape as checkpoint() makes (tree of the commit,
 * the commit as parent, guard's record message), so `guard log` and
 * `guard restore` read it like any other.
 */
export async function checkpointCommit(
  main: Repo,
  commit: string,
  opts: { reason: string; command: string; lane: string; worktree: string; now?: Date },
): Promise<Checkpoint> {
  const cwd = main.root;
  const now = opts.now ?? new Date();
  const tree = (await git(['rev-parse', '--verify', `${commit}^{tree}`], { cwd })).stdout
    .toString('utf8')
    .trim();
  const body = {
    v: RECORD_VERSION,
    kind: 'checkpoint',
    reason: opts.reason,
    command: opts.command,
    lane: opts.lane,
    worktree: opts.worktree,
    time: now.toISOString(),
    head: commit,
  };
  const message = `guard checkpoint: ${opts.reason}\n\n${JSON.stringify(body)}\n`;
  const oid = (
    await git(['commit-tree', tree, '-p', commit], {
      cwd,
      input: message,
      env: { ...GUARD_IDENTITY },
    })
  ).stdout
    .toString('utf8')
    .trim();
  const ref = newRef(REFS.checkpoints, now);
  // journaled as every checkpoint is: the last thing holding the lane's work, so a deletion from outside is noticed
  await journaledRefWrite(cwd, [ref], async () => {
    await git(['update-ref', '--no-deref', '-m', 'guard checkpoint', ref, oid, ''], { cwd });
    return [{ ref, oid }];
  });
  return { ref, id: checkpointId(ref), commit: oid, tree, index: null, reused: false, skipped: [] };
}

/** `.guard/` (lanes, feedback) is listed in .git/info/exclude, never in the user's .gitignore. */
export async function ensureExcluded(repo: Repo): Promise<boolean> {
  const file = path.join(repo.commonDir, 'info', 'exclude');
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (/^\/?\.guard\/?$/m.test(text)) return false;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(
    file,
    (text === '' || text.endsWith('\n') ? '' : '\n') + '# guard lanes and feedback\n/.guard/\n',
  );
  return true;
}
