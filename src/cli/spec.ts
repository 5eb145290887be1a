/**
 * Every command's flags and positionals, as data. The parser (parse.ts, node's
 * util.parseArgs) and the help (usage.ts, yargs, loaded only for --help and
 * usage errors) are both built from this table, so a flag cannot be parsed
 * without a description, and each command's arguments have a type of their
 * own (ArgsOf). No imports: loading this costs nothing on the commit path.
 */

export type FlagType = 'boolean' | 'string' | 'number';

export interface Flag {
  type: FlagType;
  describe: string;
  short?: string;
  /** The only values a string flag takes. */
  choices?: readonly string[];
  /** Shown in --help; the command applies it. */
  default?: string | number;
  /** A usage error when absent. */
  required?: boolean;
}

export interface Positional {
  name: string;
  describe: string;
  required?: boolean;
  /** Takes all remaining positionals (`[paths..]`). */
  variadic?: boolean;
}

export interface CommandSpec {
  describe: string;
  positionals: readonly Positional[];
  flags: Readonly<Record<string, Flag>>;
  /** Takes arguments after `--` (a command to run, paths). */
  rest?: boolean;
  /** Run by guard's own hooks, not by people: left out of --help. */
  hidden?: boolean;
}

/** What every command takes (DESIGN "Commands"). `--no-color` is color: false. */
export const COMMON_FLAGS = {
  json: { type: 'boolean', describe: 'print one JSON document on stdout (nothing else there)' },
  cwd: { type: 'string', describe: 'run as if started in DIR' },
  color: {
    type: 'boolean',
    describe: 'colour (default: on a terminal, off with NO_COLOR); --no-color turns it off',
  },
  quiet: { type: 'boolean', short: 'q', describe: 'print only what needs attention' },
} as const satisfies Record<string, Flag>;

const auto = {
  type: 'boolean',
  describe: 'never prompt: block what needs approval (also GUARD_AUTO=1, CI=true, no terminal)',
} as const;
const timeout = {
  type: 'number',
  describe:
    'give up after SECONDS of reading (fails closed, E_TIMEOUT; never once guard has started writing)',
} as const;
const limit = {
  type: 'number',
  describe: 'list at most N files (default 1000; what needs attention first)',
} as const;

export const COMMANDS = {
  init: {
    describe:
      'install the pre-commit hook (husky, or a plain git hook with --global), write guard.config.json, exclude .guard/',
    positionals: [
      {
        name: 'harnesses',
        describe:
          'with --agent: claude gemini codex cursor cline copilot continue qwen auggie droid crush',
        variadic: true,
      },
    ],
    flags: {
      global: {
        type: 'boolean',
        describe:
          'a plain git hook that runs the guard on PATH (npm install --global guard-cli): no package.json, no husky',
      },
      agent: {
        type: 'boolean',
        describe:
          'also write the hook config of the harnesses named after it: guard init --agent claude gemini',
      },
    },
  },
  check: {
    describe: 'gate the staged changes against HEAD (the pre-commit hook runs this)',
    positionals: [],
    flags: { auto, timeout, limit },
  },
  write: {
    describe:
      'gate one write by an agent: new content on stdin (guard write -- PATH for a name starting with -)',
    positionals: [{ name: 'path', describe: 'file to write, inside the work tree' }],
    flags: {
      auto,
      session: {
        type: 'string',
        describe:
          'the agent session (also GUARD_SESSION): measure against the file as the session first saw it',
      },
    },
    rest: true,
  },
  hook: {
    describe:
      'the gate inside an agent harness: one hook payload on stdin, the answer in its protocol',
    positionals: [
      {
        name: 'harness',
        describe:
          'claude, gemini, codex, cursor, cline, copilot, continue, qwen, auggie, droid or crush',
        required: true,
      },
    ],
    flags: {
      timeout: {
        type: 'number',
        describe: 'answer (fail closed) after SECONDS (default 20, also GUARD_HOOK_TIMEOUT)',
      },
    },
  },
  rewind: {
    describe: 'put back every path an agent session wrote (checkpoints first, so it can be undone)',
    positionals: [
      {
        name: 'session',
        describe: 'the session id (guard log --session); the latest session when left out',
      },
    ],
    flags: {
      to: { type: 'string', describe: 'only what the session wrote from this checkpoint on' },
    },
  },
  log: {
    describe: 'list checkpoints and decisions, newest first',
    positionals: [],
    flags: {
      limit: { type: 'number', describe: 'show at most N entries', default: 50 },
      session: {
        type: 'string',
        describe: 'only what one agent session did (its checkpoints and decisions)',
      },
      prune: { type: 'boolean', describe: 'delete old checkpoints (with --older-than or --keep)' },
      'older-than': { type: 'string', describe: 'with --prune: age such as 30d, 12h' },
      keep: { type: 'number', describe: 'with --prune: keep the newest N checkpoints' },
      'include-rejected': {
        type: 'boolean',
        describe: 'with --prune: also prune rejected refs and decision records',
      },
    },
  },
  restore: {
    describe: 'put files back as they were at a checkpoint (checkpoints the current state first)',
    positionals: [
      { name: 'checkpoint', describe: 'checkpoint id from guard log', required: true },
      { name: 'paths', describe: 'only these paths (or after --)', variadic: true },
    ],
    flags: { staged: { type: 'boolean', describe: 'also put the index entries back' } },
    rest: true,
  },
  start: {
    describe: 'create lane NAME (a worktree under .guard/lanes/) and print its path',
    positionals: [{ name: 'name', describe: 'letters, digits, "-", "_", "."', required: true }],
    flags: { from: { type: 'string', describe: 'start from REV (default HEAD)' } },
  },
  run: {
    describe: 'run a command inside lane NAME: guard run NAME -- CMD...',
    positionals: [
      { name: 'name', describe: 'the lane (created if it does not exist)', required: true },
    ],
    flags: { from: { type: 'string', describe: 'when the lane is new: start from REV' } },
    rest: true,
  },
  lanes: {
    describe: 'list lanes: files changed and how many need approval',
    positionals: [],
    flags: {},
  },
  discard: {
    describe: 'remove a lane (its last state is checkpointed first)',
    positionals: [{ name: 'name', describe: 'the lane', required: true }],
    flags: {},
  },
  review: {
    describe: 'review a lane hunk by hunk and merge what is approved',
    positionals: [{ name: 'name', describe: 'the lane (may be left out when there is only one)' }],
    flags: {
      auto,
      timeout,
      limit,
      all: { type: 'boolean', describe: 'ask about every hunk, not only what needs approval' },
      decisions: { type: 'string', describe: 'scripted decisions (JSON file) instead of prompts' },
      commit: { type: 'boolean', describe: 'commit the merge with Guard-Approved trailers' },
      message: { type: 'string', short: 'm', describe: 'commit message for --commit' },
      'dry-run': {
        type: 'boolean',
        describe: 'print the plan (files, hunks with ids, what would happen) and write nothing',
      },
    },
  },
  ci: {
    describe:
      'check a pull request: every change that needs approval must carry a matching Guard-Approved trailer',
    positionals: [],
    flags: {
      timeout,
      limit,
      base: {
        type: 'string',
        required: true,
        describe: 'base branch or commit (the pull request targets it)',
      },
      head: { type: 'string', describe: 'head commit (default HEAD)' },
      format: {
        type: 'string',
        choices: ['text', 'json', 'github', 'markdown', 'sarif'],
        default: 'text',
        describe:
          'text for people; json (as --json); github: workflow annotations and a job summary; markdown for a comment; sarif 2.1.0 for code scanning',
      },
    },
  },
  doctor: {
    describe: 'tell whether the gate would run (hook installed and active, config, refs)',
    positionals: [],
    flags: {},
  },
  recover: {
    describe:
      "put back guard's refs that were removed outside guard, from its journal (.git/guard/journal)",
    positionals: [],
    flags: {},
  },
  'verify-refs': {
    describe:
      'the gate on every branch move: the reference-transaction hook runs it with the ref updates on stdin',
    positionals: [],
    flags: { auto },
    hidden: true,
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string | undefined): name is CommandName {
  return name !== undefined && Object.prototype.hasOwnProperty.call(COMMANDS, name);
}

/** `older-than` -> `olderThan` */
type Camel<S extends string> = S extends `${infer A}-${infer B}`
  ? `${A}${Capitalize<Camel<B>>}`
  : S;

type FlagValue<F> = F extends { choices: readonly (infer C)[] }
  ? C
  : F extends { type: 'boolean' }
    ? boolean
    : F extends { type: 'number' }
      ? number
      : string;

type FlagArgs<F> = {
  -readonly [K in keyof F & string as Camel<K>]: F[K] extends { required: true }
    ? FlagValue<F[K]>
    : FlagValue<F[K]> | undefined;
};

type PositionalArgs<P extends readonly Positional[]> = {
  -readonly [X in P[number] as Camel<X['name']>]: X extends { variadic: true }
    ? string[]
    : X extends { required: true }
      ? string
      : string | undefined;
};

/** What every command gets, parsed: cwd resolved to an absolute path. */
export interface CommonArgs {
  json: boolean;
  cwd: string;
  /** undefined: decide by the terminal and NO_COLOR / FORCE_COLOR. */
  color: boolean | undefined;
  quiet: boolean;
}

/** One command's arguments, typed from its spec; `rest` holds what came after `--`. */
export type ArgsOf<N extends CommandName> = CommonArgs &
  FlagArgs<(typeof COMMANDS)[N]['flags']> &
  PositionalArgs<(typeof COMMANDS)[N]['positionals']> & { rest: string[] };

export type CheckArgs = ArgsOf<'check'>;
export type WriteArgs = ArgsOf<'write'>;
export type ReviewArgs = ArgsOf<'review'>;
export type CiArgs = ArgsOf<'ci'>;
export type LogArgs = ArgsOf<'log'>;
export type RestoreArgs = ArgsOf<'restore'>;
export type StartArgs = ArgsOf<'start'>;
export type RunArgs = ArgsOf<'run'>;
export type DiscardArgs = ArgsOf<'discard'>;
export type LanesArgs = ArgsOf<'lanes'>;
export type InitArgs = ArgsOf<'init'>;
export type DoctorArgs = ArgsOf<'doctor'>;
export type HookArgs = ArgsOf<'hook'>;
export type RewindArgs = ArgsOf<'rewind'>;
export type VerifyRefsArgs = ArgsOf<'verify-refs'>;
export type RecoverArgs = ArgsOf<'recover'>;

export function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
