import * as pty from 'node-pty';
import { CLI, cleanEnv } from './helpers.js';

/**
 * Drive the real CLI through a pseudo-terminal, as a person would: wait for
 * a prompt, type an answer. The child env is set explicitly: CI=true in the
 * test runner's own env would otherwise put guard in auto mode.
 */
export interface Session {
  output(): string;
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  type(text: string): void;
  exit: Promise<number>;
}

export function spawnGuard(
  args: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
): Session {
  const childEnv = cleanEnv({
    CI: undefined,
    GUARD_AUTO: undefined,
    TERM: 'xterm',
    NO_COLOR: '1',
    ...env,
  });
  const p = pty.spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: childEnv as Record<string, string>,
    cols: 120,
    rows: 40,
    name: 'xterm',
  });
  let buf = '';
  let seen = 0;
  const listeners = new Set<() => void>();
  p.onData((d) => {
    buf += d;
    for (const l of listeners) l();
  });
  const exit = new Promise<number>((resolve) => p.onExit(({ exitCode }) => resolve(exitCode)));
  return {
    output: () => buf,
    exit,
    type: (text) => p.write(text),
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const rest = buf.slice(seen);
          const m =
            typeof pattern === 'string'
              ? rest.includes(pattern)
                ? pattern
                : null
              : pattern.exec(rest)?.[0];
          if (m) {
            seen = buf.length;
            listeners.delete(check);
            clearTimeout(timer);
            resolve(rest);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${buf}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}
