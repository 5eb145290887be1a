import yargs, { type Argv } from 'yargs';
import { GuardError } from '../core/errors.js';
import type { GlobalArgs } from './main.js';

export type Parsed = { kind: 'command'; command: string; argv: GlobalArgs } | { kind: 'done'; code: number };

const EPILOGUE = `Exit codes: 0 done or allowed, 1 blocked/rejected/conflicted, 2 usage or config error, 3 internal error.
Auto mode (no prompts; changes that need approval are blocked): --auto, GUARD_AUTO=1, CI=true, or no terminal.`;

const auto = (y: Argv) =>
  y.option('auto', { type: 'boolean', describe: 'never prompt: block what needs approval' });
const timeout = (y: Argv) =>
  y
    .option('timeout', { type: 'number', describe: 'give up after SECONDS (fails closed, E_TIMEOUT)' })
    .option('limit', { type: 'number', describe: 'list at most N files (default 1000; what needs attention first)' });

/** yargs describes the commands; main.ts runs them. */
export async function parseArgs(args: string[]): Promise<Parsed> {
  let command: string | null = null;
  const set = (name: string) => () => {
    command = name;
  };
  let usageError: string | null = null;
  const y = yargs(args)
    .scriptName('guard')
    .usage('guard <command> [options]\n\nKeeps AI coding agents from silently destroying code.')
    .parserConfiguration({ 'populate--': true })
    .option('json', { type: 'boolean', describe: 'print one JSON document on stdout' })
    .option('cwd', { type: 'string', describe: 'run as if started in DIR', requiresArg: true })
    .option('color', { type: 'boolean', describe: 'colour (default: on a terminal, off with NO_COLOR)' })
    .option('quiet', { alias: 'q', type: 'boolean', describe: 'print only what needs attention' })
    .command('init', 'install the pre-commit hook (husky, or a plain git hook with --global), write guard.config.json, exclude .guard/', (y) =>
      y
        .option('global', { type: 'boolean', describe: 'a plain git hook that runs the guard on PATH (npm install --global guard-cli): no package.json, no husky' })
        .option('agent', { type: 'string', array: true, describe: 'also write the hook config of these harnesses: claude gemini codex cursor cline copilot' }),
      set('init'))
    .command('hook <harness>', 'the gate inside an agent harness: one hook payload on stdin, the answer in its protocol', (y) =>
      y
        .positional('harness', { type: 'string', describe: 'claude, gemini, codex, cursor, cline or copilot' })
        .option('timeout', { type: 'number', describe: 'answer (fail closed) after SECONDS (default 20)' }),
      set('hook'))
    .command('rewind [session]', "put back every path an agent session wrote (checkpoints first, so it can be undone)", (y) =>
      y
        .positional('session', { type: 'string', describe: 'the session id (guard log --session); the latest session when left out' })
        .option('to', { type: 'string', requiresArg: true, describe: 'only what the session wrote from this checkpoint on' }),
      set('rewind'))
    .command('check', 'gate the staged changes against HEAD (the pre-commit hook runs this)', (y) => timeout(auto(y)), set('check'))
    .command('write [path]', 'gate one write by an agent: new content on stdin (guard write -- PATH for a name starting with -)', (y) =>
      auto(y).positional('path', { type: 'string', describe: 'file to write, inside the work tree' }), set('write'))
    .command('log', 'list checkpoints and decisions, newest first', (y) =>
      y
        .option('limit', { type: 'number', describe: 'show at most N entries', default: 50 })
        .option('session', { type: 'string', requiresArg: true, describe: 'only what one agent session did (its checkpoints and decisions)' })
        .option('prune', { type: 'boolean', describe: 'delete old checkpoints (with --older-than or --keep)' })
        .option('older-than', { type: 'string', describe: 'with --prune: age such as 30d, 12h' })
        .option('keep', { type: 'number', describe: 'with --prune: keep the newest N checkpoints' })
        .option('include-rejected', { type: 'boolean', describe: 'with --prune: also prune rejected refs and decision records' }),
      set('log'))
    .command('restore <checkpoint> [paths..]', 'put files back as they were at a checkpoint (checkpoints the current state first)', (y) =>
      y
        .positional('checkpoint', { type: 'string', describe: 'checkpoint id from guard log' })
        .positional('paths', { type: 'string', array: true, describe: 'only these paths (after --)' })
        .option('staged', { type: 'boolean', describe: 'also put the index entries back' }),
      set('restore'))
    .command('start <name>', 'create lane NAME (a worktree under .guard/lanes/) and print its path', (y) =>
      y
        .positional('name', { type: 'string', describe: 'letters, digits, "-", "_", "."' })
        .option('from', { type: 'string', describe: 'start from REV (default HEAD)', requiresArg: true }),
      set('start'))
    .command('run <name>', 'run a command inside lane NAME: guard run NAME -- CMD...', (y) =>
      y
        .positional('name', { type: 'string', describe: 'the lane (created if it does not exist)' })
        .option('from', { type: 'string', requiresArg: true, describe: 'when the lane is new: start from REV' }),
      set('run'))
    .command('lanes', 'list lanes: files changed and how many need approval', (y) => y, set('lanes'))
    .command('discard <name>', 'remove a lane (its last state is checkpointed first)', (y) => y.positional('name', { type: 'string', describe: 'the lane' }), set('discard'))
    .command('review [name]', 'review a lane hunk by hunk and merge what is approved', (y) =>
      timeout(auto(y))
        .positional('name', { type: 'string', describe: 'the lane (may be left out when there is only one)' })
        .option('all', { type: 'boolean', describe: 'ask about every hunk, not only what needs approval' })
        .option('decisions', { type: 'string', requiresArg: true, describe: 'scripted decisions (JSON file) instead of prompts' })
        .option('commit', { type: 'boolean', describe: 'commit the merge with Guard-Approved trailers' })
        .option('message', { alias: 'm', type: 'string', requiresArg: true, describe: 'commit message for --commit' }),
      set('review'))
    .command('ci', 'check a pull request: every change that needs approval must carry a matching Guard-Approved trailer', (y) =>
      timeout(y)
        .option('base', { type: 'string', demandOption: true, requiresArg: true, describe: 'base branch or commit' })
        .option('head', { type: 'string', requiresArg: true, describe: 'head commit (default HEAD)' })
        .option('format', { choices: ['text', 'json', 'github', 'markdown', 'sarif'] as const, default: 'text' }),
      set('ci'))
    .command('doctor', 'tell whether the gate would run (hook installed and active, config, refs)', (y) => y, set('doctor'))
    .demandCommand(1, 'name a command (guard --help lists them)')
    .strict()
    .help()
    .alias('help', 'h')
    .version()
    .epilogue(EPILOGUE)
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => {
      usageError = msg || err?.message || 'bad arguments';
    });
  const argv = (await y.parseAsync()) as unknown as GlobalArgs;
  if (usageError) {
    // yargs puts the detail on the next lines ("Invalid values:\n  Argument: format, Given: ..."): one line, all of it
    const message = String(usageError).trim().replace(/:\s*\n\s*/g, ': ').replace(/\s*\n\s*/g, '; ');
    throw new GuardError('E_USAGE', message, 'guard --help lists the commands and options');
  }
  if (!command) return { kind: 'done', code: 0 }; // --help or --version printed
  return { kind: 'command', command, argv };
}
