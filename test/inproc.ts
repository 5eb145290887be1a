import { Readable } from 'node:stream';
import { vi } from 'vitest';
import { cleanEnv, type Run } from './helpers.js';

/**
 * The CLI run in this test process instead of a `node dist/cli/main.js`
 * child: the same `runCli(argv)` main.ts calls (src/cli/entry.ts), with the
 * process around it swapped for the call and put back after it:
 *
 * - env: process.env is replaced by cleanEnv({ CI: 'true', ...env }) (auto
 *   mode unless env says otherwise), as TestRepo.guard gives a child;
 * - cwd: process.chdir (the forks pool: each test file is its own process);
 * - stdin: `input` as a non-terminal stream; stdout and stderr are captured;
 * - the exit code is what runCli returns; process.exitCode is put back.
 *
 * No state leaks from one call to the next: the module graph under src/ is
 * loaded afresh for every call (vi.resetModules), so module-level caches
 * (the hook's session events, the atomic writer's cleaned folders) start
 * empty as in a new process, and the call waits until the git processes and
 * file operations it started are done, as a process exits only then.
 * Calls are queued: two never overlap.
 *
 * Not for what needs a process: exit codes of signals, GUARD_FAULT (the
 * fault points SIGKILL the process), a terminal, concurrency between
 * guards, the compile cache or the bundle. Those tests spawn the CLI
 * (TestRepo.guard); each command keeps at least one spawned test.
 */

let queue: Promise<unknown> = Promise.resolve();

export function guardInProcess(args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; input?: string | Buffer }): Promise<Run> {
  const next = queue.then(() => once(args, opts));
  queue = next.catch(() => {});
  return next;
}

const WORK = /^(ProcessWrap|PipeWrap|FSReq|FileHandle|StatWatcher|FSEvent)/;
/** guard's own pending work: child processes, their pipes, file system requests. */
function pendingWork(): number {
  return process.getActiveResourcesInfo().filter((r) => WORK.test(r)).length;
}

async function once(args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; input?: string | Buffer }): Promise<Run> {
  const env = cleanEnv({ CI: 'true', ...opts.env });
  for (const k of Object.keys(env)) if (k.startsWith('GUARD_FAULT')) throw new Error('guardInProcess: GUARD_FAULT* kills the process; spawn the CLI for fault tests');
  const saved = {
    env: process.env,
    cwd: process.cwd(),
    exitCode: process.exitCode,
    out: process.stdout.write,
    err: process.stderr.write,
    stdin: Object.getOwnPropertyDescriptor(process, 'stdin'),
  };
  const baseline = pendingWork();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const capture = (into: Buffer[]) =>
    function write(chunk: string | Uint8Array, encoding?: unknown, cb?: unknown): boolean {
      into.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk));
      const done = typeof encoding === 'function' ? encoding : cb;
      if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
      return true;
    } as typeof process.stdout.write;
  const input = Readable.from(opts.input === undefined || opts.input === '' ? [] : [Buffer.from(opts.input)]);
  let code: number;
  try {
    process.env = env;
    process.chdir(opts.cwd);
    Object.defineProperty(process, 'stdin', { value: input, configurable: true, writable: true });
    process.stdout.write = capture(out);
    process.stderr.write = capture(err);
    vi.resetModules();
    const { runCli } = (await import('../src/cli/entry.js')) as typeof import('../src/cli/entry.js');
    code = await runCli(args);
    // a process exits when its work is done: wait for what the command left running
    for (let i = 0; i < 500 && pendingWork() > baseline; i++) await new Promise((r) => setTimeout(r, 2));
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    if (saved.stdin) Object.defineProperty(process, 'stdin', saved.stdin);
    process.chdir(saved.cwd);
    process.env = saved.env;
    process.exitCode = saved.exitCode;
  }
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
