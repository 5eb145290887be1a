import { GuardError, EXIT } from '../core/errors.js';
import { makeOutput, type Output } from '../ui/output.js';
import { parseFast, type Parsed } from './parse.js';
import type { ArgsOf, CommandName } from './spec.js';

/**
 * One command line, start to exit code: parse it, load the one command module
 * needed, map errors to exit codes. Command modules are imported lazily so
 * `guard check` in a hook never loads review's prompts or parsers, nor yargs
 * (usage.ts is for --help and usage errors). main.ts (the process) calls it;
 * so do the tests that run the CLI in process (test/inproc.ts).
 */
type CommandModule<N extends CommandName> = { run(args: ArgsOf<N>, out: Output): Promise<number> };

const COMMANDS: { [N in CommandName]: () => Promise<CommandModule<N>> } = {
  init: () => import('./init.js'),
  check: () => import('./check.js'),
  write: () => import('./write.js'),
  log: () => import('./log.js'),
  restore: () => import('./restore.js'),
  start: () => import('./start.js'),
  run: () => import('./run.js'),
  lanes: () => import('./lanes.js'),
  discard: () => import('./discard.js'),
  review: () => import('./review.js'),
  ci: () => import('./ci.js'),
  doctor: () => import('./doctor.js'),
  hook: () => import('./hook.js'),
  rewind: () => import('./rewind.js'),
  'verify-refs': () => import('./verify-refs.js'),
  recover: () => import('./recover.js'),
};

/**
 * A file or folder guard may not read or write (EACCES, EPERM) is the
 * user's to fix, not a bug: name it. Nothing was written past that point
 * (writes go through a temp file and a rename).
 */
function deniedError(err: unknown): GuardError | null {
  const e = err as { code?: unknown; path?: unknown; syscall?: unknown } | null;
  if (!e || (e.code !== 'EACCES' && e.code !== 'EPERM') || typeof e.path !== 'string') return null;
  const what =
    e.syscall === 'open' || e.syscall === 'read' || e.syscall === 'scandir' ? 'read' : 'access';
  return new GuardError(
    'E_UNREADABLE',
    `cannot ${what} ${e.path}: permission denied`,
    'fix its permissions (or move it away), then run guard again',
  );
}

/** Commands that never prompt; check, review and write prompt unless in auto mode; run hands the terminal to its command. */
const QUIET_WORK: Partial<Record<CommandName, string>> = {
  ci: 'checking the pull request',
  lanes: 'measuring lanes',
  log: 'reading refs/guard/',
  doctor: 'checking the gate',
  discard: 'checkpointing the lane',
  restore: 'restoring',
  check: 'checking staged changes',
  review: 'reviewing the lane',
};

async function maybeSpinner(p: Parsed, out: Output) {
  const label = QUIET_WORK[p.command];
  if (!label) return null;
  const { spinnerWanted, delayedSpinner } = await import('../ui/spinner.js');
  if (!spinnerWanted(p.args)) return null;
  if (p.command === 'check' || p.command === 'review') {
    const { isAutoMode } = await import('../ui/auto-mode.js');
    if (!isAutoMode(p.args.auto) && !(p.command === 'review' && p.args.decisions)) return null;
  }
  return delayedSpinner(label, out.ttyColor);
}

async function runCommand(p: Parsed, out: Output): Promise<number> {
  const mod = await COMMANDS[p.command]();
  // The table pairs each command with its module; TypeScript cannot follow the union through the lookup.
  return (mod.run as (args: Parsed['args'], out: Output) => Promise<number>)(p.args, out);
}

export async function runCli(argv: string[]): Promise<number> {
  let out = makeOutput({
    json: argv.includes('--json'),
    quiet: argv.includes('--quiet'),
    color: argv.includes('--no-color') ? false : undefined,
  });
  try {
    let parsed = parseFast(argv);
    if (!parsed) {
      const usage = await (await import('./usage.js')).parseWithYargs(argv);
      if (usage.kind === 'done') return usage.code;
      parsed = usage.parsed;
    }
    out = makeOutput(parsed.args);
    const spinner = await maybeSpinner(parsed, out);
    try {
      return await runCommand(parsed, out);
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
    out.error(
      new GuardError(
        'E_INTERNAL',
        `internal error: ${e.message}`,
        'this is a bug in guard; GUARD_DEBUG=1 prints the stack',
      ),
    );
    if (process.env.GUARD_DEBUG === '1') process.stderr.write(`${e.stack ?? e.message}\n`);
    return EXIT.internal;
  }
}
