import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  claudeHook,
  claudeRepo,
  cleanEnv,
  cleanupRepos,
  lines,
  type TestRepo,
} from '../helpers.js';

/**
 * holes6 (docs/reliability/holes6.md): issue 20's holes left open after holes5 and adv5, each
 * performed through the real doors: `guard hook claude` with Claude Code's payload shapes, the
 * built CLI, real git, and shell commands run as Claude Code's Bash runs them.
 */

afterAll(() => cleanupRepos());

const G = `${process.execPath} ${CLI}`;

/** Run `command` as Claude Code 2.1.330 runs a Bash call: `bash -c`, CLAUDECODE=1, eval'd, then `pwd -P`. */
export function asClaudeBash(repo: TestRepo, command: string) {
  const quoted = `'${command.replace(/'/g, `'\\''`)}'`;
  return spawnSync('bash', ['-c', `eval ${quoted} < /dev/null && pwd -P >| /dev/null`], {
    cwd: repo.dir,
    env: cleanEnv({ CLAUDECODE: '1' }),
    encoding: 'utf8',
  });
}

describe("holes6: guard's own evidence reset by a command the hook cannot read", () => {
  it('guard recover eval-ed with CLAUDECODE unset, after a ref deleted and the journal written again from for-each-ref: refused, doctor still FAILs', () => {
    const repo = claudeRepo({ 'state.py': lines(270) });
    const w = claudeHook(
      repo,
      's',
      'Write',
      { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
      'w1',
    );
    expect(w.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
    const [rejected] = repo.refs('refs/guard/rejected/');
    const command = [
      'unset CLAUDECODE',
      'r=$(git for-each-ref --format="%(refname)" refs/guard/rejected/)',
      'u="git update-ref"; $u -d "$r"',
      'git for-each-ref --format="%(objectname) %(refname)" refs/guard/ > .git/guard/journal',
      `c="${G} rec"; eval "\${c}over"`,
    ].join('; ');
    const r = asClaudeBash(repo, command);
    // on main: recover starts the journal again from the refs there are and exits 0; doctor is content
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/a person runs it, not an agent's command tool/);
    const d = repo.guard(['doctor']);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/rewritten outside guard/);
    // a person's recover (no agent above it) runs: the person has seen doctor's word first
    expect(repo.guard(['recover']).code).toBe(0);
    expect(rejected).toBeDefined();
  });
});
