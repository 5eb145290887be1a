import { EXIT } from '../core/errors.js';
import { init } from '../flows/init.js';
import type { Output } from '../ui/output.js';
import type { InitArgs } from './spec.js';

export async function run(a: InitArgs, out: Output): Promise<number> {
  const r = await init({ cwd: a.cwd, color: out.ttyColor });
  out.result('init', r);
  for (const w of r.warnings) out.warn(w);
  out.info(r.changed.length ? r.changed.map((c) => `guard: ${c}`).join('\n') : 'guard: already installed, nothing to change');
  return EXIT.ok;
}
