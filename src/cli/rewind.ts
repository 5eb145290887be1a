import { EXIT } from '../core/errors.js';
import { rewind } from '../flows/history/rewind.js';
import type { Output } from '../ui/output.js';
import type { RewindArgs } from './spec.js';

export async function run(a: RewindArgs, out: Output): Promise<number> {
  // first: with its refs removed outside guard, "no session" is not the news
  await (await import('./integrity-warn.js')).warnIntegrity(a.cwd, out);
  const r = await rewind({
    cwd: a.cwd,
    color: out.ttyColor,
    ...(a.session !== undefined ? { session: a.session } : {}),
    ...(a.to !== undefined ? { to: a.to } : {}),
  });
  out.result('rewind', r);
  for (const w of r.warnings) out.warn(w);
  if (out.json) return EXIT.ok;
  const { c } = out;
  if (r.changes.length === 0) {
    out.info(
      `guard: nothing to rewind: every file ${r.harness} session ${r.session} wrote already holds its earlier content`,
    );
    return EXIT.ok;
  }
  const lines = [
    `guard: rewound ${r.changes.length} file${r.changes.length === 1 ? '' : 's'} of ${r.harness} session ${r.session} (from checkpoint ${r.from})`,
  ];
  for (const ch of r.changes) lines.push(`  ${ch.action.padEnd(9)}  ${ch.path}`);
  lines.push(`undo: ${c.bold(`guard restore ${r.undo}`)}`);
  out.important(lines.join('\n'));
  return EXIT.ok;
}
