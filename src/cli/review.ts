import { EXIT } from '../core/errors.js';
import { metricsLine } from '../core/preview.js';
import { review, type ReviewResult } from '../flows/review.js';
import { boundFiles, type Output } from '../ui/output.js';
import { isAutoMode } from '../ui/auto-mode.js';
import { resolveCwd, type GlobalArgs } from './main.js';

export async function run(argv: GlobalArgs, out: Output): Promise<number> {
  const result = await review(
    {
      cwd: resolveCwd(argv),
      color: out.ttyColor,
      ...(argv.deadline ? { deadline: argv.deadline } : {}),
      ...(typeof argv.name === 'string' ? { name: argv.name } : {}),
      auto: isAutoMode(argv.auto as boolean | undefined),
      all: Boolean(argv.all),
      ...(typeof argv.decisions === 'string' ? { decisionsFile: argv.decisions } : {}),
      commit: Boolean(argv.commit),
      ...(typeof argv.message === 'string' ? { message: argv.message } : {}),
    },
    async () => {
      const { openReviewPrompter } = await import('../ui/review-prompt.js');
      return openReviewPrompter(out.ttyColor, 200);
    },
  );
  out.result('review', { ...result, ...boundFiles(result.files, argv.limit as number | undefined) });
  for (const w of result.warnings) out.warn(w);
  if (!out.json) printHuman(result, out, argv.limit as number | undefined);
  const refused = result.blocked + result.rejected + result.conflicts;
  return result.cancelled || result.commitFailed || refused > 0 ? EXIT.blocked : EXIT.ok;
}

function printHuman(r: ReviewResult, out: Output, limit: number | undefined): void {
  const { c } = out;
  if (r.cancelled) {
    out.important('guard: review cancelled: nothing was merged or recorded.');
    return;
  }
  const lines: string[] = [`guard review of lane ${c.bold(r.lane)} (base ${r.base.slice(0, 10)})`];
  if (r.files.length === 0) lines.push('  the lane has no changes');
  const shown = boundFiles(r.files, limit);
  for (const f of shown.files) {
    const name = f.oldPath !== undefined ? `${f.oldPath} -> ${f.path}` : f.path;
    const outcome = f.conflict
      ? c.red('CONFLICT')
      : f.decision === 'blocked'
        ? c.red('blocked')
        : f.decision === 'rejected'
          ? c.yellow('rejected')
          : f.taken
            ? c.green(`taken in part (${f.taken.length}/${f.hunks.length} hunks)`)
            : c.green(f.decision === 'approved' ? `approved${f.strategy ? ` (${f.strategy})` : ''}` : 'merged');
    lines.push(`  ${outcome}  ${name}  ${c.dim(`${f.status}, ${metricsLine(f)}`)}`);
    if (f.decision === 'blocked') for (const reason of f.reasons) lines.push(`      - ${reason}`);
    if (f.ref) lines.push(`      kept as ${c.cyan(f.ref)}`);
  }
  if (shown.truncatedReason) lines.push(`  ... ${shown.truncatedReason}`);
  lines.push('');
  lines.push(`${r.merged} merged and staged, ${r.blocked} blocked, ${r.rejected} rejected, ${r.conflicts} conflicted.`);
  if (r.conflicts > 0) lines.push('Conflicts are marked in the files like a git merge; resolve them, then git add.');
  if (r.blocked > 0) lines.push(`Blocked changes need a person: run guard review ${r.lane} in a terminal, or pass --decisions.`);
  // review stages what it merges: an undo without --staged would leave the merge staged for the next commit
  if (r.checkpoint) lines.push(`Undo this review: guard restore ${r.checkpoint}${r.commit ? '' : ' --staged'}`);
  if (r.commit) lines.push(`Committed ${r.commit.slice(0, 10)}.`);
  if (r.feedback && (r.blocked || r.rejected || r.conflicts)) lines.push(`What was refused is explained to the agent in ${r.feedback}`);
  out.important(lines.join('\n'));
}
