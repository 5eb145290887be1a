/**
 * Named fault points, compiled in, so tests can prove what DESIGN.md's
 * safety rules promise when guard dies half way (see
 * docs/reliability/faults.md for the list of points and what each test
 * asserts after it).
 *
 *   GUARD_FAULT=write:before-rename        SIGKILL guard the first time it gets there
 *   GUARD_FAULT=review:between-files@2     ... the 2nd time (1-based)
 *   GUARD_FAULT_PAUSE=review:after-lock    sleep there (GUARD_FAULT_PAUSE_MS, default 500)
 *
 * A SIGKILL, not an exception or process.exit: nothing in guard gets to run
 * a finally block, exactly as when the machine loses power or an agent's
 * harness kills the process group. The pause blocks the event loop
 * synchronously, so no other work of this process advances while a test
 * acts (starts a second guard, kills this one).
 *
 * With neither variable set, a fault point costs one comparison.
 */

const FAULT = process.env.GUARD_FAULT || null;
const PAUSE = process.env.GUARD_FAULT_PAUSE || null;
const PAUSE_MS = Number(process.env.GUARD_FAULT_PAUSE_MS) || 500;
const armed = FAULT !== null || PAUSE !== null;

const [faultName, faultNth] = parse(FAULT);
const reached = new Map<string, number>();

function parse(spec: string | null): [string | null, number] {
  if (spec === null) return [null, 0];
  const at = spec.lastIndexOf('@');
  const n = at > 0 ? Number(spec.slice(at + 1)) : NaN;
  return Number.isInteger(n) && n > 0 ? [spec.slice(0, at), n] : [spec, 1];
}

export function faultPoint(name: string): void {
  if (!armed) return;
  if (name === PAUSE) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, PAUSE_MS);
  if (name !== faultName) return;
  const n = (reached.get(name) ?? 0) + 1;
  reached.set(name, n);
  if (n === faultNth) process.kill(process.pid, 'SIGKILL');
}
