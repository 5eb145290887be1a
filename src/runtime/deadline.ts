import { AsyncLocalStorage } from 'node:async_hooks';
import { GuardError } from '../core/errors.js';
import { faultPoint } from './faults.js';

/**
 * `--timeout`: a deadline for the reading part of a command. The CLI makes
 * one and hands it to the flow (FlowOptions.deadline); the flow checks it
 * between steps and passes the point of no return through it, which checks
 * it a last time and disarms it: from there on guard finishes what it
 * writes, so a timeout never reports "nothing was written" after something
 * was. A flow that asks a person disarms it too: it bounds guard's work,
 * not a person's thinking.
 *
 * Git processes started while the command runs inside `within` are killed
 * when an armed deadline passes (E_TIMEOUT), except those that write
 * (git/run.ts WRITES).
 */
export interface Deadline {
  /** Aborted (with the E_TIMEOUT error) when the deadline passes while armed. */
  readonly signal: AbortSignal;
  /** Throw E_TIMEOUT if the deadline has passed and is still armed. */
  check(): void;
  /** Never fire from now on. */
  disarm(): void;
  /** The last check before guard writes, then disarm. */
  pointOfNoReturn(): void;
  /** Run a command with this deadline watching the git processes it starts. */
  within<T>(fn: () => Promise<T>): Promise<T>;
}

export function timeoutError(): GuardError {
  return new GuardError(
    'E_TIMEOUT',
    'guard ran out of time (--timeout) and stopped before it changed anything',
    'give it more time, or look at the largest files in the change',
  );
}

const running = new AsyncLocalStorage<Deadline>();

export function makeDeadline(seconds: number): Deadline {
  const controller = new AbortController();
  const at = Date.now() + seconds * 1000;
  let armed = true;
  // unref: a pending deadline never keeps guard alive once its work is done
  const timer = setTimeout(() => controller.abort(timeoutError()), seconds * 1000).unref();
  const deadline: Deadline = {
    signal: controller.signal,
    check() {
      // the clock, not only the timer: a busy event loop may not have run it yet
      if (armed && (controller.signal.aborted || Date.now() > at)) throw timeoutError();
    },
    disarm() {
      armed = false;
      clearTimeout(timer);
    },
    pointOfNoReturn() {
      faultPoint('point-of-no-return');
      deadline.check();
      deadline.disarm();
    },
    within: (fn) => running.run(deadline, fn),
  };
  return deadline;
}

/** Check the deadline of the running command, if it has one (between files of a long read). */
export function checkDeadline(): void {
  running.getStore()?.check();
}

/**
 * Kill `child` when the running command's deadline passes; returns a
 * function that stops watching. Nothing to watch without an armed deadline.
 */
export function watchDeadline(
  child: { kill(signal?: NodeJS.Signals): boolean },
  onTimeout: () => void,
): () => void {
  const d = running.getStore();
  if (!d) return () => {};
  const fire = () => {
    try {
      d.check();
    } catch {
      child.kill('SIGKILL');
      onTimeout();
    }
  };
  if (d.signal.aborted) {
    fire();
    return () => {};
  }
  d.signal.addEventListener('abort', fire, { once: true });
  return () => d.signal.removeEventListener('abort', fire);
}

/**
 * A budget for pure work on the main thread. Matching an edit to a file or
 * seeking a patch's lines is synchronous: while such a loop runs, no timer
 * fires, so the hook's "ran out of time" answer would wait for the loop and
 * the harness would time the hook out first (Claude Code then runs the tool
 * unless the hook says `onFailure: "block"`). Long loops call checkBudget,
 * which throws E_TIMEOUT once the budget of the call they run in has passed.
 */
const budgets = new Map<symbol, { at: number; seconds: number }>();

/**
 * Run `fn` with a budget of `seconds` for its pure loops. Not an AsyncLocalStorage: on node 20
 * its run() turns on promise hooks for the rest of the call, which cost the hook about 20 ms of
 * CPU. Calls that overlap (the in-process plugin) share the latest deadline of those running:
 * a loop is then stopped no later than the last of them, and each call's own timer still answers
 * at its own.
 */
export function withBudget<T>(seconds: number, fn: () => T): T {
  const key = Symbol('budget');
  budgets.set(key, { at: Date.now() + seconds * 1000, seconds });
  let r: T;
  try {
    r = fn();
  } catch (err) {
    budgets.delete(key);
    throw err;
  }
  if (r instanceof Promise) return r.finally(() => budgets.delete(key)) as T;
  budgets.delete(key);
  return r;
}

/** Throw E_TIMEOUT when the budget of the running calls (withBudget) has passed; nothing without one. */
export function checkBudget(): void {
  if (budgets.size === 0) return;
  let b: { at: number; seconds: number } | undefined;
  for (const x of budgets.values()) if (!b || x.at > b.at) b = x;
  if (Date.now() > b!.at) {
    throw new GuardError(
      'E_TIMEOUT',
      `guard ran out of time (${b!.seconds} s) matching the call's edits to the files`,
      'a very large file or patch? GUARD_HOOK_TIMEOUT sets the budget',
    );
  }
}

/** When the budget of the running calls (withBudget) ends, in ms since the epoch (the latest of them); null without one. */
export function budgetEnd(): number | null {
  let at: number | null = null;
  for (const x of budgets.values()) if (at === null || x.at > at) at = x.at;
  return at;
}
