import { spawn, spawnSync } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import { createInterface, type Interface } from 'node:readline';
import { GuardError } from '../core/errors.js';
import { agentAncestor } from '../runtime/agent-ancestry.js';
import { inAgentShell } from './auto-mode.js';
export { isAutoMode } from './auto-mode.js';

/**
 * The person at the keyboard, if there is one. Git hooks run with stdin
 * redirected, so like git itself we talk to /dev/tty, not to stdin.
 */
export interface Terminal {
  write(text: string): void;
  /**
   * One answer line, trimmed; null when the terminal closed (Ctrl-D).
   * Ctrl-C throws `aborted()`: the whole command stops, nothing changed.
   */
  ask(question: string): Promise<string | null>;
  /** Show `text` through the pager command (run by sh, as git runs core.pager); wait for it to end. */
  page(text: string, command: string): Promise<void>;
  /**
   * Open `file` in the editor command (run by sh with the file as "$@", as
   * git runs core.editor) on this terminal; wait for it. False when it could
   * not run or exited non-zero.
   */
  edit(file: string, command: string): Promise<boolean>;
  color: boolean;
  /** Rows of the terminal (24 when unknown). */
  rows: number;
  close(): void;
}

/** Ctrl-C at a prompt: the command stops and changes nothing (exit 1). */
export function aborted(): GuardError {
  return new GuardError(
    'E_ABORTED',
    'stopped at the prompt (Ctrl-C): nothing was changed and no decision was recorded',
    'run the command again to decide',
  );
}

const ABORT = Symbol('abort');

/** Open the controlling terminal; null when there is none (agents, CI, cron), or when it is an agent's. */
export function openTerminal(color: boolean): Terminal | null {
  // (a terminal in an agent's shell is one the agent made: ui/auto-mode.ts inAgentShell; read from
  // the processes above too, as the agent unsets the variable: `env -u CLAUDECODE script -qc 'git
  // commit'` with `y` piped in approved its own rewrite, holes6)
  if (inAgentShell() || agentAncestor()) return null;
  const tty = openTty();
  if (!tty) return null;
  const { fd, input, output } = tty;
  const reader = lineReader(input, output);
  return {
    color,
    rows: output.rows > 0 ? output.rows : 24,
    write: (text) => output.write(text),
    ask: (question) => reader.ask(question),
    async page(text, command) {
      // The pager reads its keys from the terminal itself: give it a cooked terminal.
      const restore = cook(input);
      try {
        await runPager(fd, text, command);
      } finally {
        restore();
      }
    },
    async edit(file, command) {
      // The editor owns the terminal while it runs: give it a cooked one, as for the pager.
      const restore = cook(input);
      try {
        return runEditor(fd, file, command);
      } finally {
        restore();
      }
    },
    close() {
      reader.close();
      input.destroy();
      output.destroy();
    },
  };
}

interface Tty {
  fd: number;
  input: ReadStream;
  output: WriteStream;
}

/** /dev/tty as a stream each way; null when there is no controlling terminal. */
function openTty(): Tty | null {
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'r+');
  } catch {
    return null;
  }
  try {
    return { fd, input: new ReadStream(fd), output: new WriteStream(fd) };
  } catch {
    closeSync(fd);
    return null;
  }
}

/**
 * Answer lines read from the terminal, one per question. readline is made
 * when first asked; lines typed ahead are queued; Ctrl-C (raw mode: no
 * signal) aborts every waiting question and each later one.
 */
function lineReader(
  input: ReadStream,
  output: WriteStream,
): { ask(question: string): Promise<string | null>; close(): void } {
  let rl: Interface | null = null;
  let closed = false;
  let interrupted = false;
  const lines: string[] = [];
  const waiters: Array<(l: string | null | typeof ABORT) => void> = [];
  const getRl = () => {
    if (rl) return rl;
    rl = createInterface({ input, output, terminal: true });
    rl.on('line', (l) => {
      const w = waiters.shift();
      if (w) w(l);
      else lines.push(l);
    });
    // The terminal is in raw mode: Ctrl-C arrives here, not as a signal.
    rl.on('SIGINT', () => {
      interrupted = true;
      output.write('^C\n');
      for (const w of waiters.splice(0)) w(ABORT);
    });
    rl.on('close', () => {
      closed = true;
      for (const w of waiters.splice(0)) w(null);
    });
    return rl;
  };
  return {
    async ask(question) {
      const r = getRl();
      if (interrupted) throw aborted();
      output.write(question);
      const queued = lines.shift();
      if (queued !== undefined) return queued.trim();
      if (closed) return null;
      r.resume();
      const l = await new Promise<string | null | typeof ABORT>((resolve) => waiters.push(resolve));
      r.pause();
      if (l === ABORT) throw aborted();
      return l === null ? null : l.trim();
    },
    close: () => rl?.close(),
  };
}

/** Leave raw mode while a child owns the terminal; returns what puts it back. */
function cook(input: ReadStream): () => void {
  const raw = input.isRaw;
  if (raw) input.setRawMode(false);
  return () => {
    if (raw) input.setRawMode(true);
  };
}

/** The pager command, run by sh as git runs core.pager, with `text` on its stdin; resolves when it ends. */
function runPager(fd: number, text: string, command: string): Promise<void> {
  return new Promise<void>((resolve) => {
    // As git does: LESS=FRX (quit if one screen, keep colours, no clearing) unless the user set LESS.
    const env = { ...process.env, LESS: process.env.LESS ?? 'FRX', LV: process.env.LV ?? '-c' };
    const child = spawn('sh', ['-c', command], { stdio: ['pipe', fd, fd], env });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
    child.stdin?.on('error', () => {}); // the pager may quit before reading everything
    child.stdin?.end(text);
  });
}

/**
 * The editor on `file`, run by sh as git runs core.editor. Synchronously:
 * while the event loop waits, node reads nothing from the terminal, so every
 * key goes to the editor (a paused stream still reads the tty, and would take
 * the person's keys).
 */
function runEditor(fd: number, file: string, command: string): boolean {
  const r = spawnSync('sh', ['-c', `${command} "$@"`, command, file], { stdio: [fd, fd, fd] });
  return r.error === undefined && r.status === 0;
}
