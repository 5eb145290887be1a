import { readFile, readlink } from 'node:fs/promises';
import { MODE } from '../core/modes.js';
import { resolveInside, statOnDisk } from './atomic.js';

/** What a work tree holds at a path now: content and git mode, or null. */
export interface Current {
  content: Buffer;
  mode: string;
}

/** Read a work-tree path without following a symlink there (its target text is its content). */
export async function readCurrent(root: string, relPath: string): Promise<Current | null> {
  const { abs } = await resolveInside(root, relPath);
  // a path under a file (a folder that became a file) holds nothing
  const st = await statOnDisk(abs).catch((err: NodeJS.ErrnoException) =>
    err.code === 'ENOTDIR' ? null : Promise.reject(err),
  );
  if (!st) return null;
  if (st.mode === MODE.symlink)
    return { content: Buffer.from(await readlink(abs), 'utf8'), mode: st.mode };
  return { content: await readFile(abs), mode: st.mode };
}
