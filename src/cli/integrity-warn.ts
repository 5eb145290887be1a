import { commonDirOf } from '../git/journal.js';
import { integrityProblems, type IntegrityProblem } from '../flows/doctor/integrity.js';
import type { Output } from '../ui/output.js';

/**
 * A door that is not the hook (check, log, rewind) says on stderr when guard's
 * net was changed outside guard (flows/doctor/integrity.ts); file reads only.
 *
 * `early` (guard check): the same reads started beside the command's own work, while
 * node waits for git. When they found nothing, nothing is said: the command's own
 * writes are journaled, so they add no problem. When they found any, the net is read
 * again now, after the command (a tip it wrote may have put one right), and that is
 * what is said, as without `early`.
 */
export async function warnIntegrity(
  cwd: string,
  out: Output,
  early?: Promise<IntegrityProblem[] | null>,
): Promise<void> {
  const before = early ? await early.catch(() => undefined) : undefined;
  if (before === null || (before !== undefined && before.length === 0)) return;
  const common = commonDirOf(cwd);
  if (!common) return;
  for (const p of await integrityProblems(common))
    out.warn(`WARNING: ${p.message}\nhint: ${p.hint}`);
}

/** The net's problems, read at once (null: no repository found); for `warnIntegrity`'s `early`. */
export function readIntegrityEarly(cwd: string): Promise<IntegrityProblem[] | null> {
  const read = (async () => {
    const common = commonDirOf(cwd);
    return common ? integrityProblems(common) : null;
  })();
  read.catch(() => {});
  return read;
}
