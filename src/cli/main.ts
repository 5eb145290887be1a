#!/usr/bin/env node
import { EXIT } from '../core/errors.js';
import { runCli } from './entry.js';

/** The entry point, and nothing else imports it: the process around runCli (entry.ts). */

// A reader that goes away (`guard log | head -1`) closes stdout: what guard did
// stands, the rest of the report has nowhere to go. Never a stack trace for it.
// Set on each stream when it is first built: node builds process.stdout and
// process.stderr on first use (~3 ms of CPU on Node 24 for a pipe), and `guard
// hook` writes its answer to the fds without them (cli/hook.ts).
const epipeOnly = (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
};
for (const name of ['stdout', 'stderr'] as const) {
  const built = Object.getOwnPropertyDescriptor(process, name);
  if (!built?.get || !built.configurable) {
    process[name].on('error', epipeOnly);
    continue;
  }
  const get = built.get;
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: built.enumerable ?? true,
    get() {
      const stream = get.call(process) as NodeJS.WriteStream;
      Object.defineProperty(process, name, { ...built, get });
      stream.on('error', epipeOnly);
      return stream;
    },
  });
}

// this process's fds 0, 1 and 2 are guard's own: `guard hook` reads and writes them directly
// (cli/hook.ts); a host that runs the CLI in its own process does not set this
(globalThis as Record<symbol, unknown>)[Symbol.for('guard.process.fds')] = true;

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = EXIT.internal;
  },
);
