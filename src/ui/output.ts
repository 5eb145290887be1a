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
  const c = makeColors(!json && colorWanted(process.stdout.isTTY, flags.color));
  const ttyColor = colorWanted(process.stderr.isTTY, flags.color);
  const e = makeColors(ttyColor);
  const write = (s: string) => process.stdout.write(s.endsWith('\n') ? s : s + '\n');
  return {
    json,
    quiet,
    c,
    ttyColor,
    info: (t) => {
      if (!json && !quiet) write(t);
    },
    important: (t) => {
      if (!json) write(t);
    },
    warn: (t) => {
      process.stderr.write(e.yellow('guard: ') + t + '\n');
    },
    result: (command, data) => {
      if (json) write(JSON.stringify({ ok: true, command, ...data }));
    },
    error: (err) => {
      if (json) {
        const error: Record<string, string> = { code: err.code, message: err.message };
        if (err.hint) error.hint = err.hint;
        write(JSON.stringify({ ok: false, error }));
      } else {
        process.stderr.write(`${e.red('guard:')} ${err.message}\n`);
        if (err.hint) process.stderr.write(`${e.dim('hint:')} ${err.hint}\n`);
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
