import { readFileSync } from 'node:fs';
import yargs, { type Argv, type Options, type PositionalOptions } from 'yargs';
import { GuardError } from '../core/errors.js';
import { typed, type Parsed } from './parse.js';
import { COMMANDS, COMMON_FLAGS, isCommand, type CommandSpec, type Flag } from './spec.js';

/**
 * yargs, for --help, --version and usage errors only: parse.ts takes every
 * ordinary command line without loading it. Built from the same table
 * (spec.ts), so the help describes every flag the parser takes.
 */
export type UsageResult = { kind: 'command'; parsed: Parsed } | { kind: 'done'; code: number };

const EPILOGUE = `Exit codes: 0 done or allowed, 1 blocked/rejected/conflicted, 2 usage or config error, 3 internal error.
Auto mode (no prompts; changes that need approval are blocked): --auto, GUARD_AUTO=1, CI=true, or no terminal (an agent's shell has none: CLAUDECODE=1, GEMINI_CLI=1).`;

function option(f: Flag): Options {
  const o: Options = { type: f.type, describe: f.describe };
  if (f.short) o.alias = f.short;
  if (f.choices) o.choices = [...f.choices];
  if (f.default !== undefined) o.default = f.default;
  if (f.required) o.demandOption = true;
  if (f.type !== 'boolean') o.requiresArg = true;
  return o;
}

/** `write [path]`, `restore <checkpoint> [paths..]` */
function usageLine(name: string, spec: CommandSpec): string {
  const pos = spec.positionals.map((p) =>
    p.required ? `<${p.name}${p.variadic ? '..' : ''}>` : `[${p.name}${p.variadic ? '..' : ''}]`,
  );
  return [name, ...pos].join(' ');
}

function builder(spec: CommandSpec) {
  return (y: Argv) => {
    let out = y;
    for (const p of spec.positionals) {
      const o: PositionalOptions = { type: 'string', describe: p.describe };
      if (p.variadic) o.array = true;
      out = out.positional(p.name, o);
    }
    for (const [name, f] of Object.entries(spec.flags)) out = out.option(name, option(f));
    return out;
  };
}

/** guard's own version, from the package.json shipped next to dist/ (yargs 18 cannot find it from an ES module: it printed "unknown"). */
function packageVersion(): string {
  try {
    const pkg: unknown = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    );
    return typeof (pkg as { version?: unknown }).version === 'string'
      ? (pkg as { version: string }).version
      : 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function parseWithYargs(args: string[]): Promise<UsageResult> {
  let command: string | null = null;
  let usageError: string | null = null;
  let y = yargs(args)
    .scriptName('guard')
    .usage('guard <command> [options]\n\nKeeps AI coding agents from silently destroying code.')
    .parserConfiguration({ 'populate--': true });
  for (const [name, f] of Object.entries(COMMON_FLAGS)) y = y.option(name, option(f));
  for (const [name, spec] of Object.entries(COMMANDS) as Array<[string, CommandSpec]>) {
    y = y.command(
      usageLine(name, spec),
      (spec.hidden ? false : spec.describe) as string,
      builder(spec),
      () => {
        command = name;
      },
    );
  }
  const argv = (await y
    .demandCommand(1, 'name a command (guard --help lists them)')
    .strict()
    .help()
    .alias('help', 'h')
    .version(packageVersion())
    .epilogue(EPILOGUE)
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => {
      usageError = msg || err?.message || 'bad arguments';
    })
    .parseAsync()) as Record<string, unknown>;
  if (usageError) {
    // yargs puts the detail on the next lines ("Invalid values:\n  Argument: format, Given: ..."): one line, all of it
    const message = String(usageError)
      .trim()
      .replace(/:\s*\n\s*/g, ': ')
      .replace(/\s*\n\s*/g, '; ');
    throw new GuardError('E_USAGE', message, 'guard --help lists the commands and options');
  }
  if (!isCommand(command ?? undefined)) return { kind: 'done', code: 0 }; // --help or --version printed
  const name = command as unknown as keyof typeof COMMANDS;
  const spec: CommandSpec = COMMANDS[name];
  const flags: Record<string, unknown> = {};
  for (const flag of [...Object.keys(COMMON_FLAGS), ...Object.keys(spec.flags)])
    flags[flag] = argv[flag];
  const positionals: string[] = [];
  for (const p of spec.positionals) {
    const v = argv[p.name];
    if (Array.isArray(v)) positionals.push(...v.map(String));
    else if (v !== undefined) positionals.push(String(v));
  }
  const rest = ((argv['--'] as unknown[] | undefined) ?? []).map(String);
  return { kind: 'command', parsed: typed(name, { flags, positionals, rest }) as Parsed };
}
