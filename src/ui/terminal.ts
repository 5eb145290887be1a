import { openSync, closeSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import { createInterface, type Interface } from 'node:readline';
export { isAutoMode } from './auto-mode.js';

/**
 * The person at the keyboard, if there is one. Git hooks run with stdin
 * redirected, so like git itself we talk to /dev/tty, not to stdin.
 */
export interface Terminal {
  write(text: string): void;
  /** One answer line, trimmed; null when the terminal closed (Ctrl-D). */
  ask(question: string): Promise<string | null>;
  color: boolean;
  close(): void;
}


/** Open the controlling terminal; null when there is none (agents, CI, cron). */
export function openTerminal(color: boolean): Terminal | null {
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'r+');
  } catch {
    return null;
  }
  let input: ReadStream;
  let output: WriteStream;
  try {
    input = new ReadStream(fd);
    output = new WriteStream(fd);
  } catch {
    closeSync(fd);
    return null;
  }
  let rl: Interface | null = null;
  let closed = false;
  const lines: string[] = [];
  const waiters: Array<(l: string | null) => void> = [];
  const getRl = () => {
    if (rl) return rl;
    rl = createInterface({ input, output, terminal: true });
    rl.on('line', (l) => {
      const w = waiters.shift();
      if (w) w(l);
      else lines.push(l);
    });
    rl.on('close', () => {
      closed = true;
      for (const w of waiters.splice(0)) w(null);
    });
    return rl;
  };
  return {
    color,
    write: (text) => output.write(text),
    ask(question) {
      const r = getRl();
      output.write(question);
      const queued = lines.shift();
      if (queued !== undefined) return Promise.resolve(queued.trim());
      if (closed) return Promise.resolve(null);
      r.resume();
      return new Promise((resolve) => waiters.push((l) => resolve(l === null ? null : l.trim()))).then((l) => {
        r.pause();
        return l as string | null;
      });
    },
    close() {
      rl?.close();
      input.destroy();
      output.destroy();
    },
  };
}
