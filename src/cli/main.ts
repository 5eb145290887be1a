#!/usr/bin/env node
import path from 'node:path';
import { GuardError, EXIT } from '../core/errors.js';
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
  [key: string]: unknown;
}

export type CommandModule = { run(argv: GlobalArgs, out: Output): Promise<number> };

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  init: () => import('./init.js'),
  check: () => import('./check.js'),
};

export function resolveCwd(argv: GlobalArgs): string {
  return path.resolve(argv.cwd ?? process.cwd());
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let out = makeOutput({ json: args.includes('--json'), quiet: args.includes('--quiet'), color: args.includes('--no-color') ? false : undefined });
  try {
    const { parseArgs } = await import('./args.js');
    const parsed = await parseArgs(args);
    if (parsed.kind === 'done') return parsed.code;
    out = makeOutput(parsed.argv);
    const load = COMMANDS[parsed.command];
    if (!load) throw new GuardError('E_USAGE', `unknown command "${parsed.command}"`, 'guard --help lists the commands');
    return await (await load()).run(parsed.argv, out);
  } catch (err) {
    if (err instanceof GuardError) {
      out.error(err);
      return err.exitCode;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    out.error(new GuardError('E_INTERNAL', `internal error: ${e.message}`, 'this is a bug in guard; GUARD_DEBUG=1 prints the stack'));
    if (process.env.GUARD_DEBUG === '1') process.stderr.write(`${e.stack ?? e.message}\n`);
    return EXIT.internal;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = EXIT.internal;
  },
);
