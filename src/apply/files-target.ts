import { appendFile, chmod, lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Steps } from './steps.js';
import { randomHex } from '../core/digest.js';

/**
 * Setup: the files guard installs itself by (git hooks, its config, a
 * harness's hook settings or plugin file), in order. Not the user's work:
 * no checkpoint (`guard init` says what it changed, and the files are
 * guard's or are merged with what was there).
 *
 * - `write`: the whole file, atomically (a temp file beside it, renamed
 *   over it: killed half way, the old file or the new one, never half of
 *   one), its folder made; a file that is there keeps its mode unless one
 *   is given. A symlink is written through, as the harnesses read it,
 *   unless `replaceLink`: then the link itself is replaced (a hook the net
 *   puts back: a link planted there must never make guard write elsewhere).
 * - `append`: to a file of the user's own (a hook guard adds its line to);
 *   never rewritten.
 * - `mode`: only the mode (a hook made executable).
 */
export type FileOp =
  | { op: 'write'; path: string; content: string | Buffer; mode?: number; replaceLink?: boolean }
  | { op: 'append'; path: string; text: string }
  | { op: 'mode'; path: string; mode: number };

export interface FilesTarget {
  kind: 'files';
  ops: FileOp[];
}

export const filesSteps: Steps<FilesTarget, undefined> = {
  recordsFirst: true,
  changes: (t) => t.ops.length > 0,
  write: async (_p, t) => writeOps(t.ops),
};

/** The ops in order (setup outside any repository uses this alone: apply.ts installFiles). */
export async function writeOps(ops: readonly FileOp[]): Promise<undefined> {
  for (const o of ops) {
    if (o.op === 'write') await writeWhole(o.path, o.content, o.mode, o.replaceLink === true);
    else if (o.op === 'append') await appendFile(o.path, o.text);
    else await chmod(o.path, o.mode);
  }
  return undefined;
}

async function writeWhole(
  file: string,
  content: string | Buffer,
  mode: number | undefined,
  replaceLink: boolean,
): Promise<void> {
  let st = await lstat(file).catch(() => null);
  if (st?.isSymbolicLink() && replaceLink) st = null;
  if (st?.isSymbolicLink()) {
    await writeFile(file, content);
    if (mode !== undefined) await chmod(file, mode);
    return;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.guard-${process.pid}-${randomHex(4)}`,
  );
  try {
    await writeFile(tmp, content, { mode: mode ?? (st ? st.mode & 0o7777 : 0o644) });
    // writeFile's mode is masked by the umask: the mode asked for is the mode it gets
    await chmod(tmp, mode ?? (st ? st.mode & 0o7777 : 0o644));
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
