import { open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import type { Repo } from './repo.js';

/**
 * One guard at a time writes into a work tree. The lock is a file created
 * with O_EXCL holding the owner's pid; a lock whose process is gone (killed)
 * is stale and taken over, and said so.
 */
export interface Lock {
  file: string;
  /** A stale lock of a dead process was removed to take this one. */
  tookOverFrom: number | null;
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function lockTree(repo: Repo, what: string): Promise<Lock> {
  const file = path.join(repo.gitDir, 'guard.lock');
  let tookOverFrom: number | null = null;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(file, 'wx');
      await fh.writeFile(`${process.pid}\n${what}\n`);
      await fh.close();
      let released = false;
      return {
        file,
        tookOverFrom,
        release: async () => {
          if (released) return;
          released = true;
          await unlink(file).catch(() => {});
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const text = await readFile(file, 'utf8').catch(() => '');
      const pid = Number(text.split('\n')[0]);
      if (Number.isInteger(pid) && pid > 0 && alive(pid) && pid !== process.pid) {
        throw new GuardError('E_LOCKED', `another guard (pid ${pid}) is writing into ${repo.root}: ${text.split('\n')[1] ?? ''}`.trim(), 'wait for it to finish, then run the command again');
      }
      await unlink(file).catch(() => {});
      tookOverFrom = Number.isInteger(pid) ? pid : 0;
    }
  }
  throw new GuardError('E_LOCKED', `cannot take the lock ${file}`, 'remove it if no guard is running');
}
