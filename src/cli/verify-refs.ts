import { EXIT } from '../core/errors.js';
import { metricsLine } from '../core/preview.js';
import { displayName, quotePath } from '../core/quote.js';
import { answerProbe } from '../flows/doctor/hook-probe.js';
import { gateMoves } from '../flows/gates/ref-gate.js';
import { isAutoMode } from '../ui/auto-mode.js';
import type { Output } from '../ui/output.js';
import type { VerifyRefsArgs } from './spec.js';

/**
 * `guard verify-refs`: called by the reference-transaction hook with the
 * ref updates on stdin. Exit 1 refuses the whole transaction.
 */
export async function run(a: VerifyRefsArgs, out: Output): Promise<number> {
  if (answerProbe('verify-refs')) return EXIT.blocked;
  const input = await readStdin();
  const result = await gateMoves({
    cwd: a.cwd,
    auto: isAutoMode(a.auto),
    color: out.ttyColor,
    input,
  });
  out.result('verify-refs', result);
  if (out.json) return result.refused > 0 ? EXIT.blocked : EXIT.ok;
  const { c } = out;
  for (const v of result.moves.filter((m) => m.refused)) {
    const lines = [
      c.red(
        c.bold(
          `guard: refused to move ${v.ref.replace(/^refs\/heads\//, '')} to ${v.to.slice(0, 10)}: it brings in changes that need a person`,
        ),
      ),
      v.reason
        ? `  ${v.reason}`
        : `  measured against ${v.base.slice(0, 10)} (the last tip that passed the gate, or where the new tip forks from it)`,
    ];
    for (const f of v.files.filter((x) => x.decision !== 'approved')) {
      lines.push(`  ${c.bold(displayName(f))}  ${f.status}  ${metricsLine(f)}  ${f.decision}`);
      for (const r of f.reasons) lines.push(`    - ${r}`);
    }
    if (v.rejectedRef)
      lines.push(
        `  kept as ${v.rejectedRef}  (see it: git diff ${v.rejectedRef}^ ${v.rejectedRef})`,
      );
    lines.push(
      'hint: run the same git command in a terminal so that guard can ask you, or let the agent work in a lane and use guard review; ' +
        'an amend or a squash is measured as a whole against the commit before it',
    );
    // git shows hook output on stderr; stdout of a hook is also passed to the user, stderr keeps it apart from --porcelain output
    process.stderr.write(lines.join('\n') + '\n');
  }
  for (const v of result.moves.filter((m) => m.dropped && !m.refused)) {
    const d = v.dropped!;
    const branch = v.ref.replace(/^refs\/heads\//, '');
    const lines = [
      (d.needsApproval ? c.yellow : (x: string) => x)(
        `guard: moving ${branch} from ${v.from.slice(0, 10)} to ${v.to.slice(0, 10)} drops committed work; the dropped tip is kept as ${d.ref}`,
      ),
    ];
    const shown = d.files.slice(0, 10);
    for (const f of shown)
      lines.push(
        `  ${displayName(f)}  ${f.status}  ${metricsLine(f)}${f.needsApproval ? '  (needs approval by the same rules as a commit)' : ''}`,
      );
    if (d.files.length > shown.length)
      lines.push(`  ... and ${d.files.length - shown.length} more (guard log)`);
    lines.push(
      `  see it: git log ${v.to.slice(0, 10)}..${d.ref}   bring it back: git reset --keep ${d.ref}`,
    );
    process.stderr.write(lines.join('\n') + '\n');
  }
  for (const d of result.deleted ?? []) {
    const branch = d.ref.replace(/^refs\/heads\//, '');
    process.stderr.write(
      `guard: branch ${quotePath(branch)} went away (deleted or renamed) and no other branch or tag holds ${d.tip.slice(0, 10)}; it is kept as ${d.kept}\n` +
        `  bring it back: git branch ${quotePath(branch).startsWith('"') ? 'NAME' : quotePath(branch)} ${d.kept}\n`,
    );
  }
  return result.refused > 0 ? EXIT.blocked : EXIT.ok;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
