import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DELETION_BLOB, approvalTrailer } from './approvals.js';

/**
 * The trailers of a commit whose pre-commit gate a person approved at the
 * prompt: `guard check` leaves them in this work tree's git dir, and the
 * commit-msg hook (hooks/commit-msg, `git rev-parse --git-path`) adds them
 * to the message of the same commit, then removes the file. Each names the
 * path and the blob that was staged when the person approved (the deletion
 * id for a deletion; the mode too for a symlink or a gitlink), so `guard ci` accepts exactly that content.
 * `git commit --no-verify` skips both hooks: no trailer, as no approval.
 */
export const PENDING_TRAILERS = 'guard-approved-trailers';

export async function leaveTrailers(
  gitDir: string,
  approved: ReadonlyArray<{ path: string; blob: string | null; mode?: string | null }>,
  more: readonly string[] = [],
): Promise<void> {
  const file = path.join(gitDir, PENDING_TRAILERS);
  const lines = [
    ...approved.map((a) => approvalTrailer(a.path, a.blob ?? DELETION_BLOB, a.mode)),
    ...more,
  ];
  // One file operation, no git process: a check with nothing to add clears what an aborted commit left.
  if (lines.length === 0) return rm(file, { force: true });
  await writeFile(file, lines.join('\n') + '\n');
}
