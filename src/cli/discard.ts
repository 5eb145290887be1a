import { quotePath, shellQuote } from '../core/quote.js';
import { EXIT } from '../core/errors.js';
import { discard } from '../flows/lanes/lanes.js';
import type { Output } from '../ui/output.js';
import type { DiscardArgs } from './spec.js';

export async function run(a: DiscardArgs, out: Output): Promise<number> {
  const r = await discard({ cwd: a.cwd, color: out.ttyColor, name: a.name });
  out.result('discard', r);
  if (out.json) return EXIT.ok;
  const lines = [
    `guard: discarded lane ${r.name} (worktree${r.broken ? ' record' : ''}, branch ${r.branch})`,
  ];
  if (r.checkpoint) {
    lines.push(`its last state is kept as checkpoint ${r.checkpoint.id}`);
    lines.push(`  see what it held:        git show --stat ${r.checkpoint.commit}`);
    lines.push(`  get it back as a branch: git branch ${r.name} ${r.checkpoint.commit}`);
  } else {
    lines.push('it had no work tree and no branch left: nothing to keep');
  }
  for (const n of r.nested) {
    lines.push(
      `nested repository ${n.path} kept as checkpoint ${n.checkpoint} (its commits and uncommitted work)`,
    );
    lines.push(
      `  get it back: git worktree add ${shellQuote(`${n.path.replace(/\/$/, '').split('/').pop()}-kept`)} ${n.commit}`,
    );
  }
  // --quiet keeps only what is gone for good
  out.info(lines.join('\n'));
  if (r.notKept.length > 0) {
    // files first (.env, local config: what a person misses), then folders (node_modules/, build output)
    const shown = r.notKept.slice(0, 10).map(quotePath).join(', ');
    out.important(
      `not kept (ignored by git, never in a checkpoint): ${shown}${r.notKept.length > 10 ? `, and ${r.notKept.length - 10} more` : ''}`,
    );
  }
  return EXIT.ok;
}
