import { EXIT } from '../core/errors.js';
import { doctor, type DoctorCheck, type DoctorResult } from '../flows/doctor/doctor.js';
import type { Output } from '../ui/output.js';
import type { DoctorArgs } from './spec.js';

/** Exit 1 when the gate would not run; the command itself worked either way (ok: true). */
export async function run(a: DoctorArgs, out: Output): Promise<number> {
  const r = await doctor({ cwd: a.cwd, color: out.ttyColor });
  out.result('doctor', { active: r.active, root: r.root, checks: r.checks, refs: r.refs });
  if (!out.json) printHuman(r, out);
  return r.active ? EXIT.ok : EXIT.blocked;
}

function mark(check: DoctorCheck, out: Output): string {
  const { c } = out;
  if (check.ok) return c.green('ok  ');
  return check.severity === 'error' ? c.red(c.bold('FAIL')) : c.yellow('warn');
}

function printHuman(r: DoctorResult, out: Output): void {
  const { c } = out;
  for (const check of r.checks) {
    const text = `${mark(check, out)}  ${check.message}${check.hint ? `\n      ${c.dim(`hint: ${check.hint}`)}` : ''}`;
    // --quiet keeps what needs doing
    if (check.ok) out.info(text);
    else out.important(text);
  }
  const errors = r.checks.filter((x) => x.severity === 'error');
  const warnings = r.checks.filter((x) => !x.ok && x.severity === 'warning').length;
  const notes = warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : '';
  out.important(
    r.active
      ? c.green(`guard: the gate is active${notes}`)
      : c.red(c.bold(`guard: the gate would NOT run: ${errors.map((e) => e.message).join('; ')}`)),
  );
}
