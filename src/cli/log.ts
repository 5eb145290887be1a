import { EXIT, GuardError } from '../core/errors.js';
import { log, parseAge, prune, type LogEntry } from '../flows/log.js';
import type { Output } from '../ui/output.js';
import { resolveCwd, type GlobalArgs } from './main.js';

export async function run(argv: GlobalArgs, out: Output): Promise<number> {
  const cwd = resolveCwd(argv);
  if (argv.prune) {
    const olderThan = argv['older-than'] as string | undefined;
    const r = await prune({
      cwd,
      color: out.ttyColor,
      olderThanMs: olderThan !== undefined ? parseAge(olderThan) : undefined,
      keep: argv.keep as number | undefined,
      includeRejected: Boolean(argv['include-rejected']),
    });
    out.result('log', r);
    const { checkpoints, rejected, decisions } = r.pruned;
    const parts = [`${checkpoints} checkpoint${checkpoints === 1 ? '' : 's'}`];
    if (argv['include-rejected']) parts.push(`${rejected} rejected ref${rejected === 1 ? '' : 's'}`, `${decisions} decision record${decisions === 1 ? '' : 's'}`);
    out.important(`guard: pruned ${parts.join(', ')}`);
    return EXIT.ok;
  }
  const limit = (argv.limit as number | undefined) ?? 50;
  if (!Number.isInteger(limit) || limit < 0) {
    throw new GuardError('E_USAGE', `--limit ${String(argv.limit)} is not a count`, 'pass a whole number of entries, e.g. --limit 20 (0 shows only how many there are)');
  }
  const r = await log({ cwd, color: out.ttyColor, limit, ...(typeof argv.session === 'string' ? { session: argv.session } : {}) });
  for (const ref of r.skipped) out.warn(`skipped ${ref}: not a readable guard record (edited by hand?)`);
  out.result('log', r);
  if (out.json) return EXIT.ok;
  if (r.total === 0) {
    out.info('guard: no checkpoints or decisions yet');
    return EXIT.ok;
  }
  for (const e of r.entries) out.info(line(e, out));
  if (r.truncated) out.info(out.c.dim(`(${r.total - r.entries.length} older entries not shown: --limit ${r.total})`));
  return EXIT.ok;
}

/** time, kind, path or reason, decision, ref: one line per entry. */
function line(e: LogEntry, out: Output): string {
  const { c } = out;
  const time = e.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  if (e.kind === 'checkpoint') {
    const lost = 'lost' in e && Array.isArray(e.lost) ? `  LOST: ${e.lost.join(', ')}` : '';
    const what = (e.paths ? `${e.reason} [${e.paths.join(', ')}]` : e.reason) + lost;
    return `${c.dim(time)}  ${c.cyan('checkpoint')}  ${what}  ${c.bold(e.id)}`;
  }
  const colour = e.decision === 'allowed' ? c.green : e.decision === 'approved' ? c.yellow : c.red;
  const lane = e.lane ? ` (lane ${e.lane})` : '';
  return `${c.dim(time)}  decision    ${e.path} ${e.status}  ${colour(e.decision)} by ${e.decider} in ${e.command ?? '?'}${lane}${e.ref ? `  ${e.ref}` : ''}`;
}
