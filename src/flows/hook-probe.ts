import { lstatSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `guard doctor` does not read hook scripts to decide whether they gate: it
 * runs them. It sets GUARD_HOOK_PROBE to an empty file it made; `guard check`
 * and `guard verify-refs` then write their name into that file and block
 * (exit 1) without looking at anything. A hook is active only when guard ran
 * AND the hook exited non-zero: guard behind `|| true`, in the background,
 * after an early `exit 0`, echoed, in a heredoc or under `if false` fails
 * one or the other.
 *
 * The probe can only make guard block, never let anything through, so an
 * agent that sets the variable gains nothing. It writes only into an empty
 * regular file whose name says it is a probe, so it cannot be pointed at a
 * file that matters.
 */
export const PROBE_ENV = 'GUARD_HOOK_PROBE';
export const PROBE_PREFIX = 'guard-probe-';

/** True when this run is doctor's probe: the caller exits 1 at once. */
export function answerProbe(command: string): boolean {
  const file = process.env[PROBE_ENV];
  if (!file) return false;
  try {
    const st = lstatSync(file);
    if (st.isFile() && st.size === 0 && path.basename(file).startsWith(PROBE_PREFIX)) writeFileSync(file, `${command}\n`, { flag: 'a' });
  } catch {
    /* not doctor's file: block all the same */
  }
  return true;
}
