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
