import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../../core/errors.js';
import { resolveInside } from '../../worktree/atomic.js';

/**
 * Where a hook call's paths land: inside the work tree (and which), outside
 * it, or escaping it (refused).
 */

type Placed = { kind: 'outside' } | { kind: 'inside'; rel: string; abs: string };

/**
 * Where a payload path lands. An absolute path outside the repository is
 * not guard's business; a path that leaves it through `..` or a symlinked
 * folder, or that points into .git/, is refused (E_PATH_ESCAPE). A symlink
 * at the path itself is written through by the harnesses: its target is
 * what gets measured, and it must stay inside.
 */
export async function place(root: string, cwd: string, p: string): Promise<Placed> {
  let abs = path.resolve(cwd, p);
  const rel = path.relative(root, abs);
  const lexicallyOutside = rel.startsWith('..') || path.isAbsolute(rel);
  if (lexicallyOutside) {
    // through a symlink to the repository (a linked cwd, /tmp/link/state.py) it is still inside
    const realRoot = await realpath(root);
    const real = await realAbs(abs);
    if (!within(realRoot, real)) {
      if (p.split(/[\\/]/).includes('..'))
        throw new GuardError(
          'E_PATH_ESCAPE',
          `${JSON.stringify(p)} leaves the repository through ".."`,
          'name files inside the repository',
        );
      return { kind: 'outside' };
    }
    abs = path.join(root, path.relative(realRoot, real));
  }
  let inside = await resolveInside(root, abs);
  const st = await lstat(inside.abs).catch(() => null);
  if (st?.isSymbolicLink()) {
    const target = await realpath(inside.abs).catch(() => null);
    if (target === null)
      throw new GuardError(
        'E_PATH_ESCAPE',
        `${inside.rel} is a symlink to nothing guard can follow`,
        'write the file the link points to by its own name',
      );
    const realRoot = await realpath(root);
    const inRoot = path.relative(realRoot, target);
    if (inRoot.startsWith('..') || path.isAbsolute(inRoot))
      throw new GuardError(
        'E_PATH_ESCAPE',
        `${inside.rel} is a symlink that leads outside the repository`,
        'write files inside the repository only',
      );
    inside = await resolveInside(root, inRoot);
  }
  return { kind: 'inside', rel: inside.rel, abs: inside.abs };
}

export function within(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The path with its longest existing folder prefix resolved (symlinks followed), the rest as given. */
export async function realAbs(abs: string): Promise<string> {
  let dir = path.dirname(abs);
  let rest = path.basename(abs);
  for (;;) {
    const real = await realpath(dir).catch(() => null);
    if (real !== null) return path.join(real, rest);
    const up = path.dirname(dir);
    if (up === dir) return abs;
    rest = path.join(path.basename(dir), rest);
    dir = up;
  }
}

export async function nearestFolder(abs: string): Promise<string> {
  let dir = path.dirname(abs);
  while ((await lstat(dir).catch(() => null))?.isDirectory() !== true) {
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return dir;
}
