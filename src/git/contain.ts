import { lstat, stat } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';

/**
 * Before guard writes PATH (already proved inside the work tree by
 * resolveInside): every folder on the way must be a folder, and none may be
 * a repository of its own (a submodule, or a nested clone) whose files this
 * work tree's checkpoints do not hold. Read-only: a few lstat calls, one per
 * folder level, no git process.
 */
export async function assertWritable(root: string, rel: string): Promise<void> {
  const parts = rel.split('/');
  let dir = root;
  for (const [i, part] of parts.slice(0, -1).entries()) {
    dir = path.join(dir, part);
    const shown = parts.slice(0, i + 1).join('/');
    let st;
    try {
      st = await stat(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return; // the rest is made by the write, inside the work tree
      if (code === 'ENOTDIR') break;
      throw err;
    }
    if (!st.isDirectory()) {
      throw new GuardError(
        'E_USAGE',
        `cannot write ${rel}: ${shown} is a file, not a folder`,
        `write ${shown} itself, or pick a path that is not under a file`,
      );
    }
    const git = await lstat(path.join(dir, '.git')).catch(() => null);
    if (git) {
      throw new GuardError(
        'E_PATH_ESCAPE',
        `cannot write ${rel}: ${shown} is a repository of its own (a submodule or a nested clone); guard's checkpoints here do not hold its files`,
        `run guard in that repository: guard write --cwd ${shown} ${parts.slice(i + 1).join('/')}`,
      );
    }
  }
}
