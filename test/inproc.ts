import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  Worker,
} from 'node:worker_threads';
import { vi } from 'vitest';
import { cleanEnv, ROOT, type Run } from './helpers.js';

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

export function guardInProcess(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined>; input?: string | Buffer },
): Promise<Run> {
  const next = queue.then(() => once(args, opts));
  queue = next.catch(() => {});
  return next;
}

const WORK = /^(ProcessWrap|PipeWrap|FSReq|FileHandle|StatWatcher|FSEvent)/;
/** guard's own pending work: child processes, their pipes, file system requests. */
function pendingWork(): number {
  return process.getActiveResourcesInfo().filter((r) => WORK.test(r)).length;
}

async function once(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined>; input?: string | Buffer },
): Promise<Run> {
  const env = cleanEnv({ CI: 'true', ...opts.env });
  for (const k of Object.keys(env))
    if (k.startsWith('GUARD_FAULT'))
      throw new Error(
        'guardInProcess: GUARD_FAULT* kills the process; spawn the CLI for fault tests',
      );
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
      into.push(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk),
      );
      const done = typeof encoding === 'function' ? encoding : cb;
      if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
      return true;
    } as typeof process.stdout.write;
  const input = Readable.from(
    opts.input === undefined || opts.input === '' ? [] : [Buffer.from(opts.input)],
  );
  let code: number;
  try {
    process.env = env;
    process.chdir(opts.cwd);
    Object.defineProperty(process, 'stdin', { value: input, configurable: true, writable: true });
    process.stdout.write = capture(out);
    process.stderr.write = capture(err);
    vi.resetModules();
    const { runCli } =
      (await import('../src/cli/entry.js')) as typeof import('../src/cli/entry.js');
    code = await runCli(args);
    // a process exits when its work is done: wait for what the command left running
    for (let i = 0; i < 500 && pendingWork() > baseline; i++)
      await new Promise((r) => setTimeout(r, 2));
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    if (saved.stdin) Object.defineProperty(process, 'stdin', saved.stdin);
    process.chdir(saved.cwd);
    process.env = saved.env;
    process.exitCode = saved.exitCode;
  }
  return {
    code,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  };
}

/**
 * The CLI in process, synchronously: what TestRepo.guard uses (a drop-in for
 * spawnSync of the built CLI). runCli (dist/cli/entry.js, the built src/)
 * runs in a worker thread of this test process, loaded once per test file;
 * this thread sets the cwd, hands over args, env and stdin, and blocks until
 * the answer (Atomics.wait). Each call empties the module state that would
 * outlive a command (test/inproc-worker.mjs; the inventory is in
 * docs/development.md), waits for the git processes it started, and leaves
 * this thread's env and cwd as they were.
 *
 * A node process costs ~55 ms of CPU to start and ~45 ms to load guard,
 * before any git: here that is paid once per file instead of once per call.
 */
let worker: { w: Worker; flag: Int32Array; port: MessagePort; next: number } | undefined;

function startWorker() {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const w = new Worker(new URL('./inproc-worker.mjs', import.meta.url), {
    workerData: {
      dist: pathToFileURL(path.join(ROOT, 'dist')).href,
      flag: flag.buffer,
      port: port2,
    },
    transferList: [port2],
    stdout: false,
    stderr: false,
  });
  w.unref();
  port1.unref();
  const ready = wait(flag, port1, 0, 30_000);
  if (!ready.ready) throw new Error(`the in-process CLI did not start: ${ready.error}`);
  return { w, flag, port: port1, next: 1 };
}

function wait(flag: Int32Array, port: MessagePort, id: number, ms: number): Record<string, any> {
  const until = Date.now() + ms;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0 || Atomics.wait(flag, 0, 0, left) === 'timed-out')
      throw new Error(`the in-process CLI gave no answer in ${ms / 1000} s`);
    Atomics.store(flag, 0, 0);
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port))
      if (m.message.id === id) return m.message;
  }
}

/**
 * guardSync without blocking this thread: for tests whose command talks to a
 * server in this test process (guard ci and a fake GitHub or GitLab API).
 * This thread's cwd is the command's until it answers (nothing else in those
 * tests reads it); calls are queued, never two at once.
 */
export function guardAsync(args: string[], opts: CallOptions): Promise<Run> {
  const next = asyncQueue.then(() => asyncOnce(args, opts));
  asyncQueue = next.catch(() => {});
  return next;
}
let asyncQueue: Promise<unknown> = Promise.resolve();
// node 16+; not in this TypeScript lib (es2024)
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      a: Int32Array,
      i: number,
      v: number,
      ms: number,
    ): { async: boolean; value: string | Promise<string> };
  }
).waitAsync;

type CallOptions = {
  cwd: string;
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
};

/** The message for the worker: the env as a spawned CLI would get it; a fault kill is refused here. */
function messageOf(name: string, args: string[], opts: CallOptions) {
  const env = cleanEnv({ CI: 'true', ...opts.env });
  for (const k of Object.keys(env))
    if (k.startsWith('GUARD_FAULT'))
      throw new Error(`${name}: GUARD_FAULT* kills the process; spawn the CLI for fault tests`);
  return { args, env, input: opts.input === undefined ? undefined : Buffer.from(opts.input) };
}

/** Post a call to the worker (started on first use); this thread's cwd must be the call's already. */
function post(message: ReturnType<typeof messageOf>) {
  worker ??= startWorker();
  const w = worker;
  const id = w.next++;
  Atomics.store(w.flag, 0, 0);
  w.w.postMessage({ id, ...message });
  return { w, id };
}

/** A worker that failed or gave no answer is not used again. */
function dropWorker(): void {
  void worker?.w.terminate();
  worker = undefined;
}

function runOf(r: Record<string, any>): Run {
  if (r.error !== undefined) {
    dropWorker();
    throw new Error(r.error);
  }
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

async function asyncOnce(args: string[], opts: CallOptions): Promise<Run> {
  const message = messageOf('guardAsync', args, opts);
  const saved = process.cwd();
  process.chdir(opts.cwd);
  let r: Record<string, any> | undefined;
  try {
    const { w, id } = post(message);
    const until = Date.now() + 120_000;
    while (r === undefined) {
      const left = until - Date.now();
      const waited =
        left > 0 ? waitAsync(w.flag, 0, 0, left) : { async: false, value: 'timed-out' };
      if ((waited.async ? await waited.value : waited.value) === 'timed-out')
        throw new Error('the in-process CLI gave no answer in 120 s');
      Atomics.store(w.flag, 0, 0);
      for (let m = receiveMessageOnPort(w.port); m; m = receiveMessageOnPort(w.port))
        if (m.message.id === id) r = m.message;
    }
  } catch (e) {
    dropWorker();
    throw e;
  } finally {
    process.chdir(saved);
  }
  return runOf(r);
}

export function guardSync(args: string[], opts: CallOptions): Run {
  const message = messageOf('guardSync', args, opts);
  const saved = process.cwd();
  process.chdir(opts.cwd);
  let r: Record<string, any>;
  try {
    const { w, id } = post(message);
    r = wait(w.flag, w.port, id, 120_000);
  } catch (e) {
    dropWorker();
    throw e;
  } finally {
    process.chdir(saved);
  }
  return runOf(r);
}
