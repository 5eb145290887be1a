import { EXIT, GuardError } from '../core/errors.js';
import { init } from '../flows/setup/init.js';
import type { Output } from '../ui/output.js';
import type { InitArgs } from './spec.js';

export async function run(a: InitArgs, out: Output): Promise<number> {
  // `guard init --agent claude gemini` (or claude,gemini): the harnesses are the positionals
  if (a.harnesses.length > 0 && !a.agent) {
    throw new GuardError(
      'E_USAGE',
      `guard init takes no names without --agent (got ${a.harnesses.join(' ')})`,
      'guard init --agent claude gemini codex copilot qwen droid (docs/harnesses/README.md lists them all)',
    );
  }
  const r = await init({
    cwd: a.cwd,
    color: out.ttyColor,
    global: a.global === true,
    ...(a.agent ? { agents: a.harnesses.length ? a.harnesses : [''] } : {}),
  });
  out.result('init', r);
  for (const w of r.warnings) out.warn(w);
  out.info(
    r.changed.length
      ? r.changed.map((c) => `guard: ${c}`).join('\n')
      : 'guard: already installed, nothing to change',
  );
  return EXIT.ok;
}
