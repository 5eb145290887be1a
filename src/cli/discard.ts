import { EXIT } from '../core/errors.js';
import { discard } from '../flows/lanes.js';
import type { Output } from '../ui/output.js';
import { resolveCwd, type GlobalArgs } from './main.js';

export async function run(argv: GlobalArgs, out: Output): Promise<number> {
  const r = await discard({ cwd: resolveCwd(argv), color: out.ttyColor, name: String(argv.name ?? '') });
  out.result('discard', r);
  if (out.json) return EXIT.ok;
  const lines = [`guard: discarded lane ${r.name} (worktree${r.broken ? ' record' : ''}, branch ${r.branch})`];
  if (r.checkpoint) {
    lines.push(`its last state is kept as checkpoint ${r.checkpoint.id}`);
    lines.push(`  see what it held:        git show --stat ${r.checkpoint.commit}`);
    lines.push(`  get it back as a branch: git branch ${r.name} ${r.checkpoint.commit}`);
  } else {
    lines.push('it had no work tree and no branch left: nothing to keep');
  }
  for (const n of r.nested) {
    lines.push(`nested repository ${n.path} kept as checkpoint ${n.checkpoint} (its commits and uncommitted work)`);
    lines.push(`  get it back: git worktree add ${n.path.replace(/\/$/, '').split('/').pop()}-kept ${n.commit}`);
  }
  if (r.notKept.length > 0) {
    const shown = r.notKept.slice(0, 10).join(', ');
    lines.push(`not kept (ignored by git, never in a checkpoint): ${shown}${r.notKept.length > 10 ? `, and ${r.notKept.length - 10} more` : ''}`);
  }
  out.important(lines.join('\n'));
  return EXIT.ok;
}
