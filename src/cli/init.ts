import { EXIT } from '../core/errors.js';
import { init } from '../flows/init.js';
import type { Output } from '../ui/output.js';
import { resolveCwd, type GlobalArgs } from './main.js';

export async function run(argv: GlobalArgs, out: Output): Promise<number> {
  const agents = [...((argv.agent as string[] | undefined) ?? []), ...((argv['--'] as unknown[] | undefined) ?? []).map(String)];
  const r = await init({
    cwd: resolveCwd(argv),
    color: out.ttyColor,
    global: argv.global === true,
    ...(argv.agent !== undefined ? { agents: agents.length ? agents : [''] } : {}),
  });
  out.result('init', r);
  for (const w of r.warnings) out.warn(w);
  out.info(r.changed.length ? r.changed.map((c) => `guard: ${c}`).join('\n') : 'guard: already installed, nothing to change');
  return EXIT.ok;
}
