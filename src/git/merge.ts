import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { git } from './run.js';
import { randomHex } from '../core/digest.js';

export interface MergeResult {
  content: Buffer;
  conflicts: number;
}

export interface MergeInput {
  ours: Buffer;
  base: Buffer;
  theirs: Buffer;
  labels: [string, string, string];
}

/**
 * Three-way merge of one file with git's own merge-file: `ours` (the main
 * tree now), `base` (where the lane started), `theirs` (what was approved).
 * Conflicts come back as git-style markers labelled with the three names.
 * https://git-scm.com/docs/git-merge-file: exit code = number of conflicts, negative on error.
 */
export async function mergeFile(
  cwd: string,
  { ours, base, theirs, labels }: MergeInput,
): Promise<MergeResult> {
  const dir = await mkdtemp(path.join(tmpdir(), `guard-merge-${randomHex(3)}-`));
  try {
    const files = ['ours', 'base', 'theirs'].map((n) => path.join(dir, n));
    await Promise.all([
      writeFile(files[0]!, ours),
      writeFile(files[1]!, base),
      writeFile(files[2]!, theirs),
    ]);
    const r = await git(
      ['merge-file', '-p', '-L', labels[0], '-L', labels[1], '-L', labels[2], ...files],
      {
        cwd,
        okCodes: Array.from({ length: 127 }, (_, i) => i + 1),
      },
    );
    if (r.code >= 127) throw new GuardError('E_GIT', `git merge-file failed: ${r.stderr.trim()}`);
    return { content: r.stdout, conflicts: r.code };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
