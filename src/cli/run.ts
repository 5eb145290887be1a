import type { Classification } from '../core/classify.js';
import { shortOid } from '../flows/context.js';
import { runInLane, type RunResult } from '../flows/lanes/run.js';
import type { Output } from '../ui/output.js';
import type { RunArgs } from './spec.js';

/** How many changed files the summary names before it says how many more there are. */
const MAX_LISTED = 40;

/** The command's exit code is guard's exit code (7 stays 7). */
export async function run(a: RunArgs, out: Output): Promise<number> {
  const from = a.from !== undefined ? { from: a.from } : {};
  const r = await runInLane({
    cwd: a.cwd,
    color: out.ttyColor,
    name: a.name,
    command: a.rest,
    stdoutToStderr: out.json,
    ...from,
  });
  out.result('run', r);
  if (!out.json) printSummary(r, out);
  return r.exitCode;
}

function printSummary(r: RunResult, out: Output): void {
  const { c } = out;
  const ended = r.signal ? `ended by ${r.signal}` : `exited with ${r.exitCode}`;
  const approval =
    r.needsApproval > 0
      ? c.yellow(`, ${r.needsApproval} need${r.needsApproval === 1 ? 's' : ''} approval`)
      : '';
  const lines = [
    '',
    c.bold(
      `guard: lane ${r.name}: the command ${ended}; ${r.filesChanged} file${r.filesChanged === 1 ? '' : 's'} changed since ${shortOid(r.base)}`,
    ) + approval,
  ];
  const shown = [...r.files]
    .sort((a, b) => Number(b.needsApproval) - Number(a.needsApproval))
    .slice(0, MAX_LISTED);
  for (const f of shown) lines.push(fileLine(f, c));
  if (r.files.length > shown.length)
    lines.push(
      c.dim(`  ... and ${r.files.length - shown.length} more (guard review ${r.name} shows all)`),
    );
  if (r.checkpoint) lines.push(c.dim(`checkpoint ${r.checkpoint.id}`));
  if (r.filesChanged > 0)
    lines.push(`next: guard review ${r.name}   (or throw it away: guard discard ${r.name})`);
  const outside = r.mainTree.changed;
  if (outside.length > 0 || r.mainTree.restore) {
    lines.push(
      c.yellow(
        `warning: the main tree changed outside the lane while the command ran (${outside.length} file${outside.length === 1 ? '' : 's'}):`,
      ),
    );
    for (const ch of outside.slice(0, MAX_LISTED))
      lines.push(`  ${ch.change.padEnd(8)}  ${ch.path}`);
    if (outside.length > MAX_LISTED)
      lines.push(c.dim(`  ... and ${outside.length - MAX_LISTED} more`));
    lines.push(
      `put it back: ${c.bold(r.mainTree.restore ?? `guard restore ${r.mainTree.checkpoint}`)}`,
    );
  }
  out.important(lines.join('\n'));
}

function fileLine(f: Classification, c: Output['c']): string {
  const name = f.oldPath !== undefined ? `${f.oldPath} -> ${f.path}` : f.path;
  const status = f.status.padEnd(7);
  if (!f.needsApproval) return `  ${status}  ${name}`;
  return `  ${c.yellow(status)}  ${name}  ${c.yellow('needs approval')}: ${f.reasons.join('; ')}`;
}
