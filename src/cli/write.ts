import { EXIT, GuardError } from '../core/errors.js';
import { metricsLine } from '../core/preview.js';
import { displayName, shellQuote } from '../core/quote.js';
import { write, type WriteResult } from '../flows/gates/write.js';
import { isAutoMode } from '../ui/auto-mode.js';
import type { Output } from '../ui/output.js';
import type { WriteArgs } from './spec.js';

export async function run(a: WriteArgs, out: Output): Promise<number> {
  // the path as a positional, or after `--` (a name that starts with "-")
  const names = [...(a.path !== undefined ? [a.path] : []), ...a.rest];
  if (names.length !== 1) {
    throw new GuardError(
      'E_USAGE',
      names.length === 0 ? 'guard write needs the PATH to write' : 'guard write takes one PATH',
      'guard write PATH < new-content',
    );
  }
  const file = names[0]!;
  if (process.stdin.isTTY) {
    throw new GuardError(
      'E_USAGE',
      'guard write reads the new content from stdin',
      `pipe it in: some-command | guard write ${file || 'PATH'}`,
    );
  }
  const content = await readStdin();
  const result = await write({
    cwd: a.cwd,
    path: file,
    content,
    auto: isAutoMode(a.auto),
    color: out.ttyColor,
    ...(a.session !== undefined ? { session: a.session } : {}),
  });
  out.result('write', result);
  for (const w of result.warnings) out.warn(w);
  if (!out.json) printHuman(result, out);
  return result.blocked > 0 || result.rejected > 0 ? EXIT.blocked : EXIT.ok;
}

/** All of stdin as bytes: binary content must survive untouched. */
async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function printHuman(r: WriteResult, out: Output): void {
  const { c } = out;
  const f = r.files[0]!;
  if (f.written) {
    const how =
      f.decision !== 'approved'
        ? ''
        : f.taken
          ? `, approved: ${f.taken.length} ${f.taken.length === 1 ? 'hunk' : 'hunks'} taken`
          : `, approved (${f.strategy ?? 'replace'})`;
    out.info(`guard: wrote ${displayName(f)} (${f.status}, ${metricsLine(f)}${how})`);
    out.info(`  undo: guard restore ${r.checkpoint} -- ${shellQuote(f.path)}`);
    return;
  }
  if (f.unchanged) {
    out.info(`guard: ${displayName(f)} already holds this content; nothing written`);
    return;
  }
  const lines: string[] = [];
  const verb = f.decision === 'rejected' ? 'rejected' : 'blocked';
  lines.push(c.red(c.bold(`guard: ${verb} the write to ${displayName(f)}`)));
  lines.push(`  ${c.yellow(f.status)}  ${metricsLine(f)}`);
  for (const reason of f.reasons) lines.push(`    - ${reason}`);
  lines.push(
    `  kept as ${c.cyan(f.ref!)}  (see it: ${r.base ? `git diff ${f.ref}^ ${f.ref}` : `git show ${f.ref}`})`,
  );
  lines.push(
    `The file was not changed.${f.decision === 'blocked' ? ' A person can approve the write by running the same command at a terminal.' : ''}`,
  );
  out.important(lines.join('\n'));
}
