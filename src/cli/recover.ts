import { EXIT, GuardError } from '../core/errors.js';
import { agentShellWhy } from '../ui/auto-mode.js';
import { openRepo } from '../git/repo.js';
import { recover } from '../flows/doctor/integrity.js';
import type { Output } from '../ui/output.js';
import type { RecoverArgs } from './spec.js';

/** Exit 1 when something could not be recovered (refs whose objects are gone) or still needs `guard init`. */
export async function run(a: RecoverArgs, out: Output): Promise<number> {
  // recover starts the journal again from the refs there are: after refs were deleted and the
  // journal rewritten, that makes the deletion guard's word. A person's command, never an agent's,
  // with or without the variables its harness set (holes6: read from the processes above too).
  const agent = agentShellWhy();
  if (agent)
    throw new GuardError(
      'E_USAGE',
      `guard recover starts guard's journal of its refs again: a person runs it, not an agent's command tool (${agent})`,
      'ask the user to run guard doctor, then guard recover, in their own terminal',
    );
  const r = await recover(await openRepo(a.cwd));
  out.result('recover', r);
  if (!out.json) {
    if (r.restored.length === 0 && r.lost.length === 0)
      out.info("guard: every ref in guard's journal is in place");
    if (r.restored.length > 0)
      out.important(
        `guard: put back ${r.restored.length} ref${r.restored.length === 1 ? '' : 's'} removed outside guard:\n${r.restored.map((t) => `  ${t.ref}`).join('\n')}`,
      );
    if (r.lost.length > 0)
      out.important(
        `guard: LOST, git no longer has their objects (pruned by gc):\n${r.lost.map((t) => `  ${t.ref} ${t.oid}`).join('\n')}`,
      );
    for (const p of r.remaining) out.important(`still: ${p.message}\nhint: ${p.hint}`);
  }
  return r.lost.length > 0 || r.remaining.length > 0 ? EXIT.blocked : EXIT.ok;
}
