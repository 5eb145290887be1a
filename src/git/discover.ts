import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { sha1Hex } from '../core/digest.js';
import type { Repo } from './repo.js';

/**
 * The work tree around `cwd` read from the file system, as `git rev-parse
 * --show-toplevel --absolute-git-dir --git-common-dir` would find it, for
 * the plain case only: null for anything unusual, and openRepo then asks
 * git. A hook process spent a `git rev-parse` (~4 ms of its ~100) on this at
 * every tool call (docs/performance.md, "One hook process").
 *
 * Null (ask git) when: a GIT_* variable other than the harmless ones below is
 * set (GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR, GIT_CEILING_DIRECTORIES,
 * GIT_DISCOVERY_ACROSS_FILESYSTEM, GIT_CONFIG_PARAMETERS... and any git may
 * add); the walk up crosses a file system or meets a folder that is itself a
 * git dir (inside .git, a bare repository); `.git` is a symlink, or a gitfile
 * that is not one `gitdir:` line, or its paths are not already real; the git
 * dir is not plainly valid (HEAD a ref or an id, objects/ and refs/, or a
 * commondir); the shared config sets core.worktree or core.bare, includes
 * other files, has extensions or a format version above 1; the work tree,
 * the gitfile or the git dir is owned by another user (git's safe.directory
 * check, which only such an owner can fail); on Windows.
 * test/integration/discover.test.ts holds each case to rev-parse's answer.
 */
export function repoFromFiles(cwd: string): Repo | null {
  if (typeof process.geteuid !== 'function') return null;
  for (const k of Object.keys(process.env))
    if (k.startsWith('GIT_') && !SAFE_ENV.test(k)) return null;
  try {
    return walk(realpathSync(cwd), process.geteuid());
  } catch {
    return null;
  }
}

/**
 * Variables that change what git writes, how it talks or what it logs, never where the repository
 * is (GIT_INDEX_FILE and GIT_PREFIX: what git sets for its hooks, so a commit's hook finds it too).
 */
const SAFE_ENV =
  /^GIT_(CONFIG_GLOBAL|CONFIG_NOSYSTEM|TERMINAL_PROMPT|INDEX_FILE|PREFIX|REFLOG_ACTION|AUTHOR_(NAME|EMAIL|DATE)|COMMITTER_(NAME|EMAIL|DATE)|EDITOR|SEQUENCE_EDITOR|PAGER|ASKPASS|SSH|SSH_COMMAND|SSH_VARIANT|NO_REPLACE_OBJECTS|OPTIONAL_LOCKS|MERGE_AUTOEDIT|MERGE_VERBOSITY|PROTOCOL_FROM_USER|ALLOW_PROTOCOL|EXEC_PATH|SSL_\w+|HTTP_\w+|PROXY_\w+|CURL_VERBOSE|LFS_\w+|PS1_\w+|TRACE\w*)$/;

function walk(start: string, uid: number): Repo | null {
  const dev = statSync(start).dev;
  let dir = start;
  for (;;) {
    if (path.basename(dir) === '.git' || looksLikeGitDir(dir)) return null;
    const dotgit = path.join(dir, '.git');
    const st = lstatSync(dotgit, { throwIfNoEntry: false });
    if (st) return fromDotGit(dir, dotgit, st, uid);
    const up = path.dirname(dir);
    if (up === dir || statSync(up).dev !== dev) return null;
    dir = up;
  }
}

function looksLikeGitDir(dir: string): boolean {
  return ['HEAD', 'objects', 'commondir', 'gitdir'].some((f) =>
    lstatSync(path.join(dir, f), { throwIfNoEntry: false }),
  );
}

function fromDotGit(root: string, dotgit: string, st: Stats, uid: number): Repo | null {
  if (statSync(root).uid !== uid || st.uid !== uid) return null;
  let gitDir: string;
  if (st.isDirectory()) gitDir = dotgit;
  else if (st.isFile() && st.size < 4096) {
    // git strips every line end at the end (CR too: a folder 'wt\r' beside 'wt' is another one: adv3)
    const m = /^gitdir: ([^\r\n]+)[\r\n]*$/.exec(readFileSync(dotgit, 'utf8'));
    if (!m) return null;
    gitDir = path.resolve(root, m[1]!);
  } else return null;
  if (realpathSync(gitDir) !== gitDir || statSync(gitDir).uid !== uid || !validGitDir(gitDir))
    return null;
  const common = lstatSync(path.join(gitDir, 'commondir'), { throwIfNoEntry: false });
  let commonDir = gitDir;
  if (common) {
    if (gitDir === dotgit || !common.isFile()) return null;
    // as git reads it: only line ends stripped ("../.. " is a folder ".. ", not "../..": adv3)
    const to = readFileSync(path.join(gitDir, 'commondir'), 'utf8').replace(/[\r\n]+$/, '');
    commonDir = path.resolve(gitDir, to);
    if (realpathSync(commonDir) !== commonDir || !validGitDir(commonDir)) return null;
  } else if (gitDir !== dotgit) return null; // a submodule's or a separate git dir: git's to say
  return plainConfig(commonDir) ? { root, gitDir, commonDir } : null;
}

/** git's is_git_directory, strictly: HEAD a symbolic ref or an id, objects/ and refs/ folders. */
function validGitDir(dir: string): boolean {
  const head = lstatSync(path.join(dir, 'HEAD'), { throwIfNoEntry: false });
  if (!head?.isFile() || head.size > 4096) return false;
  const text = readFileSync(path.join(dir, 'HEAD'), 'utf8');
  if (!/^(ref: refs\/[^\n]+|[0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(text)) return false;
  const isDir = (f: string) =>
    statSync(path.join(dir, f), { throwIfNoEntry: false })?.isDirectory();
  return (
    (isDir('objects') && isDir('refs')) ||
    lstatSync(path.join(dir, 'commondir'), { throwIfNoEntry: false }) !== undefined
  );
}

/** The shared config says nothing that moves the work tree or the repository's format. */
function plainConfig(commonDir: string): boolean {
  const st = lstatSync(path.join(commonDir, 'config'), { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > 1 << 20) return false;
  // a key may follow its section's header on the same line ("[core] worktree = ../x"): split it off
  const text = readFileSync(path.join(commonDir, 'config'), 'utf8').replace(
    /^(\s*\[[^\]\n]*\])/gm,
    '$1\n',
  );
  if (/^\s*worktree\s*(=|$)/im.test(text)) return false;
  // core.bare set any way but a plain false (true, yes, 1, "true", a bare key)
  for (const b of text.matchAll(/^\s*bare\s*(?:=\s*(.*?))?\s*$/gim))
    if (!/^(false|no|off|0)$/i.test(b[1] ?? '')) return false;
  if (/^\s*\[\s*(include|extensions)/im.test(text)) return false;
  // (the last one counts, so every one must be 0 or 1)
  for (const v of text.matchAll(/^\s*repositoryformatversion\s*=\s*(\S*)/gim))
    if (v[1] !== '0' && v[1] !== '1') return false;
  return true;
}

/**
 * The folder whose `.git` git's own walk up from `dir` meets first and that
 * holds a repository (a folder with objects/ and refs/, or a `gitdir:` file
 * naming a folder), or null when the walk meets none (or a git dir itself:
 * inside `.git`, a bare repository). What git answers for `dir` must be that
 * folder's work tree: `git config core.bare true`, `core.worktree
 * /elsewhere`, a broken `HEAD`, or `GIT_DIR` and `GIT_WORK_TREE` naming a
 * decoy (a Claude Code settings file's `env` reaches the hook) make git
 * answer "not a repository" or another tree while the repository, guard's
 * records with it, is still there (the hook then refuses:
 * flows/hook/hook.ts). Stops where git's walk does: at a file system
 * boundary and at GIT_CEILING_DIRECTORIES.
 */
export function repositoryFolder(dir: string): string | null {
  let d: string;
  try {
    d = realpathSync(dir);
  } catch {
    return null;
  }
  const ceilings = new Set(
    (process.env.GIT_CEILING_DIRECTORIES ?? '').split(':').flatMap((c) => {
      try {
        return c ? [realpathSync(c)] : [];
      } catch {
        return [];
      }
    }),
  );
  const dev = statSync(d).dev;
  for (;;) {
    const dotgit = path.join(d, '.git');
    const st = lstatSync(dotgit, { throwIfNoEntry: false });
    if (st && holdsRepository(dotgit, st)) return d;
    if (path.basename(d) === '.git' || isGitDirShape(d)) return null;
    const up = path.dirname(d);
    if (up === d || ceilings.has(up) || statSync(up).dev !== dev) return null;
    d = up;
  }
}

function isGitDirShape(dir: string): boolean {
  const isDir = (f: string) =>
    statSync(path.join(dir, f), { throwIfNoEntry: false })?.isDirectory() === true;
  return isDir('objects') && isDir('refs');
}

function holdsRepository(dotgit: string, st: Stats): boolean {
  if (
    st.isDirectory() ||
    (st.isSymbolicLink() && statSync(dotgit, { throwIfNoEntry: false })?.isDirectory())
  )
    return isGitDirShape(dotgit);
  if (!st.isFile() || st.size > 4096) return false;
  const m = /^gitdir: *([^\n\r]+)/.exec(readFileSync(dotgit, 'utf8'));
  return (
    m !== null &&
    statSync(path.resolve(path.dirname(dotgit), m[1]!), {
      throwIfNoEntry: false,
    })?.isDirectory() === true
  );
}

/**
 * What sends git's objects or refs somewhere other than the repository whose `.git` is in `held`
 * (the folder repositoryFolder found), or null: the git dir git answered is not that one's
 * (GIT_DIR naming a decoy while GIT_WORK_TREE names the real folder, so the work tree matches),
 * GIT_COMMON_DIR, or GIT_OBJECT_DIRECTORY naming a folder of the agent's (its alternates reading
 * the real objects: every checkpoint and record guard wrote was an object there, and removing the
 * folder took them all while the refs stayed). File reads only, none when no such variable is set
 * (adv5).
 */
export function storeElsewhere(
  held: string,
  repo: { gitDir: string; commonDir: string },
): string | null {
  const env = process.env;
  if (!env.GIT_DIR && !env.GIT_COMMON_DIR && !env.GIT_OBJECT_DIRECTORY) return null;
  const own = commonDirAt(path.join(held, '.git'));
  if (own === null) return null;
  if (real(repo.commonDir) !== own) return env.GIT_COMMON_DIR ? 'GIT_COMMON_DIR' : 'GIT_DIR';
  const objects = env.GIT_OBJECT_DIRECTORY;
  if (objects && real(path.resolve(objects)) !== real(path.join(own, 'objects')))
    return 'GIT_OBJECT_DIRECTORY';
  return null;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The common dir of the repository at `dotgit` (a folder, or a `gitdir:` file), as git reads it; null when unreadable. */
function commonDirAt(dotgit: string): string | null {
  try {
    let gitDir = dotgit;
    if (!statSync(dotgit).isDirectory()) {
      const m = /^gitdir: *([^\r\n]+)/.exec(readFileSync(dotgit, 'utf8'));
      if (!m) return null;
      gitDir = path.resolve(path.dirname(dotgit), m[1]!);
    }
    const common = lstatSync(path.join(gitDir, 'commondir'), { throwIfNoEntry: false });
    const to = common
      ? readFileSync(path.join(gitDir, 'commondir'), 'utf8').replace(/[\r\n]+$/, '')
      : '.';
    return real(path.resolve(gitDir, to));
  } catch {
    return null;
  }
}

/**
 * The work trees a harness session had guard checkpoint, kept outside them (holes5): `mv .git
 * .git.bak`, or the repository moved away, leaves a folder git no longer takes as a work tree and
 * nothing inside it to say it was one, so the hook would have no opinion on every later call. A
 * marker per session and work tree, in a folder of the user's (`$TMPDIR/guard-seen-<uid>/`), lets
 * the hook tell such a folder from one that never was a repository. Per session: a person who
 * removed git from a folder on purpose starts a new session, and a plain folder is never refused.
 */
function seenDir(): string | null {
  if (typeof process.getuid !== 'function') return null;
  return path.join(
    (process.env.TMPDIR || '/tmp').replace(/\/+$/, '') || '/',
    `guard-seen-${process.getuid()}`,
  );
}

/**
 * How long a session's note counts after its last call in the work tree: a harness whose payload
 * has no session id gets one constant id (Cursor's 'cursor'), so "a new session" must also mean
 * "half a day later".
 */
const SEEN_FOR_MS = 12 * 3600_000;
const SEEN_REFRESH_MS = 3600_000;

const seenMarker = (dir: string, who: string, root: string) =>
  path.join(dir, sha1Hex(`${who}\0${root}`).slice(0, 32));

/** Note that session `who` (harness and session id) had guard checkpoint `root` (a stat; a small write the first time). */
export function noteWorkTreeSeen(who: string, root: string, gitDir: string): void {
  const dir = seenDir();
  if (!dir) return;
  const marker = seenMarker(dir, who, root);
  const st = statSync(marker, { throwIfNoEntry: false });
  // (written again once an hour while the session works here: lostRepository trusts a recent one)
  if (st && Date.now() - st.mtimeMs < SEEN_REFRESH_MS) return;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(marker, `${root}\n${gitDir}\n`);
  } catch {
    /* only weakens the check below */
  }
}

export interface LostRepository {
  /** The work tree this session had guard checkpoint. */
  root: string;
  /** Its git dir then. */
  gitDir: string;
  /** A folder beside it that holds a repository now (`.git.bak`): where it was probably moved. */
  movedTo: string | null;
}

/**
 * The work tree around `dirs` (the call's cwd, the harness's project folder) that session `who`
 * had guard checkpoint and that is no longer a repository (its git dir moved or removed while the
 * folder is still there); null when there is none. File reads only: a stat per folder up from each.
 */
export function lostRepository(who: string, dirs: readonly string[]): LostRepository | null {
  const dir = seenDir();
  if (!dir) return null;
  for (const start of dirs) {
    for (let d = path.resolve(start); ; d = path.dirname(d)) {
      const marker = seenMarker(dir, who, d);
      const st = statSync(marker, { throwIfNoEntry: false });
      const text =
        st?.isFile() && Date.now() - st.mtimeMs < SEEN_FOR_MS ? readFileSync(marker, 'utf8') : null;
      const [root, gitDir] = text?.split('\n') ?? [];
      // (the caller found no repository around the folder: the session's work tree, still there, is not one now)
      if (root === d && gitDir && statSync(d, { throwIfNoEntry: false })?.isDirectory())
        return { root: d, gitDir, movedTo: movedGitDir(d) };
      if (path.dirname(d) === d) break;
    }
  }
  return null;
}

/** A folder in `root` (up to 200 entries) other than `.git` that has a git dir's shape: `.git.bak`, `.git-old`. */
function movedGitDir(root: string): string | null {
  let names: string[];
  try {
    names = readdirSync(root).slice(0, 200);
  } catch {
    return null;
  }
  for (const n of names) {
    const p = path.join(root, n);
    if (n !== '.git' && statSync(p, { throwIfNoEntry: false })?.isDirectory() && isGitDirShape(p))
      return p;
  }
  return null;
}
