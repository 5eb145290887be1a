import path from 'node:path';
import { EXIT } from '../core/errors.js';
import { shortOid } from '../flows/context.js';
import { lanes } from '../flows/lanes/lanes.js';
import type { Output } from '../ui/output.js';
import type { LanesArgs } from './spec.js';

export async function run(a: LanesArgs, out: Output): Promise<number> {
  const cwd = a.cwd;
  const r = await lanes({ cwd, color: out.ttyColor });
  out.result('lanes', { lanes: r.lanes });
  if (out.json) return EXIT.ok;
  if (r.lanes.length === 0) {
    out.info('guard: no lanes (guard start NAME makes one)');
    return EXIT.ok;
  }
  const { c } = out;
  const rows = r.lanes.map((l) => [
    l.name,
    shortOid(l.base),
    String(l.filesChanged),
    l.needsApproval > 0 ? String(l.needsApproval) : '0',
    (path.relative(cwd, l.path) || '.') +
      (l.broken ? '  (broken: folder missing; guard discard ' + l.name + ' cleans up)' : ''),
  ]);
  const head = ['LANE', 'BASE', 'FILES', 'APPROVAL', 'PATH'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const fmt = (row: string[]) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  const lines = [c.dim(fmt(head))];
  for (const [i, row] of rows.entries()) {
    const l = r.lanes[i]!;
    const text = fmt(row);
    lines.push(l.broken ? c.red(text) : l.needsApproval > 0 ? c.yellow(text) : text);
  }
  out.important(lines.join('\n'));
  return EXIT.ok;
}
