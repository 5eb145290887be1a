import { EXIT } from '../core/errors.js';
import { metricsLine } from '../core/preview.js';
import { displayName, quotePath } from '../core/quote.js';
import { review, type ReviewResult } from '../flows/review/review.js';
import { boundFiles, type Output } from '../ui/output.js';
import { isAutoMode } from '../ui/auto-mode.js';
import { withTimeout } from '../flows/context.js';
import type { ReviewArgs } from './spec.js';

export async function run(a: ReviewArgs, out: Output): Promise<number> {
  const result = await withTimeout(a.timeout, (deadline) =>
    review({
      cwd: a.cwd,
      color: out.ttyColor,
      ...(deadline ? { deadline } : {}),
      ...(a.name !== undefined ? { name: a.name } : {}),
      auto: isAutoMode(a.auto),
      all: Boolean(a.all),
      ...(a.decisions !== undefined ? { decisionsFile: a.decisions } : {}),
      commit: Boolean(a.commit),
      ...(a.message !== undefined ? { message: a.message } : {}),
      dryRun: Boolean(a.dryRun),
    }),
  );
  out.result('review', { ...result, ...boundFiles(result.files, a.limit) });
  for (const w of result.warnings) out.warn(w);
  if (!out.json) printHuman(result, out, a.limit);
  if (result.dryRun) return EXIT.ok;
  const refused = result.blocked + result.rejected + result.conflicts + result.notReviewed.length;
  return result.cancelled || result.commitFailed || refused > 0 ? EXIT.blocked : EXIT.ok;
}

function printHuman(r: ReviewResult, out: Output, limit: number | undefined): void {
  const { c } = out;
  if (r.cancelled) {
    out.important('guard: review cancelled: nothing was merged or recorded.');
    return;
  }
  const title = r.dryRun ? 'guard review --dry-run of lane' : 'guard review of lane';
  const lines: string[] = [`${title} ${c.bold(r.lane)} (base ${r.base.slice(0, 10)})`];
  if (r.files.length === 0) lines.push('  the lane has no changes');
  const shown = boundFiles(r.files, limit);
  const width = Math.min(60, Math.max(0, ...shown.files.map((f) => displayName(f).length)));
  const outcomeWidth = Math.max(0, ...shown.files.map((f) => f.outcome.length));
  for (const f of shown.files) {
    const colour =
      f.conflict || f.decision === 'blocked'
        ? c.red
        : f.decision === 'rejected'
          ? c.yellow
          : c.green;
    lines.push(
      `  ${displayName(f).padEnd(width)}  ${colour(f.outcome.padEnd(outcomeWidth))}  ${c.dim(`${f.status}, ${metricsLine(f)}`)}`,
    );
    if (f.decision === 'blocked') for (const reason of f.reasons) lines.push(`      - ${reason}`);
    if (r.dryRun)
      for (const h of f.hunks) lines.push(c.dim(`      ${h.id}  #${h.index}  ${h.header}`));
    if (f.takeByHand) lines.push(`      take it by hand, once you have looked: ${f.takeByHand}`);
    if (f.ref)
      lines.push(
        `      ${f.decision === 'approved' && !f.taken ? "the lane's version kept as" : 'kept as'} ${c.cyan(f.ref)}`,
      );
  }
  if (shown.truncatedReason) lines.push(`  ... ${shown.truncatedReason}`);
  for (const n of r.notReviewed)
    lines.push(`  ${c.red(`${quotePath(n.path)}  not reviewed, not merged: ${n.why}`)}`);
  if (r.notReviewed.length > 0)
    lines.push(`      still in the lane (${r.lanePath}): take it by hand, once you have looked`);
  lines.push('');
  if (r.dryRun) {
    lines.push(
      `Nothing was written. ${r.summary.taken} would be merged, ${r.summary.left} left out, ${r.conflicts} would conflict.`,
    );
    out.important(lines.join('\n'));
    return;
  }
  const already = r.summary.already ? `, ${r.summary.already} already in the main tree` : '';
  lines.push(
    `${r.merged} merged and staged, ${r.blocked} blocked, ${r.rejected} rejected, ${r.conflicts} conflicted${already}.`,
  );
  if (r.files.some((f) => f.conflict && !f.unread))
    lines.push('Conflicts are marked in the files like a git merge; resolve them, then git add.');
  if (r.files.some((f) => f.unread && f.conflict))
    lines.push(
      'guard did not read what it left for you to take by hand (a submodule, or a file over 64 MiB): it never merges what it has not read.',
    );
  if (r.blocked > 0 && r.asked)
    lines.push(
      `You stopped (q) before deciding the blocked changes: run guard review ${r.lane} again to decide them.`,
    );
  else if (r.blocked > 0)
    lines.push(
      `Blocked changes need a person: run guard review ${r.lane} in a terminal, or pass --decisions.`,
    );
  // review stages what it merges: an undo without --staged would leave the merge staged for the next commit
  if (r.checkpoint)
    lines.push(`Undo this review: guard restore ${r.checkpoint}${r.commit ? '' : ' --staged'}`);
  if (r.commit) lines.push(`Committed ${r.commit.slice(0, 10)}.`);
  if (r.feedback && (r.blocked || r.rejected || r.conflicts))
    lines.push(`What was refused is explained to the agent in ${r.feedback}`);
  out.important(lines.join('\n'));
}
