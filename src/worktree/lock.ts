import { link, readFile, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import type { Repo } from '../git/repo.js';
import { processAlive as alive } from '../runtime/alive.js';
import { randomHex } from '../core/digest.js';

/**
 * One guard at a time writes into a work tree. The lock is `guard.lock` in
 * the work tree's git dir, holding the owner's pid and what it does:
 *
 *   12345
 *   guard review agent-1
 *
 * It is made whole in a temp file and hard-linked into place, so it exists
 * with its content or not at all (an O_EXCL create would leave an empty
 * file for a moment, which another guard would read as stale). A lock
 * whose process is gone (killed) is stale and taken over, and said so; two
 * guards that find the same stale lock take turns through a second,
 * short-lived file (`guard.lock.takeover`), so neither removes the fresh
 * lock the other has just made.
 */
export interface Lock {
  file: string;
  /** A stale lock of a dead process was removed to take this one. */
  tookOverFrom: number | null;
  release(): Promise<void>;
}

export interface LockOptions {
  /** How long to wait for a live owner to finish; 0 (the default) refuses at once. */
  waitMs?: number;
}

/** A takeover file older than this belongs to a guard killed in the middle of one (it takes microseconds). */
const TAKEOVER_STALE_MS = 5_000;
const POLL_MS = 25;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function lockTree(repo: Repo, what: string, opts: LockOptions = {}): Promise<Lock> {
  const file = path.join(repo.gitDir, 'guard.lock');
  const text = `${process.pid}\n${what}\n`;
  const temp = `${file}.${process.pid}-${randomHex(4)}`;
  await writeFile(temp, text, { flag: 'wx' });
  const deadline = Date.now() + (opts.waitMs ?? 0);
  let tookOverFrom: number | null = null;
  try {
    for (;;) {
      try {
        await link(temp, file);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readFile(file, 'utf8').catch(() => null);
      if (held === null) continue; // released in between: try again
      const [pidText, doing] = held.split('\n');
      const pid = Number(pidText);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        if (Date.now() < deadline) {
          await sleep(POLL_MS);
          continue;
        }
        throw new GuardError(
          'E_LOCKED',
          `another guard (pid ${pid}) is writing into ${repo.root}${doing ? `: ${doing}` : ''}`,
          'wait for it to finish, then run the command again',
        );
      }
      if (await takeOver(file, held)) tookOverFrom = Number.isInteger(pid) ? pid : 0;
      else await sleep(POLL_MS);
    }
  } finally {
    await unlink(temp).catch(() => {});
  }
  await removeStaleTemps(file);
  let released = false;
  return {
    file,
    tookOverFrom,
    release: async () => {
      if (released) return;
      released = true;
      // only our own lock: a guard that found us dead may have taken it over
      if ((await readFile(file, 'utf8').catch(() => null)) === text)
        await unlink(file).catch(() => {});
    },
  };
}

/** Lock temp files (`guard.lock.<pid>-<hex>`) of guards killed before they linked or removed theirs. */
async function removeStaleTemps(file: string): Promise<void> {
  for (const name of await readdir(path.dirname(file)).catch(() => [] as string[])) {
    const pid = /^guard\.lock\.(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !alive(Number(pid)))
      await unlink(path.join(path.dirname(file), name)).catch(() => {});
  }
}

/** Remove the stale lock `held`, unless another guard is doing so or has already replaced it. */
async function takeOver(file: string, held: string): Promise<boolean> {
  const turn = `${file}.takeover`;
  try {
    await writeFile(turn, `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const st = await stat(turn).catch(() => null);
    if (st && Date.now() - st.mtimeMs > TAKEOVER_STALE_MS) await unlink(turn).catch(() => {});
    return false;
  }
  try {
    if ((await readFile(file, 'utf8').catch(() => null)) !== held) return false;
    await unlink(file).catch(() => {});
    return true;
  } finally {
    await unlink(turn).catch(() => {});
  }
}

/** What to tell the person when a stale lock was taken over, or null. */
export function staleLockNotice(lock: Lock): string | null {
  if (lock.tookOverFrom === null) return null;
  return `took over the lock of an interrupted guard (pid ${lock.tookOverFrom || '?'}); guard log lists the checkpoint it made, if it wrote anything`;
}
