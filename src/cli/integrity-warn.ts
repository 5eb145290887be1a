import { commonDirOf } from '../git/journal.js';
import { integrityProblems } from '../flows/doctor/integrity.js';
import type { Output } from '../ui/output.js';

/**
 * A door that is not the hook (check, log, rewind) says on stderr when guard's
 * net was changed outside guard (flows/doctor/integrity.ts); file reads only.
 */
export async function warnIntegrity(cwd: string, out: Output): Promise<void> {
  const common = commonDirOf(cwd);
  if (!common) return;
  for (const p of await integrityProblems(common))
    out.warn(`WARNING: ${p.message}\nhint: ${p.hint}`);
}
