import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GuardError } from '../core/errors.js';
import {
  COMMANDS,
  COMMON_FLAGS,
  camel,
  isCommand,
  type ArgsOf,
  type CommandName,
  type CommandSpec,
  type Flag,
} from './spec.js';

/**
 * Command lines as guard's hooks and harnesses write them are parsed here
 * with node's own util.parseArgs: loading yargs alone costs more than a
 * whole `guard check` (50-120 ms). Anything this parser does not take as it
 * is (--help, --version, no command, an unknown flag, a missing value, a
 * spelling only yargs knows such as --no-auto) is handed to yargs
 * (usage.ts), for its help and its messages.
 */
export type Parsed = { [N in CommandName]: { command: N; args: ArgsOf<N> } }[CommandName];

/** Values as read from the command line, before they are checked and typed. */
export interface RawArgs {
  flags: Record<string, unknown>;
  positionals: string[];
  rest: string[];
}

const HELP = new Set(['--help', '-h', '--version']);

/** null: let yargs parse it (help, version, or something this parser refuses). */
export function parseFast(args: readonly string[]): Parsed | null {
  const name = args[0];
  if (!isCommand(name)) return null;
  const terminator = args.indexOf('--');
  const before = terminator === -1 ? args : args.slice(0, terminator);
  if (before.some((a) => HELP.has(a))) return null;
  const spec: CommandSpec = COMMANDS[name];
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: args.slice(1),
      options: parseOptions(spec),
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
  } catch {
    return null;
  }
  const cut = parsed.tokens!.find((t) => t.kind === 'option-terminator')?.index;
  const positionals: string[] = [];
  const rest: string[] = [];
  for (const t of parsed.tokens!) {
    if (t.kind !== 'positional') continue;
    (cut !== undefined && t.index > cut ? rest : positionals).push(t.value);
  }
  const flags: Record<string, unknown> = { ...parsed.values };
  if (flags['no-color'] === true) flags.color = false;
  delete flags['no-color'];
  const raw = { flags, positionals, rest };
  return fits(spec, raw) ? (typed(name, raw) as Parsed) : null;
}

function parseOptions(spec: CommandSpec): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = { 'no-color': { type: 'boolean' } };
  const all: Record<string, Flag> = { ...COMMON_FLAGS, ...spec.flags };
  for (const [name, f] of Object.entries(all)) {
    out[name] = {
      type: f.type === 'boolean' ? 'boolean' : 'string',
      ...(f.short ? { short: f.short } : {}),
    };
  }
  return out;
}

/** Would yargs take these as they are? Otherwise it gets them, for its message. */
function fits(spec: CommandSpec, raw: RawArgs): boolean {
  const required = spec.positionals.filter((p) => p.required).length;
  const variadic = spec.positionals.some((p) => p.variadic);
  if (raw.positionals.length < required) return false;
  if (!variadic && raw.positionals.length > spec.positionals.length) return false;
  if (raw.rest.length > 0 && !spec.rest) return false;
  for (const [name, f] of Object.entries(spec.flags)) {
    const v = raw.flags[name];
    if (f.required && v === undefined) return false;
    if (f.choices && v !== undefined && !f.choices.includes(String(v))) return false;
  }
  return true;
}

/**
 * The typed arguments of a command from raw values (from parseFast, or from
 * yargs): numbers checked, cwd resolved and checked, positionals named.
 */
export function typed<N extends CommandName>(
  name: N,
  raw: RawArgs,
): { command: N; args: ArgsOf<N> } {
  const spec: CommandSpec = COMMANDS[name];
  const args: Record<string, unknown> = {
    json: raw.flags.json === true,
    quiet: raw.flags.quiet === true,
    color: typeof raw.flags.color === 'boolean' ? raw.flags.color : undefined,
    rest: raw.rest,
  };
  for (const [flag, f] of Object.entries(spec.flags))
    args[camel(flag)] = value(flag, f, raw.flags[flag]);
  let i = 0;
  for (const p of spec.positionals) {
    if (p.variadic) args[camel(p.name)] = raw.positionals.slice(i);
    else args[camel(p.name)] = raw.positionals[i++];
  }
  const cwd = raw.flags.cwd;
  if (cwd !== undefined && (typeof cwd !== 'string' || !existsSync(cwd))) {
    throw new GuardError(
      'E_USAGE',
      `--cwd ${String(cwd)}: no such folder`,
      'pass --cwd a folder inside a git work tree',
    );
  }
  if (typeof cwd === 'string' && !statSync(cwd).isDirectory()) {
    throw new GuardError(
      'E_USAGE',
      `--cwd ${cwd} is a file, not a folder`,
      'pass --cwd a folder inside a git work tree',
    );
  }
  args.cwd = path.resolve(typeof cwd === 'string' ? cwd : here(name));
  return { command: name, args: args as ArgsOf<N> };
}

/**
 * The process's folder. `guard hook` answers every failure in the harness's blocking form
 * (cli/hook.ts): a folder removed under it (process.cwd() fails) is judged there, not exit 3 here,
 * which a harness reads as "go ahead" under a hook entry without the installed fallback (holes6).
 */
function here(command: string): string {
  try {
    return process.cwd();
  } catch (err) {
    if (command === 'hook') return path.sep;
    throw err;
  }
}

function value(name: string, f: Flag, v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  if (f.type === 'boolean') return Boolean(v);
  if (f.type === 'string') return String(v);
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n) || (typeof v === 'string' && v.trim() === ''))
    throw new GuardError('E_USAGE', `--${name} takes a number`, `e.g. --${name} 50`);
  if (name === 'timeout' && !(n > 0))
    throw new GuardError(
      'E_USAGE',
      '--timeout takes a number of seconds above 0',
      'e.g. --timeout 30',
    );
  return n;
}
