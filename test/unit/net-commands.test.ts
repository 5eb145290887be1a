import { describe, expect, it } from 'vitest';
import { netCommand } from '../../src/flows/hook/net-commands.js';

/** The hook's reading of shell commands that take down guard's own evidence (docs/reliability/holes5.md). */
describe('netCommand', () => {
  it.each([
    'guard recover',
    'npx guard-cli recover',
    'git update-ref -d refs/guard/checkpoints/x && guard recover',
    './node_modules/.bin/guard recover --json',
    'node /usr/lib/node_modules/guard-cli/dist/cli/main.js recover',
    'cd /tmp; "guard" recover',
    'guard log --prune --keep 0',
    'guard log --older-than 1d --prune',
    'echo $(guard recover)',
    'git update-ref -d refs/guard/checkpoints/20261128T000000Z-1',
    'git for-each-ref --format="delete %(refname)" refs/guard/ | git update-ref --stdin',
    'rm -rf .git/guard',
    'rm -f .git/info/guard-journal-seal',
    'rm -r .git/refs/guard',
    'mkfifo .git/guard/journal',
    'git for-each-ref refs/guard/ > .git/guard/journal',
    'true > .git/info/guard-journal-seal',
    'rm .git/info/guard-pinned-seal',
    'echo v1 0 x > .git/info/guard-pinned-seal',
  ])('refuses: %s', (c) => {
    expect(netCommand(c)).not.toBeNull();
  });

  it.each([
    'ls',
    'guard log',
    'guard doctor',
    'guard log --session s1',
    'git show --stat refs/guard/checkpoints/20261128T000000Z-1',
    'git log refs/guard/sessions/claude/x',
    'rm -f .git/guard-sessions/a/b/background-open',
    'cat .git/guard/journal',
    'npm run guard -- check',
    'grep -r recover src/',
    'echo guard > notes.txt; git commit -m "recover from crash"',
    'rm -rf node_modules',
  ])('lets through: %s', (c) => {
    expect(netCommand(c)).toBeNull();
  });
});
