import { EXIT } from '../core/errors.js';
import { metricsLine } from '../core/preview.js';
import { displayName } from '../core/quote.js';
import { check, type CheckResult } from '../flows/gates/check.js';
import { answerProbe } from '../flows/doctor/hook-probe.js';
import { isAutoMode } from '../ui/auto-mode.js';
import { boundFiles, type Output } from '../ui/output.js';
import { withTimeout } from '../flows/context.js';
import type { CheckArgs } from './spec.js';
// (static: check is on the hot path, bundled into main.js; the check itself is file reads)
import { readIntegrityEarly, warnIntegrity } from './integrity-warn.js';

export async function run(a: CheckArgs, out: Output): Promise<number> {
  if (answerProbe('check')) return EXIT.blocked; // integrity: guard doctor runs the hook to see that it blocks
  // the net's file reads run while node waits for git (said after the result, as before)
  const net = readIntegrityEarly(a.cwd);
  const result = await withTimeout(a.timeout, (deadline) =>
    check({
      cwd: a.cwd,
      auto: isAutoMode(a.auto),
      color: out.ttyColor,
      ...(deadline ? { deadline } : {}),
    }),
  );
  out.result('check', { ...result, ...boundFiles(result.files, a.limit) });
  await warnIntegrity(a.cwd, out, net);
  if (result.bypassed) {
    const { commit, paths, base } = result.bypassed;
    out.warn(
      `the branch moved to ${commit.slice(0, 10)} past this gate (hooks off, or a ref written by hand)${base ? ` and since ${base.slice(0, 10)}` : ''} ` +
        `has changes that need approval: ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', ...' : ''}; its next move is refused until a person approves, and guard ci will block them`,
    );
  }
  if (!out.json) printHuman(result, out, a.limit);
  return result.blocked > 0 || result.refusedAll ? EXIT.blocked : EXIT.ok;
}

function printHuman(r: CheckResult, out: Output, limit: number | undefined): void {
  const { c } = out;
  const blocked = r.files.filter((f) => f.decision === 'blocked');
  const rejected = r.files.filter((f) => f.decision === 'rejected');
  const approved = r.files.filter((f) => f.decision === 'approved');
  const allowed = r.files.length - blocked.length - rejected.length - approved.length;
  if (blocked.length === 0) {
    // Silent when everything was allowed: a hook that talks on every commit is noise.
    if (approved.length === 0 && rejected.length === 0) return;
    const parts = [`${allowed} allowed`];
    if (approved.length) parts.push(`${approved.length} approved`);
    if (rejected.length) parts.push(`${rejected.length} rejected and unstaged`);
    out.info(`guard: ${parts.join(', ')}`);
    const named = [...approved, ...rejected];
    const width = Math.max(...named.map((f) => displayName(f).length));
    for (const f of named) {
      const what =
        f.decision === 'rejected'
          ? 'rejected, unstaged'
          : f.taken
            ? `approved, ${f.taken.length} ${f.taken.length === 1 ? 'hunk' : 'hunks'} staged, the rest left in the work tree`
            : f.strategy === 'own'
              ? 'approved (your own change: no agent session wrote it)'
              : `approved (${f.strategy ?? 'replace'})`;
      out.info(`  ${displayName(f).padEnd(width)}  ${what}${f.ref ? `; kept as ${f.ref}` : ''}`);
    }
    if (r.checkpoint) out.info(`  undo: guard restore ${r.checkpoint} --staged`);
    if (r.refusedAll)
      out.important(
        c.red('guard: every staged change was refused: the commit is not made (it would be empty)'),
      );
    return;
  }
  const lines: string[] = [];
  lines.push(
    c.red(
      c.bold(
        `guard: blocked ${blocked.length} change${blocked.length === 1 ? '' : 's'} that need${blocked.length === 1 ? 's' : ''} a person`,
      ),
    ),
  );
  const shown = boundFiles(blocked, limit);
  for (const f of shown.files) {
    const name = displayName(f);
    lines.push('');
    lines.push(`  ${c.bold(name)}  ${c.yellow(f.status)}  ${metricsLine(f)}`);
    for (const reason of f.reasons) lines.push(`    - ${reason}`);
    lines.push(
      `    kept as ${c.cyan(f.ref!)}  (see it: ${r.base ? `git diff ${f.ref}^ ${f.ref}` : `git show ${f.ref}`})`,
    );
  }
  if (shown.truncatedReason)
    lines.push('', `  ... ${shown.truncatedReason}; guard check --json lists them`);
  lines.push('');
  lines.push('Nothing was changed: the index and the work tree are as they were.');
  if (r.auto) {
    lines.push(
      'To go on, a person decides: run the same `git commit` in a terminal to approve or reject each change,',
    );
    lines.push('or let the agent work in a lane and review it with `guard review NAME`.');
  } else {
    // a person was asked and stopped (q): they are at the terminal already
    const it = blocked.length === 1 ? 'it' : 'them';
    lines.push(
      `You stopped (q) before deciding ${it}: run the same \`git commit\` (or \`guard check\`) again to decide ${it}, or unstage ${it} (\`git restore --staged PATH\`).`,
    );
  }
  lines.push(
    c.dim(
      '`git commit --no-verify` skips this hook but not the branch gate, and `guard ci` on the pull request checks it again.',
    ),
  );
  out.important(lines.join('\n'));
}
