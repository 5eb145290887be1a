import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision as decision,
  claudeHook,
  cleanupRepos,
  lines,
  makeRepo,
} from '../helpers.js';

/**
 * adv6 (docs/reliability/adv6.md): the shell net's refusals (flows/hook/net-commands.ts) through
 * `guard hook claude`, spelled as the shell reads them; unit/net-commands.test.ts has the rest.
 */

afterAll(cleanupRepos);

const bash = (command: string) => {
  const repo = makeRepo({ 'app.py': lines(20) });
  return claudeHook(repo, 's1', 'Bash', { command }, 'b1');
};

describe('adv6: the shell net, other spellings', () => {
  it.each([
    // on main each ran: guard recover then starts the journal again from the refs there are
    'git update-ref -d refs/guard/sessions/claude/s1/chain; guard re""cover',
    'node $(which guard) recover',
    "git config alias.r '!guard recover' && git r",
    // on main: one line in .git/shallow, gc, the line taken out again: the session's checkpoints
    // gone and no door with anything to notice
    'git rev-parse refs/guard/sessions/claude/s1/chain > .git/shallow && git gc --prune=now && rm .git/shallow',
  ])('refused before it runs: %s', (command) => {
    const r = bash(command);
    expect(r.code).toBe(0);
    expect(decision(r)).toBe('deny');
  });
});
