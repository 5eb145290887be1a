import { EXIT, GuardError } from '../core/errors.js';
import { quotePath } from '../core/quote.js';
import { log, parseAge, prune, type LogEntry } from '../flows/history/log.js';
import type { Output } from '../ui/output.js';
import type { LogArgs } from './spec.js';

export async function run(a: LogArgs, out: Output): Promise<number> {
  const cwd = a.cwd;
  if (a.prune) {
    const r = await prune({
      cwd,
      color: out.ttyColor,
      olderThanMs: a.olderThan !== undefined ? parseAge(a.olderThan) : undefined,
      keep: a.keep,
      includeRejected: Boolean(a.includeRejected),
    });
    out.result('log', r);
    const { checkpoints, rejected, decisions } = r.pruned;
    const parts = [`${checkpoints} checkpoint${checkpoints === 1 ? '' : 's'}`];
    if (a.includeRejected)
      parts.push(
        `${rejected} rejected ref${rejected === 1 ? '' : 's'}`,
        `${decisions} decision record${decisions === 1 ? '' : 's'}`,
      );
    out.info(`guard: pruned ${parts.join(', ')}`);
    return EXIT.ok;
  }
  const limit = a.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 0) {
    throw new GuardError(
      'E_USAGE',
      `--limit ${String(a.limit)} is not a count`,
      'pass a whole number of entries, e.g. --limit 20 (0 shows only how many there are)',
    );
  }
  await (await import('./integrity-warn.js')).warnIntegrity(cwd, out);
  const r = await log({
    cwd,
    color: out.ttyColor,
    limit,
    ...(a.session !== undefined ? { session: a.session } : {}),
  });
  for (const ref of r.skipped)
    out.warn(`skipped ${ref}: not a readable guard record (edited by hand?)`);
  out.result('log', r);
  if (out.json) return EXIT.ok;
  if (r.total === 0) {
    out.info('guard: no checkpoints or decisions yet');
    return EXIT.ok;
  }
  for (const e of r.entries) out.info(line(e, out));
  if (r.truncated)
    out.info(
      out.c.dim(
        `(${r.totalAtLeast ? 'at least ' : ''}${r.total - r.entries.length} older entries not shown: --limit ${r.total})`,
      ),
    );
  return EXIT.ok;
}

/** Files a checkpoint could not keep (over the cap or the budget), or that a shell call took and no checkpoint held: named. */
function notKeptNote(e: LogEntry): string {
  const gone = 'notKept' in e && Array.isArray(e.notKept) ? e.notKept : [];
  if (gone.length > 0) return `  GONE, NOT KEPT: ${gone.map(quotePath).join(', ')}`;
  const skipped = 'skippedCount' in e && typeof e.skippedCount === 'number' ? e.skippedCount : 0;
  return skipped > 0 ? `  (${skipped} not kept: guard log --json names them)` : '';
}

/** time, kind, path or reason, decision, ref: one line per entry. */
function line(e: LogEntry, out: Output): string {
  const { c } = out;
  const time = e.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  if (e.kind === 'checkpoint') {
    const lost =
      ('lost' in e && Array.isArray(e.lost) ? `  LOST: ${e.lost.map(quotePath).join(', ')}` : '') +
      notKeptNote(e);
    const what = (e.paths ? `${e.reason} [${e.paths.map(quotePath).join(', ')}]` : e.reason) + lost;
    return `${c.dim(time)}  ${c.cyan('checkpoint')}  ${what}  ${c.bold(e.id)}`;
  }
  const colour = e.decision === 'allowed' ? c.green : e.decision === 'approved' ? c.yellow : c.red;
  const lane = e.lane ? ` (lane ${e.lane})` : '';
  const how = e.hunks
    ? ` (${e.hunks.length} ${e.hunks.length === 1 ? 'hunk' : 'hunks'})`
    : e.strategy && e.decision === 'approved'
      ? ` (${e.strategy})`
      : '';
  const name =
    e.oldPath !== undefined ? `${quotePath(e.oldPath)} -> ${quotePath(e.path)}` : quotePath(e.path);
  return `${c.dim(time)}  decision    ${name} ${e.status}  ${colour(e.decision + how)} by ${e.decider} in ${e.command ?? '?'}${lane}${e.ref ? `  ${e.ref}` : ''}`;
}
