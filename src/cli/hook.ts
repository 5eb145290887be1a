import { fstatSync, read, writeSync } from 'node:fs';
import { EXIT, GuardError } from '../core/errors.js';
import { failReason } from '../harness/decide.js';
import { judgeEvent, reasonFor } from '../flows/hook/hook-call.js';
import { TRANSLATORS } from '../harness/index.js';
import { ROWS } from '../harness/table.js';
import { HARNESSES, isHarness, type HookAnswer, type Phase } from '../harness/types.js';
import { withBudget } from '../runtime/deadline.js';
import type { Output } from '../ui/output.js';
import type { HookArgs } from './spec.js';

/**
 * `guard hook HARNESS`: one payload on stdin, one answer on stdout in that
 * harness's protocol. Every failure (a payload guard cannot read, a bad
 * config, a git error, a bug, running out of time) is answered in the
 * harness's blocking form: every harness lets a tool run when a hook
 * crashes, so guard never exits in a way they read as "go ahead". (A
 * SIGKILL cannot be answered from inside: the command `guard init --agent`
 * installs turns any non-zero exit into a block, see flows/setup/agents.ts.)
 */

/** Harness timeouts are 30-120 s; guard answers well before them. */
const DEFAULT_BUDGET_S = 20;

export async function run(a: HookArgs, _out: Output): Promise<number> {
  const name = a.harness ?? '';
  if (!isHarness(name)) {
    throw new GuardError(
      'E_USAGE',
      name ? `unknown harness "${name}"` : 'guard hook needs the HARNESS',
      `one of: ${HARNESSES.join(', ')}`,
    );
  }
  const translator = TRANSLATORS[name];
  let phase: Phase = 'pre';
  // the event answered (Claude checks the answer names it: PostToolUse or PostToolUseFailure)
  let eventName: string | undefined;
  let answered = false;
  const emit = (a: HookAnswer): number => {
    if (answered) return EXIT.ok;
    answered = true;
    hookWrite(1, a.stdout);
    if (a.stderr) hookWrite(2, a.stderr);
    return a.exitCode;
  };
  const given = a.timeout;
  const budget =
    typeof given === 'number' ? given : Number(process.env.GUARD_HOOK_TIMEOUT) || DEFAULT_BUDGET_S;
  const timer = setTimeout(() => {
    process.exitCode = emit(
      translator.answer(
        {
          kind: 'deny',
          reason: failReason(
            `it ran out of time (${budget} s)`,
            'a very large file or a slow disk? GUARD_HOOK_TIMEOUT sets the budget',
          ),
        },
        phase,
        eventName,
      ),
    );
    // the answer is out; nothing half done stays (refs are written in one fast-import, or not at all)
    hookProcess.exit();
  }, budget * 1000);
  try {
    const text = await readStdin();
    // the timer above cannot fire while pure work runs: long loops check this budget themselves
    return await withBudget(budget, () => judgeText(text));
  } catch (err) {
    return emit(
      translator.answer({ kind: 'deny', reason: reasonFor(err, name) }, phase, eventName),
    );
  } finally {
    clearTimeout(timer);
  }

  async function judgeText(text: string): Promise<number> {
    const event = translator.translate(text, process.env);
    phase = event.phase;
    eventName = event.event;
    // which event this process answers, for main.js's code cache of the hook's build (which
    // functions it ran: scripts/bundle.mjs hookBuild)
    (globalThis as Record<symbol, unknown>)[Symbol.for('guard.hook.kind')] =
      `${event.phase}-${event.action.kind}`;
    const { isAutoMode } = await import('../ui/auto-mode.js');
    // the folder the harness runs the hook for: set by the harness, never by the agent (unlike cwd)
    const env = process.env;
    const rowVar = Object.hasOwn(ROWS, name)
      ? ROWS[name as keyof typeof ROWS].config.projectVar
      : null;
    const projectDir =
      (rowVar && env[rowVar]) ||
      env.CLAUDE_PROJECT_DIR ||
      env.GEMINI_PROJECT_DIR ||
      env.COPILOT_PROJECT_DIR ||
      process.cwd();
    const r = await judgeEvent(event, isAutoMode(undefined), projectDir);
    if (process.env.GUARD_DEBUG === '1') for (const n of r.notes) hookWrite(2, `guard: ${n}\n`);
    return emit(translator.answer(r.outcome, phase, eventName));
  }
}

/**
 * What the hook does once the budget's answer is out: end the process (exitOrKill). The resident
 * server (cli/resident-server.ts) runs the hook inside its own process and puts its own end here:
 * send that answer to the waiting client, then end itself the same way.
 */
export const hookProcess = { exit: exitOrKill };

/**
 * Set by main.ts, the entry of a guard process: its fds 0, 1 and 2 are the hook's own, read and
 * written without node's streams for them (~3-5 ms of CPU to build on Node 24, for one payload and
 * one line). Whoever runs the CLI inside a process of its own (the resident server, the tests'
 * in-process CLI) does not set it, and swaps process.stdin and process.stdout.write instead.
 */
const OWN_FDS = Symbol.for('guard.process.fds');
const ownFds = () => (globalThis as { [OWN_FDS]?: unknown })[OWN_FDS] === true;

function hookWrite(fd: 1 | 2, text: string): void {
  if (ownFds()) writeFd(fd, text);
  else (fd === 1 ? process.stdout : process.stderr).write(text);
}

/**
 * All of `text` to fd 1 or 2, as process.stdout and process.stderr write a pipe or a file on
 * Linux (synchronously, in order). A reader gone (EPIPE) loses the rest, as main.ts's stream
 * handler does.
 */
function writeFd(fd: 1 | 2, text: string): void {
  const data = Buffer.from(text, 'utf8');
  for (let at = 0; at < data.length;) {
    try {
      at += writeSync(fd, data, at);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw e;
      // a pipe left non-blocking by whoever made it: wait for room as a blocking write would
      Atomics.wait(PAUSE, 0, 0, 2);
    }
  }
}
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Exit after the budget's answer. A file read still pending then may never end (a FIFO planted
 * where guard reads, `mkfifo .git/guard/journal`): node cannot exit while a thread-pool read is
 * blocked, so the harness would wait for its own timeout, and all but Claude Code (onFailure)
 * then run the tool. Pending reads get a second to finish; after that guard kills itself: the
 * command `guard init --agent` installs turns that into the harness's block (exit 2).
 */
export function exitOrKill(): void {
  if (!pendingRead()) process.exit();
  setTimeout(() => (pendingRead() ? process.kill(process.pid, 'SIGKILL') : process.exit()), 1000);
}

/** A file read of this process still waiting (node cannot exit while a thread-pool read is blocked). */
export function pendingRead(): boolean {
  return process
    .getActiveResourcesInfo()
    .some((r) => r === 'FSReqCallback' || r === 'FSReqPromise');
}

/**
 * The payload a resident client already read from stdin (cli/hook-client.ts), when it runs the
 * hook itself because no server answered: stdin is then at its end.
 */
export const HANDED_STDIN = Symbol.for('guard.hook.stdin');

async function readStdin(): Promise<string> {
  const g = globalThis as { [HANDED_STDIN]?: unknown };
  const handed = g[HANDED_STDIN];
  if (typeof handed === 'string') {
    delete g[HANDED_STDIN];
    return handed;
  }
  if (!ownFds()) {
    if (process.stdin.isTTY) return '';
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  // a terminal (a person trying the command): nothing to read, as process.stdin.isTTY says
  if (fstatSync(0).isCharacterDevice() && (await import('node:tty')).isatty(0)) return '';
  // fd 0 read in node's thread pool, not through process.stdin (a stream for it costs ~3-5 ms of
  // CPU on Node 24): the budget's timer still runs while a harness keeps the pipe open, and a
  // read still pending then is what exitOrKill waits for, as for any file guard reads
  const chunks: Buffer[] = [];
  for (;;) {
    const buf = Buffer.allocUnsafe(1 << 16);
    const n = await readFd0(buf);
    if (n === 0) return Buffer.concat(chunks).toString('utf8');
    chunks.push(buf.subarray(0, n));
  }
}

function readFd0(buf: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const once = () =>
      read(0, buf, 0, buf.length, null, (err, n) => {
        // a pipe left non-blocking by whoever made it: wait for data as a blocking read would
        if (err?.code === 'EAGAIN') setTimeout(once, 2);
        else if (err) reject(err);
        else resolve(n);
      });
    once();
  });
}
