import { constants } from 'node:fs';
import {
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rename,
  rmdir,
  symlink,
  unlink,
} from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { MODE, fileMode } from '../core/modes.js';
import { faultPoint } from '../runtime/faults.js';
import { processAlive as alive } from '../runtime/alive.js';
import { randomHex } from '../core/digest.js';

/**
 * Every file guard writes into a work tree goes through here: the path is
 * proved to stay inside the work tree, the content goes to a temp file in
 * the same folder (same file system), is fsynced and renamed over the
 * target. A crash or SIGKILL at any point leaves the target old or new,
 * never half written; what it can leave is a temp file named
 * `.<name>.guard-tmp-<pid>-<random>`, which `cleanStaleTemps` removes.
 *
 * (write-file-atomic would follow a symlink at the target and write through
 * it; guard must replace the link itself, so this is node:fs directly.)
 */

export interface InsidePath {
  /** Absolute path in the work tree (not resolved through symlinks at the last component). */
  abs: string;
  /** The same, relative to the work tree, with `/` separators: what git calls the path. */
  rel: string;
}

function escape(relPath: string, why: string): GuardError {
  return new GuardError(
    'E_PATH_ESCAPE',
    `${JSON.stringify(relPath)} ${why}`,
    'guard only writes files inside the work tree, outside .git/',
  );
}

function isGitDirName(part: string): boolean {
  // case-insensitive: on macOS and Windows `.GIT/config` is `.git/config`
  return part.toLowerCase() === '.git';
}

function inside(root: string, p: string): boolean {
  const r = path.relative(root, p);
  return r === '' || (!r.startsWith('..') && !path.isAbsolute(r));
}

/**
 * Prove that `relPath` (relative to `root`, or absolute) names a file inside
 * the work tree: not through `..`, not an absolute path elsewhere, not into
 * `.git/` at any depth, and not under a folder that is (or passes through) a
 * symlink leading outside the work tree or into a `.git` folder. The last
 * component itself may be a symlink: guard replaces links, never writes
 * through them. Throws E_PATH_ESCAPE.
 */
export async function resolveInside(root: string, relPath: string): Promise<InsidePath> {
  if (relPath === '' || relPath.includes('\0')) throw escape(relPath, 'is not a file name');
  const realRoot = await realpath(root);
  const abs = path.resolve(root, relPath);
  let rel = path.relative(root, abs);
  if (!inside(root, abs)) {
    // an absolute path may name the work tree through a symlink (/tmp vs /private/tmp)
    const viaReal = path.relative(realRoot, abs);
    if (!path.isAbsolute(relPath) || viaReal.startsWith('..') || path.isAbsolute(viaReal)) {
      throw escape(relPath, 'is outside the work tree');
    }
    rel = viaReal;
  }
  if (rel === '') throw escape(relPath, 'is the work tree itself, not a file in it');
  if (rel.split(path.sep).some(isGitDirName)) throw escape(relPath, 'is inside .git/');

  // The deepest folder that exists, resolved through every symlink on the way;
  // the path is then named through the real folders, as git sees it (git
  // refuses a path "beyond a symbolic link").
  let dir = path.dirname(path.join(root, rel));
  for (;;) {
    try {
      const real = await realpath(dir);
      if (!inside(realRoot, real))
        throw escape(relPath, 'is under a symlinked folder that leads outside the work tree');
      const within = path.relative(realRoot, real);
      if (within.split(path.sep).some(isGitDirName))
        throw escape(relPath, 'is under a symlinked folder that leads into .git/');
      const below = path.relative(dir, path.join(root, rel));
      const canonical = path.join(within, below);
      return { abs: path.join(root, canonical), rel: canonical.split(path.sep).join('/') };
    } catch (err) {
      if (err instanceof GuardError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      if (code === 'ENOTDIR') throw escape(relPath, 'has a parent that is a file, not a folder');
      const up = path.dirname(dir);
      if (up === dir) throw escape(relPath, 'is outside the work tree');
      dir = up;
    }
  }
}

/** What is at a path now, without following a symlink there. */
export interface OnDisk {
  mode: string;
  /** Permission bits of a regular file (kept on rewrite). */
  perm: number;
}

export async function statOnDisk(abs: string): Promise<OnDisk | null> {
  try {
    const st = await lstat(abs);
    if (st.isSymbolicLink()) return { mode: MODE.symlink, perm: 0o777 };
    if (st.isFile()) return { mode: fileMode(st.mode), perm: st.mode & 0o7777 };
    if (st.isDirectory())
      throw new GuardError('E_USAGE', `${abs} is a folder, not a file`, 'name a file');
    throw new GuardError(
      'E_USAGE',
      `${abs} is not a regular file`,
      'guard writes regular files and symlinks only',
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

const TEMP_MARK = '.guard-tmp-';

export function tempName(abs: string): string {
  return path.join(
    path.dirname(abs),
    `.${path.basename(abs)}${TEMP_MARK}${process.pid}-${randomHex(4)}`,
  );
}

function umask(): number {
  // process.umask() without an argument reads it without changing it
  return process.umask();
}

/** Permission bits for the new file: the old file's, with the executable bits the git mode asks for. */
function permFor(mode: string | undefined, old: OnDisk | null): number {
  const base = old && old.mode !== MODE.symlink ? old.perm : 0o666 & ~umask();
  if (mode === MODE.executable) return base | ((base & 0o444) >> 2);
  if (mode === MODE.file) return base & ~0o111;
  return base;
}

/** A temp file (or symlink) holding the new content, ready to be renamed over the target. */
export interface StagedWrite {
  abs: string;
  rel: string;
  temp: string;
  /** Folders created for it (deepest last), removed again by `discard`. */
  createdDirs: string[];
}

/**
 * Step one of an atomic write: the content in a temp file next to the
 * target, fsynced, with its final mode. `mode` is a git mode; undefined
 * keeps what is on disk (a symlink stays a symlink, the executable bit
 * stays), and a new file gets 100644.
 */
export async function stageWrite(
  root: string,
  relPath: string,
  content: Buffer,
  mode?: string,
): Promise<StagedWrite> {
  const { abs, rel } = await resolveInside(root, relPath);
  const old = await statOnDisk(abs);
  const finalMode = mode ?? old?.mode ?? MODE.file;
  if (finalMode === MODE.gitlink)
    throw new GuardError('E_USAGE', `${rel} is a submodule`, 'guard does not write submodules');
  await cleanFolderOnce(path.dirname(abs));
  const createdDirs = await makeDirs(path.dirname(abs));
  const temp = tempName(abs);
  try {
    if (finalMode === MODE.symlink) {
      await symlink(content.toString('utf8'), temp);
    } else {
      const perm = permFor(finalMode, old);
      // O_EXCL: never reuse (or write through) something already at the temp name
      const fh = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, perm);
      try {
        await fh.writeFile(content);
        await fh.chmod(perm); // open's mode is filtered by the umask; the old file's bits are not
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  } catch (err) {
    await unlink(temp).catch(() => {});
    await removeDirs(createdDirs);
    throw err;
  }
  return { abs, rel, temp, createdDirs };
}

/** Step two: the rename that makes the write visible, then the folder's own fsync. */
export async function commitWrite(staged: StagedWrite): Promise<void> {
  faultPoint('atomic:before-rename'); // the temp file is complete and fsynced
  await rename(staged.temp, staged.abs);
  await syncDir(path.dirname(staged.abs));
}

/** Give up a staged write: the temp file and any folder made for it go. */
export async function discardWrite(staged: StagedWrite): Promise<void> {
  await unlink(staged.temp).catch(() => {});
  await removeDirs(staged.createdDirs);
}

/** Write `content` to `relPath` atomically (see the module comment). */
export async function writeFileAtomic(
  root: string,
  relPath: string,
  content: Buffer,
  mode?: string,
): Promise<string> {
  const staged = await stageWrite(root, relPath, content, mode);
  try {
    await commitWrite(staged);
  } catch (err) {
    await discardWrite(staged);
    throw err;
  }
  return staged.rel;
}

/**
 * Remove one file or symlink (never a folder, never through a link), then
 * the folders it leaves empty, up to the work tree. Missing is not an error.
 */
export async function removeFile(root: string, relPath: string): Promise<boolean> {
  const { abs } = await resolveInside(root, relPath);
  try {
    await unlink(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    throw err;
  }
  let dir = path.dirname(abs);
  while (inside(root, dir) && dir !== root) {
    try {
      await rmdir(dir); // only succeeds on an empty folder
    } catch {
      break;
    }
    dir = path.dirname(dir);
  }
  return true;
}

/**
 * Temp files left by a guard process that was killed before its rename,
 * next to `abs`. Another live guard's temp file is left alone.
 */
export async function cleanStaleTemps(abs: string): Promise<number> {
  const dir = path.dirname(abs);
  const prefix = `.${path.basename(abs)}${TEMP_MARK}`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) continue;
    if (pid === process.pid) continue;
    await unlink(path.join(dir, name)).then(
      () => removed++,
      () => {},
    );
  }
  return removed;
}

/**
 * Folders whose stale temp files this process already removed: one readdir per folder, not per file.
 * Exported for the tests that run many commands in one process (test/inproc-worker.mjs empties it between them).
 */
export const cleaned = new Set<string>();

/**
 * Every temp file of a killed guard in `dir`, whatever file it was for (a
 * review or restore killed mid-write leaves them next to any file it writes;
 * git would show them as untracked).
 */
async function cleanFolderOnce(dir: string): Promise<void> {
  if (cleaned.has(dir)) return;
  cleaned.add(dir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const at = name.lastIndexOf(TEMP_MARK);
    if (!name.startsWith('.') || at < 1) continue;
    const pid = Number(name.slice(at + TEMP_MARK.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    await unlink(path.join(dir, name)).catch(() => {});
  }
}

async function makeDirs(dir: string): Promise<string[]> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return [];
  const out: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    out.unshift(d);
    if (d === first || path.dirname(d) === d) break;
  }
  return out;
}

async function removeDirs(dirs: readonly string[]): Promise<void> {
  for (const d of [...dirs].reverse()) {
    try {
      await rmdir(d);
    } catch {
      return;
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, constants.O_RDONLY);
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // some file systems refuse fsync on a folder; the rename is still atomic
  }
}
