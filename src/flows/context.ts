import path from 'node:path';
import { CONFIG_FILE, parseConfig, type Config } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { makeDeadline, type Deadline } from '../runtime/deadline.js';

/** Options every flow gets from the CLI. */
export interface FlowOptions {
  cwd: string;
  /** Colour for text guard writes to the terminal (prompts, previews). */
  color: boolean;
  now?: Date;
  /** --timeout: checked while guard reads, disarmed at the point of no return (runtime/deadline.ts). */
  deadline?: Deadline;
}

/** The lane a work tree is, from its place under .guard/lanes/; null for the main tree. */
export function laneOf(root: string): string | null {
  const m = /[\\/]\.guard[\\/]lanes[\\/]([^\\/]+)$/.exec(root);
  return m ? m[1]! : null;
}

/** A staged or proposed config must be valid before it can become the policy. */
export function checkProposedConfig(text: string | undefined, where: string): void {
  if (text === undefined) return;
  try {
    parseConfig(text, `${CONFIG_FILE} (${where})`);
  } catch (err) {
    if (!(err instanceof GuardError)) throw err;
    throw new GuardError(
      err.code,
      err.message,
      `fix ${CONFIG_FILE} before committing it: once committed it is the policy`,
    );
  }
}

export function shortOid(oid: string | null | undefined): string {
  return oid ? oid.slice(0, 10) : '(none)';
}

export function relativeTo(root: string, p: string): string {
  return path.relative(root, p) || '.';
}

/**
 * Run a flow under --timeout SECONDS (none: no deadline). The flow gets the
 * deadline in its options and hands it to flows/apply, which passes the point
 * of no return (and disarms it) before anything is written.
 */
export function withTimeout<T>(
  seconds: number | undefined,
  flow: (deadline: Deadline | undefined) => Promise<T>,
): Promise<T> {
  if (seconds === undefined) return flow(undefined);
  const deadline = makeDeadline(seconds);
  return deadline.within(() => flow(deadline));
}
