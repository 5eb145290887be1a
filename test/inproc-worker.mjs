// The worker thread behind test/inproc.ts's guardSync: dist/cli/entry.js's runCli,
// loaded once, run once per request with the request's env, stdin, stdout and
// stderr. The test process's main thread sets the cwd (process.chdir is not
// allowed in a worker; cwd is shared by the threads) and blocks until the answer.
// Plain JS: it runs outside vitest, on the built dist/.
import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';

const { dist, flag: flagBuffer, port } = workerData;
const flag = new Int32Array(flagBuffer);
const { runCli } = await import(`${dist}/cli/entry.js`);
// Module state that outlives a command (the inventory is in docs/development.md):
// emptied before each call, so each command starts as in a new process.
const { eventsRead } = await import(`${dist}/flows/hook/hook-common.js`);
const { cleaned } = await import(`${dist}/worktree/atomic.js`);

// and its requests to a server (guard ci): a request still in flight when a command
// answers (one of several failed first) would otherwise reach the test's server later
const WORK = /^(ProcessWrap|PipeWrap|FSReq|FileHandle|StatWatcher|FSEvent|TCP|GetAddrInfo)/;
const pendingWork = () => process.getActiveResourcesInfo().filter((r) => WORK.test(r)).length;

let current = 0;
function answer(result) {
  port.postMessage({ id: current, ...result });
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

// a command that ends the process ends this thread: say so instead of leaving the test blocked
process.exit = (code) => {
  answer({
    error: `process.exit(${code ?? ''}) in process: spawn the CLI for this test (TestRepo.guardSpawned)`,
  });
  throw new Error('process.exit in process');
};
process.on('uncaughtException', (err) =>
  answer({ error: `uncaught in process: ${err?.stack ?? err}` }),
);
process.on('unhandledRejection', (err) =>
  answer({ error: `unhandled rejection in process: ${err?.stack ?? err}` }),
);

function capture(into) {
  return function write(chunk, encoding, cb) {
    into.push(
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8')
        : Buffer.from(chunk),
    );
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') queueMicrotask(() => done());
    return true;
  };
}

const stdinDescriptor = Object.getOwnPropertyDescriptor(process, 'stdin');
const writes = { out: process.stdout.write, err: process.stderr.write };

parentPort.on('message', async ({ id, args, env, input }) => {
  current = id;
  eventsRead.clear();
  cleaned.clear();
  const out = [];
  const err = [];
  const baseline = pendingWork();
  let code;
  try {
    process.env = env;
    process.exitCode = undefined;
    const stdin = Readable.from(
      input === undefined || input.length === 0 ? [] : [Buffer.from(input)],
    );
    Object.defineProperty(process, 'stdin', { value: stdin, configurable: true, writable: true });
    process.stdout.write = capture(out);
    process.stderr.write = capture(err);
    code = await runCli(args);
    // a process exits when its work is done: wait for what the command left running
    for (let i = 0; i < 2500 && pendingWork() > baseline; i++)
      await new Promise((r) => setTimeout(r, 2));
  } catch (e) {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    answer({ error: `runCli threw: ${e?.stack ?? e}` });
    return;
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    if (stdinDescriptor) Object.defineProperty(process, 'stdin', stdinDescriptor);
  }
  answer({
    code,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  });
});
answer({ ready: true });
