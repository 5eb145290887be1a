#!/usr/bin/env node
import { EXIT } from '../core/errors.js';
import { runCli } from './entry.js';

/** The entry point, and nothing else imports it: the process around runCli (entry.ts). */

// A reader that goes away (`guard log | head -1`) closes stdout: what guard did
// stands, the rest of the report has nowhere to go. Never a stack trace for it.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = EXIT.internal;
  },
);
