import path from 'node:path';

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
 * the command's text, word by word in each simple command: a command built at run time (`eval`, a
 * variable holding `guard`) is not read, and the net still notices what it did at the next door,
 * except after `guard recover` (then only `guard ci` or a pushed copy of `refs/guard/*` would).
 */
export function netCommand(command: string): string | null {
  // a command substitution that names guard runs guard (`node $(which guard) recover`)
  const substituted = command.replace(/\$\(([^()]*)\)|`([^`]*)`/g, (m, a?: string, b?: string) =>
    wordsOf(a ?? b ?? '').some(isGuard) ? ' guard ' : m,
  );
  // (`echo recover | xargs guard`: the subcommand comes on stdin)
  const fed = /\bxargs\b/.test(command) ? wordsOf(command.replace(/[;&|\n()`]/g, ' ')) : [];
  for (const text of new Set([command, substituted]))
    for (const segment of text.split(/\$\(|[;&|\n()`]/)) {
      const words = wordsOf(segment);
      const said =
        guardSubcommand(words, words.includes('xargs') ? fed : []) ??
        byHand(segment, words, command);
      if (said) return said;
    }
  return null;
}

/**
 * A segment's words as the shell hands them on: quotes and backslashes inside a word removed
 * (`re""cover`, `rec\over`, `$'recover'`, `g''uard` are `recover` and `guard` to the shell; adv6).
 */
function wordsOf(segment: string): string[] {
  return segment
    .trim()
    .split(/\s+/)
    .map((w) => w.replace(/\$'/g, '').replace(/["'\\]/g, ''))
    .filter(Boolean);
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

function byHand(segment: string, words: readonly string[], whole: string): string | null {
  const cmd = words.find((w) => !/^\w+=/.test(w)) ?? '';
  const name = path.basename(cmd);
  const written = (re: RegExp) =>
    new RegExp(`>\\s*['"]?[^\\s'"]*(?:${re.source})`).test(segment) ||
    (WRITERS.includes(name) && re.test(words.at(-1) ?? '')) ||
    words.some((w) => w.startsWith('of=') && re.test(w)) ||
    (name === 'tee' && words.some((w) => re.test(w))) ||
    (name === 'find' && words.includes('-delete') && re.test(segment));
  if (HISTORY_FILES.test(segment) && (written(HISTORY_FILES) || name === 'mv'))
    return "a write to .git/shallow or .git/info/grafts: git reads the commits named there as having no parents, and git gc deletes what lies behind them (guard's checkpoints, committed work)";
  // (refs fed on stdin: `git for-each-ref ... refs/guard/ | git update-ref --stdin`)
  if (name === 'git' && words.includes('update-ref') && words.includes('--stdin'))
    if (GUARD_FILES.test(whole)) return "git update-ref --stdin fed guard's refs deletes them";
  if (!GUARD_FILES.test(segment)) return null;
  if (
    name === 'git' &&
    words.includes('update-ref') &&
    words.some((w) => w === '-d' || w === '--stdin')
  )
    return "git update-ref -d on refs/guard/ deletes guard's checkpoints and records";
  if (['rm', 'unlink', 'shred', 'truncate', 'mv', 'mkfifo'].includes(name))
    return `${name} on guard's own records (.git/guard/, refs/guard/, its journal's seal)`;
  if (/>\s*['"]?[^\s'"]*(\.git\/guard\/|guard-(journal|pinned)-seal)/.test(segment))
    return "a redirection that writes over guard's own records (.git/guard/, its journal's seal)";
  if (name !== 'git' && (written(/\.git\/guard(\/|$)|guard-journal-seal/) || name === 'find'))
    return `${name} writing over guard's own records (.git/guard/, its journal's seal)`;
  return null;
}
