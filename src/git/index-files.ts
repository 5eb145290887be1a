import { copyFile, link, open, readdir, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { processAlive as alive } from '../runtime/alive.js';
import { sha1Hex } from '../core/digest.js';

/*
 * The index files of whole-tree checkpoints (git/checkpoint.ts): guard's
 * kept copy of the index (a cache keyed by the user's index), the private
 * copies a checkpoint works in, and those a killed guard left behind.
 */

/**
 * A private name for an index file, keeping its mtime: git's racy-clean
 * check compares each entry's mtime with it. A hard link where the file
 * system has them (no copy of a 2 MB index; the same inode, so the same
 * mtime): git never writes an index in place (it writes `<file>.lock` and
 * renames it over the name), so the other name keeps the file as it was.
 * Else a copy with the mtime put back.
 */
export async function copyIndex(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  try {
    await copyFile(from, to);
    // A fresh mtime would make a file rewritten in the same second with the
    // same size look unchanged (its change would be missing from the
    // checkpoint). https://git-scm.com/docs/racy-git
    const st = await stat(from);
    await utimes(to, st.atime, st.mtime);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return false;
  }
}

/**
 * guard keeps its own copy of the index for whole-tree checkpoints
 * (`<gitDir>/guard-index.<key>`), refreshed by the last checkpoint, as a
 * shadow repository keeps its own: files that did not change since then are
 * not hashed again, even when the user's index has stale or racily-smudged
 * entries for them. It is used only while the user's index is the one it was
 * seeded from (the key is that index's size, mtime, inode and checksum): any
 * `git add`, commit or checkout makes a new one from the user's index, so the
 * set of tracked files is always the user's.
 */
export async function indexKey(file: string): Promise<string | null> {
  try {
    const st = await stat(file);
    let tail = '';
    const fh = await open(file, 'r');
    try {
      const b = Buffer.alloc(20);
      const { bytesRead } = await fh.read(b, 0, 20, Math.max(0, st.size - 20));
      tail = b.subarray(0, bytesRead).toString('hex');
    } finally {
      await fh.close();
    }
    return sha1Hex(`${st.size}:${st.mtimeMs}:${st.ino}:${tail}`).slice(0, 16);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export const KEPT_INDEX = /^guard-index\.[0-9a-f]{16}\.[0-9a-f]{8}$/;
/**
 * Remove guard's kept indexes but the one just made (older ones, or another
 * guard's that lost the race for the last-checkpoint file: a guard about to
 * copy one that is gone seeds from the user's index instead).
 */
export async function dropKeptIndexes(gitDir: string, keep: string | null): Promise<void> {
  const names = await readdir(gitDir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((n) => KEPT_INDEX.test(n) && n !== keep)
      .map((n) => rm(path.join(gitDir, n), { force: true })),
  );
}

/** Temporary indexes left by a guard killed in the middle of a checkpoint (another live guard's stay). */
export async function removeStaleIndexes(gitDir: string): Promise<void> {
  const names = await readdir(gitDir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = /^guard-index-(\d+)-[0-9a-f]+(?:-staged|-kept)?$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    await rm(path.join(gitDir, name), { force: true });
  }
}
