import { EXIT } from '../core/errors.js';
import { shortOid } from '../flows/context.js';
import { start } from '../flows/lanes/lanes.js';
import { makeColors } from '../ui/color.js';
import type { Output } from '../ui/output.js';
import type { StartArgs } from './spec.js';

/** stdout is the lane's path and nothing else, so `cd "$(guard start NAME)"` works; the rest goes to stderr. */
export async function run(a: StartArgs, out: Output): Promise<number> {
  const from = a.from !== undefined ? { from: a.from } : {};
  const r = await start({ cwd: a.cwd, color: out.ttyColor, name: a.name, ...from });
  out.result('start', r);
  out.important(r.path);
  if (!out.json && !out.quiet) {
    const c = makeColors(out.ttyColor);
    process.stderr.write(
      `${c.dim('guard:')} lane ${r.name} started from ${shortOid(r.base)} on branch ${r.branch}\n` +
        `${c.dim('next:')}  point the agent at that folder (or: guard run ${r.name} -- CMD...), then: guard review ${r.name}\n`,
    );
  }
  return EXIT.ok;
}
