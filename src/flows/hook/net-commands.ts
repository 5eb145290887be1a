import path from 'node:path';
import { scriptsOf, shellFed, shellWords } from './detached.js';

/**
 * Shell commands that take down guard's own evidence (docs/reliability/holes5.md): the hook
 * checkpoints every shell call and reports what it destroyed after, and the net (doctor/integrity)
 * notices at the next door when guard's refs or journal were removed. Three things would leave
 * nothing to notice, so a shell call that runs one is refused before it runs:
 *
 * - `guard recover`: it starts the journal again from the refs there are, so refs deleted just
 *   before are in no journal (the agent's `git update-ref -d` then `guard recover` in one command);
 * - `guard log --prune`: guard's own removal of its records, noted as guard's word;
 * - deleting guard's refs or its files by hand (`git update-ref -d refs/guard/...`, `rm -r
 *   .git/guard`, `rm .git/info/guard-journal-seal`, a redirection into them).
 *
 * These are a person's commands, run in a terminal after `guard doctor` and `guard log`. Read from
 * the command's text as the shell reads it (the scanner of detached.ts, one reader for both: holes8),
 * word by word in each simple command: a command built at run time (`eval "$x"`, a variable
 * holding `guard`) is not read, and the net still notices what it did at the next door,
 * except after `guard recover` (then only `guard ci` or a pushed copy of `refs/guard/*` would).
 */
export function netCommand(command: string): string | null {
  return netText(command, 0);
}

/** How deep scripts within scripts are read (`sh -c "eval 'guard recover'"`). */
const MAX_NESTED = 8;

/**
 * The command read as the shell reads it (detached.ts's scanner: quotes, backslashes, line
 * continuations, comments, here-documents, substitutions), each simple command's words and the
 * files its redirections write; the scripts among its words (`sh -c`, `eval`, a git alias's `!`,
 * anything a shell is fed on its input) read the same way.
 */
function netText(command: string, depth: number): string | null {
  if (depth > MAX_NESTED)
    return `a command with scripts nested more than ${MAX_NESTED} deep is not read: guard cannot tell what it does to its own records`;
  // a command substitution that names guard runs guard (`node $(which guard) recover`)
  const substituted = command.replace(/\$\(([^()]*)\)|`([^`]*)`/g, (m, a?: string, b?: string) =>
    shellWords(a ?? b ?? '')
      .commands.flat()
      .some(isGuard)
      ? ' guard '
      : m,
  );
  for (const text of new Set([command, substituted])) {
    const { commands, targets } = shellWords(text);
    const all = commands.flat();
    // (`echo recover | xargs guard`: the subcommand comes on stdin)
    const fed = all.includes('xargs') ? all : [];
    for (const words of commands) {
      const said =
        guardSubcommand(words, words.includes('xargs') ? fed : []) ??
        byHand(words, targets, command);
      if (said) return said;
    }
    const scripts = commands.flatMap((w) => [...scriptsOf(w), ...textsOf(w)]);
    // a shell fed its script (`echo 'guard recover' | sh`): every word that could be one
    if (commands.some((w) => shellFed(w, text))) scripts.push(...all.filter((w) => /\s/.test(w)));
    // (each once: a `-c` script is also a word with spaces)
    for (const script of new Set(scripts)) {
      const said = netText(script, depth + 1);
      if (said) return said;
    }
    const said = redirected(targets);
    if (said) return said;
  }
  return null;
}

/**
 * guard's words: `guard`, `guard-cli` (npx, also `guard-cli@latest`), a path ending in either, or
 * guard's own `dist/cli/main.js`; also after `!` or `=` (a git alias: `alias.r='!guard recover'`).
 */
const isGuard = (word: string) => {
  const w = word.replace(/^.*[=!]/, '').replace(/@[^/]*$/, '');
  return (
    ['guard', 'guard-cli'].includes(path.basename(w)) || /guard[^/]*\/dist\/cli\/main\.js$/.test(w)
  );
};

function guardSubcommand(words: readonly string[], fed: readonly string[]): string | null {
  const at = words.findIndex(isGuard);
  if (at < 0) return null;
  const rest = [...words.slice(at + 1), ...fed];
  if (rest.includes('recover'))
    return "guard recover starts guard's journal again from the refs there are: refs deleted before it would be in no journal";
  if (rest.includes('log') && rest.some((w) => w === '--prune' || w.startsWith('--prune=')))
    return "guard log --prune deletes guard's checkpoints and records as guard's own word";
  return null;
}

const GUARD_FILES =
  /(^|[\s'"=/])\.git\/(guard(\/|$|\s|['"])|info\/guard-(journal|pinned)-seal)|refs\/guard(\/|$|\s)/;

/** The files that give commits other parents (`git gc` then deletes what lies behind them: adv6). */
const HISTORY_FILES = /\.git\/(shallow|info\/grafts)(?![\w.-])/;
/** Commands that write the file named last (or by `of=`), and `find ... -delete`. */
const WRITERS = ['tee', 'cp', 'dd', 'install', 'ln', 'sed', 'perl'];

/**
 * A simple command's words that hold spaces, read as scripts too: many commands run a word as one
 * (`watch '...'`, `find -exec sh -c '...'`, `ssh localhost '...'`, `parallel`), and refusing one
 * that only holds text costs a refusal, not a record. Not what only prints or names text: `echo`'s
 * and `printf`'s words (a shell fed them is read above) and git's messages (`commit -m "..."`).
 */
function textsOf(words: readonly string[]): string[] {
  const name = path.basename(words.find((w) => !/^\w+=/.test(w)) ?? '');
  if (name === 'echo' || name === 'printf') return [];
  const message = (i: number) =>
    name === 'git' &&
    (/^(-m|--message|-F)$/.test(words[i - 1] ?? '') || /^--message=/.test(words[i]!));
  return words.filter((w, i) => /\s/.test(w) && !message(i));
}

const HISTORY_WRITE =
  "a write to .git/shallow or .git/info/grafts: git reads the commits named there as having no parents, and git gc deletes what lies behind them (guard's checkpoints, committed work)";

/** What one simple command does to guard's records by hand (its words as the shell hands them on). */
function byHand(
  words: readonly string[],
  targets: readonly string[],
  whole: string,
): string | null {
  const cmd = words.find((w) => !/^\w+=/.test(w)) ?? '';
  const name = path.basename(cmd);
  const named = (re: RegExp) => words.some((w) => re.test(w));
  const written = (re: RegExp) =>
    (WRITERS.includes(name) && re.test(words.at(-1) ?? '')) ||
    words.some((w) => w.startsWith('of=') && re.test(w)) ||
    (name === 'tee' && named(re)) ||
    (name === 'find' && words.includes('-delete') && named(re));
  if (named(HISTORY_FILES) && (written(HISTORY_FILES) || name === 'mv')) return HISTORY_WRITE;
  // (refs fed on stdin: `git for-each-ref ... refs/guard/ | git update-ref --stdin`)
  if (name === 'git' && words.includes('update-ref') && words.includes('--stdin'))
    if (GUARD_FILES.test(whole)) return "git update-ref --stdin fed guard's refs deletes them";
  if (!named(GUARD_FILES)) return null;
  if (
    name === 'git' &&
    words.includes('update-ref') &&
    words.some((w) => w === '-d' || w === '--stdin')
  )
    return "git update-ref -d on refs/guard/ deletes guard's checkpoints and records";
  if (['rm', 'unlink', 'shred', 'truncate', 'mv', 'mkfifo'].includes(name))
    return `${name} on guard's own records (.git/guard/, refs/guard/, its journal's seal)`;
  if (targets.some((t) => GUARD_WRITTEN.test(t)))
    return "a redirection that writes over guard's own records (.git/guard/, its journal's seal)";
  if (name !== 'git' && (written(/\.git\/guard(\/|$)|guard-journal-seal/) || name === 'find'))
    return `${name} writing over guard's own records (.git/guard/, its journal's seal)`;
  return null;
}

const GUARD_WRITTEN = /\.git\/guard\/|guard-(journal|pinned)-seal/;

/** The command's output redirections (`>`, `>>`, `>|`, `&>`, in any of its simple commands). */
function redirected(targets: readonly string[]): string | null {
  if (targets.some((t) => HISTORY_FILES.test(t))) return HISTORY_WRITE;
  if (targets.some((t) => GUARD_WRITTEN.test(t)))
    return "a redirection that writes over guard's own records (.git/guard/, its journal's seal)";
  return null;
}
