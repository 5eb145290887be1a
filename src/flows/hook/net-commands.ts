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
  for (const segment of command.split(/\$\(|[;&|\n()`]/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/^['"]+|['"]+$/g, ''))
      .filter(Boolean);
    const said = guardSubcommand(words) ?? byHand(segment, words, command);
    if (said) return said;
  }
  return null;
}

/** guard's words: `guard`, `guard-cli` (npx), a path ending in either, or guard's own `dist/cli/main.js`. */
const isGuard = (w: string) =>
  ['guard', 'guard-cli'].includes(path.basename(w)) || /guard[^/]*\/dist\/cli\/main\.js$/.test(w);

function guardSubcommand(words: readonly string[]): string | null {
  const at = words.findIndex(isGuard);
  if (at < 0) return null;
  const rest = words.slice(at + 1);
  if (rest.includes('recover'))
    return "guard recover starts guard's journal again from the refs there are: refs deleted before it would be in no journal";
  if (rest.includes('log') && rest.some((w) => w === '--prune' || w.startsWith('--prune=')))
    return "guard log --prune deletes guard's checkpoints and records as guard's own word";
  return null;
}

const GUARD_FILES =
  /(^|[\s'"=/])\.git\/(guard(\/|$|\s|['"])|info\/guard-(journal|pinned)-seal)|refs\/guard(\/|$|\s)/;

function byHand(segment: string, words: readonly string[], whole: string): string | null {
  const cmd = words.find((w) => !/^\w+=/.test(w)) ?? '';
  const name = path.basename(cmd);
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
  return null;
}
