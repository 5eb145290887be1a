/** What the tests of the agent's shell share (holes6, adv7, adv5-refs): Claude Code's Bash, played. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import { globalBin } from './branch-gate-shared.js';
import { claudeHook, claudeRepo, cleanEnv, lines, type TestRepo } from '../helpers.js';

let bin: string | undefined;

/**
 * Run `command` as Claude Code 2.1.330 runs a Bash call: `bash -c`, CLAUDECODE=1, eval'd, then
 * `pwd -P`; guard on PATH, as installed (git's reference-transaction hook starts it for a branch
 * move). `person: true`: a person's machine, where the prompt can open: the suite's own CI=true
 * is not passed on (guard would answer in auto mode whatever the ancestry says, and a
 * commit-prompt attack would test nothing).
 */
export function asClaudeBash(repo: TestRepo, command: string, opts: { person?: boolean } = {}) {
  bin ??= globalBin();
  const quoted = `'${command.replace(/'/g, `'\\''`)}'`;
  const env = cleanEnv({ CLAUDECODE: '1', PATH: `${bin}${path.delimiter}${process.env.PATH}` });
  if (opts.person) delete env.CI;
  return spawnSync('bash', ['-c', `eval ${quoted} < /dev/null && pwd -P >| /dev/null`], {
    cwd: repo.dir,
    env,
    encoding: 'utf8',
  });
}

/** A repository with one Write refused by the hook (its rejected ref is what a prune would take). */
export function refusedRepo(): { repo: TestRepo; before: string[] } {
  const repo = claudeRepo({ 'state.py': lines(270) });
  const w = claudeHook(
    repo,
    's',
    'Write',
    { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
    'w1',
  );
  expect(w.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
  const before = repo.refs('refs/guard/rejected/');
  expect(before).toHaveLength(1);
  return { repo, before };
}
