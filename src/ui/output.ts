import { GuardError } from '../core/errors.js';
import { colorWanted, makeColors, type Colors } from './color.js';

/**
 * Where every command's words go. `--json`: exactly one JSON document on
 * stdout and nothing else there. Otherwise human text on stdout (errors and
 * warnings on stderr), colour only on a terminal.
 */
export interface Output {
  json: boolean;
  quiet: boolean;
  c: Colors;
  /** Colour for stderr and the terminal (prompts). */
  ttyColor: boolean;
  /** Human text; dropped under --json and --quiet. */
  info(text: string): void;
  /** Human text that --quiet keeps (what was blocked, what to do). */
  important(text: string): void;
  warn(text: string): void;
  /** The command's result: a JSON envelope under --json. */
  result(command: string, data: object): void;
  error(err: GuardError): void;
}

export interface OutputFlags {
  json?: boolean;
  quiet?: boolean;
  color?: boolean;
}

export function makeOutput(flags: OutputFlags): Output {
  const json = Boolean(flags.json);
  const quiet = Boolean(flags.quiet);
  // asked when first used: process.stdout.isTTY builds node's stream for fd 1 (~3 ms of CPU on
  // Node 24), which `guard hook` never needs (it writes its answer to the fd: cli/hook.ts)
  let c: Colors | undefined;
  let ttyColor: boolean | undefined;
  const tty = () => (ttyColor ??= colorWanted(process.stderr.isTTY, flags.color));
  let e: Colors | undefined;
  const err = () => (e ??= makeColors(tty()));
  const write = (s: string) => process.stdout.write(s.endsWith('\n') ? s : s + '\n');
  return {
    json,
    quiet,
    get c() {
      return (c ??= makeColors(!json && colorWanted(process.stdout.isTTY, flags.color)));
    },
    get ttyColor() {
      return tty();
    },
    info: (t) => {
      if (!json && !quiet) write(t);
    },
    important: (t) => {
      if (!json) write(t);
    },
    warn: (t) => {
      process.stderr.write(err().yellow('guard: ') + t + '\n');
    },
    result: (command, data) => {
      if (json) write(JSON.stringify({ ok: true, command, ...data }));
    },
    error: (problem) => {
      if (json) {
        const error: Record<string, string> = { code: problem.code, message: problem.message };
        if (problem.hint) error.hint = problem.hint;
        write(JSON.stringify({ ok: false, error }));
      } else {
        process.stderr.write(`${err().red('guard:')} ${problem.message}\n`);
        if (problem.hint) process.stderr.write(`${err().dim('hint:')} ${problem.hint}\n`);
      }
    },
  };
}

/** How many files a report lists unless --limit says otherwise. */
export const DEFAULT_FILE_LIMIT = 1000;

export interface BoundedFiles<T> {
  files: T[];
  truncated?: true;
  truncatedReason?: string;
}

/**
 * Cap a report's file list. Files that need attention (blocked, rejected,
 * conflicted) come first so a cut never hides them; the JSON says what was cut.
 */
export function boundFiles<T extends { decision?: string; conflict?: boolean }>(
  files: T[],
  limit: number | undefined,
): BoundedFiles<T> {
  const max = limit !== undefined && limit >= 0 ? Math.floor(limit) : DEFAULT_FILE_LIMIT;
  if (files.length <= max) return { files };
  const urgent = (f: T) =>
    f.conflict === true || f.decision === 'blocked' || f.decision === 'rejected';
  const ordered = [...files.filter(urgent), ...files.filter((f) => !urgent(f))];
  return {
    files: ordered.slice(0, max),
    truncated: true,
    truncatedReason: `${files.length - max} of ${files.length} files not listed (--limit ${max})`,
  };
}
