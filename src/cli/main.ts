#!/usr/bin/env node
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GuardError, EXIT } from '../core/errors.js';
import type { Deadline } from '../git/deadline.js';
import { makeOutput, type Output } from '../ui/output.js';

/**
 * The entry point: parse flags, load the one command module needed, map
 * errors to exit codes. Command modules are imported lazily so `guard check`
 * in a hook never loads review's prompts or parsers.
 */
export interface GlobalArgs {
  json?: boolean;
  cwd?: string;
  color?: boolean;
  quiet?: boolean;
  /** Made from --timeout by main; commands pass it to their flow. */
  deadline?: Deadline;
  [key: string]: unknown;
}

export type CommandModule = { run(argv: GlobalArgs, out: Output): Promise<number> };

// Every module is loaded only when its command runs (string specifiers keep
// the type checker from requiring modules that are not written yet).
const load = (name: string) => () => import(`./${name}.js`) as Promise<CommandModule>;
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  init: load('init'),
  check: load('check'),
  write: load('write'),
  log: load('log'),
  restore: load('restore'),
  start: load('start'),
  run: load('run'),
  lanes: load('lanes'),
  discard: load('discard'),
  review: load('review'),
  ci: load('ci'),
  doctor: load('doctor'),
  hook: load('hook'),
  rewind: load('rewind'),
};

export function resolveCwd(argv: GlobalArgs): string {
  const dir = path.resolve(argv.cwd ?? process.cwd());
  if (argv.cwd !== undefined) {
    // checked here so that it is one clear line, not a failed spawn deep inside
    let st;
    try {
      st = statSync(dir);
    } catch {
      throw new GuardError('E_USAGE', `--cwd ${argv.cwd}: no such folder`, 'pass the folder of a git work tree');
    }
    if (!st.isDirectory()) throw new GuardError('E_USAGE', `--cwd ${argv.cwd} is a file, not a folder`, 'pass the folder of a git work tree');
  }
  return dir;
}

/**
 * `guard check` runs on every commit, and loading yargs alone costs more than
 * the whole check (50-120 ms here). The hook's plain invocations are parsed
 * with node's own parseArgs; anything else (help, odd flags, typos) goes
 * through yargs for its messages.
 */
function hotPath(args: string[]): { kind: 'command'; command: string; argv: GlobalArgs } | null {
  if (args[0] === 'hook') return hookArgs(args);
  if (args[0] !== 'check') return null;
  try {
    const { values } = parseArgs({
      args: args.slice(1),
      strict: true,
      allowPositionals: false,
      options: {
        json: { type: 'boolean' },
        auto: { type: 'boolean' },
        quiet: { type: 'boolean', short: 'q' },
        color: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        cwd: { type: 'string' },
        timeout: { type: 'string' },
        limit: { type: 'string' },
      },
    });
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (timeout !== undefined && !(timeout > 0)) return null;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) return null;
    const argv: GlobalArgs = { ...values, timeout, limit, color: values['no-color'] ? false : values.color };
    delete argv['no-color'];
    return { kind: 'command', command: 'check', argv };
  } catch {
    return null;
  }
}

/** `guard hook HARNESS [--timeout S] [--cwd DIR]`: every tool call of an agent runs it. */
function hookArgs(args: string[]): { kind: 'command'; command: string; argv: GlobalArgs } | null {
  try {
    const { values, positionals } = parseArgs({
      args: args.slice(1),
      strict: true,
      allowPositionals: true,
      options: { timeout: { type: 'string' }, cwd: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' }, 'no-color': { type: 'boolean' } },
    });
    if (positionals.length !== 1) return null;
    const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
    if (timeout !== undefined && !(timeout > 0)) return null;
    // the timeout is the hook's own budget (cli/hook.ts), not the git deadline
    return { kind: 'command', command: 'hook', argv: { harness: positionals[0], hookTimeout: timeout, ...(values.cwd ? { cwd: values.cwd } : {}) } };
  } catch {
    return null;
  }
}

/**
 * A file or folder guard may not read or write (EACCES, EPERM) is the
 * user's to fix, not a bug: name it. Nothing was written past that point
 * (writes go through a temp file and a rename).
 */
function deniedError(err: unknown): GuardError | null {
  const e = err as { code?: unknown; path?: unknown; syscall?: unknown } | null;
  if (!e || (e.code !== 'EACCES' && e.code !== 'EPERM') || typeof e.path !== 'string') return null;
  const what = e.syscall === 'open' || e.syscall === 'read' || e.syscall === 'scandir' ? 'read' : 'access';
  return new GuardError('E_UNREADABLE', `cannot ${what} ${e.path}: permission denied`, 'fix its permissions (or move it away), then run guard again');
}

/** Commands that never prompt; check, review and write prompt unless in auto mode; run hands the terminal to its command. */
const QUIET_WORK: Record<string, string> = {
  ci: 'checking the pull request',
  lanes: 'measuring lanes',
  log: 'reading refs/guard/',
  doctor: 'checking the gate',
  discard: 'checkpointing the lane',
  restore: 'restoring',
  check: 'checking staged changes',
  review: 'reviewing the lane',
};

async function maybeSpinner(command: string, argv: GlobalArgs, out: Output) {
  const label = QUIET_WORK[command];
  if (!label) return null;
  const { spinnerWanted, delayedSpinner } = await import('../ui/spinner.js');
  if (!spinnerWanted(argv)) return null;
  if (command === 'check' || command === 'review') {
    const { isAutoMode } = await import('../ui/auto-mode.js');
    if (!isAutoMode(argv.auto as boolean | undefined) && !argv.decisions) return null;
  }
  return delayedSpinner(label, out.ttyColor);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let out = makeOutput({ json: args.includes('--json'), quiet: args.includes('--quiet'), color: args.includes('--no-color') ? false : undefined });
  try {
    const parsed = hotPath(args) ?? (await (await import('./args.js')).parseArgs(args));
    if (parsed.kind === 'done') return parsed.code;
    out = makeOutput(parsed.argv);
    for (const flag of ['limit', 'keep', 'timeout']) {
      const v = parsed.argv[flag];
      if (typeof v === 'number' && !Number.isFinite(v)) throw new GuardError('E_USAGE', `--${flag} takes a number`, `e.g. --${flag} 50`);
    }
    if (parsed.argv.cwd !== undefined && !existsSync(String(parsed.argv.cwd))) {
      throw new GuardError('E_USAGE', `--cwd ${parsed.argv.cwd}: no such folder`, 'pass --cwd a folder inside a git work tree');
    }
    if (typeof parsed.argv.timeout === 'number') {
      if (!(parsed.argv.timeout > 0)) throw new GuardError('E_USAGE', '--timeout takes a number of seconds above 0', 'e.g. --timeout 30');
      parsed.argv.deadline = (await import('../git/deadline.js')).makeDeadline(parsed.argv.timeout);
    }
    const command = COMMANDS[parsed.command];
    if (!command) throw new GuardError('E_USAGE', `unknown command "${parsed.command}"`, 'guard --help lists the commands');
    const spinner = await maybeSpinner(parsed.command, parsed.argv, out);
    try {
      const mod = await command();
      const deadline = parsed.argv.deadline;
      return await (deadline ? deadline.within(() => mod.run(parsed.argv, out)) : mod.run(parsed.argv, out));
    } finally {
      spinner?.stop();
    }
  } catch (err) {
    if (err instanceof GuardError) {
      out.error(err);
      return err.exitCode;
    }
    const denied = deniedError(err);
    if (denied) {
      out.error(denied);
      return denied.exitCode;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    out.error(new GuardError('E_INTERNAL', `internal error: ${e.message}`, 'this is a bug in guard; GUARD_DEBUG=1 prints the stack'));
    if (process.env.GUARD_DEBUG === '1') process.stderr.write(`${e.stack ?? e.message}\n`);
    return EXIT.internal;
  }
}

// A reader that goes away (`guard log | head -1`) closes stdout: what guard did
// stands, the rest of the report has nowhere to go. Never a stack trace for it.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = EXIT.internal;
  },
);
