import { EXIT } from '../core/errors.js';
import { restore } from '../flows/history/restore.js';
import type { Output } from '../ui/output.js';
import type { RestoreArgs } from './spec.js';

export async function run(a: RestoreArgs, out: Output): Promise<number> {
  // paths come after `--` or, without it, as positionals
  const r = await restore({
    cwd: a.cwd,
    checkpoint: a.checkpoint,
    paths: [...a.paths, ...a.rest],
    staged: Boolean(a.staged),
    color: out.ttyColor,
  });
  out.result('restore', r);
  for (const s of r.skipped) out.warn(`left ${s.path} alone: ${s.why}`);
  for (const w of r.warnings) out.warn(w);
  for (const s of r.notRestored) out.warn(`did not restore ${s.path}: ${s.why}`);
  // Some paths could not be put back: the rest was, and the undo below still undoes it.
  const code = r.notRestored.length > 0 ? EXIT.blocked : EXIT.ok;
  if (out.json) return code;
  const { c } = out;
  if (r.changes.length === 0 && r.staged.length === 0 && r.notRestored.length === 0) {
    out.info(`guard: nothing to restore: the files already match checkpoint ${r.checkpoint}`);
    return EXIT.ok;
  }
  const lines = [
    `guard: restored ${r.changes.length} file${r.changes.length === 1 ? '' : 's'} from checkpoint ${r.checkpoint}`,
  ];
  for (const ch of r.changes) lines.push(`  ${ch.action.padEnd(9)}  ${ch.path}`);
  if (r.staged.length > 0) lines.push(`  index entries put back: ${r.staged.length}`);
  lines.push(`undo: ${c.bold(`guard restore ${r.undo}`)}${r.staged.length > 0 ? ' --staged' : ''}`);
  if (r.notRestored.length > 0)
    lines.push(c.yellow(`not restored: ${r.notRestored.length} (see above)`));
  out.important(lines.join('\n'));
  return code;
}
