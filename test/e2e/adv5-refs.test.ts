import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  claudeHook,
  cleanEnv,
  claudeRepo,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';
import { refusedRepo } from './agent-shell.js';

/**
 * adv5 (docs/reliability/adv5.md): refs/guard/ as guard reads it without
 * for-each-ref (git/ref-list.ts) and as the net checks it (git/journal.ts
 * journalCheck), attacked so that a refused change's ref vanishes from
 * guard log, doctor or rewind without a word.
 */

afterAll(() => cleanupRepos());

/** A repository where guard refused one write (kept under refs/guard/rejected/), then wrote `after` more times. */
function withRejected(after: number): { repo: TestRepo; rejected: string } {
  const repo = makeRepo({ 'app.py': lines(200), 'notes.txt': 'n\n' });
  expect(repo.guard(['write', 'app.py'], { input: 'x\n' }).code).toBe(1);
  const [rejected] = repo.refs('refs/guard/rejected/');
  for (let i = 0; i < after; i++)
    expect(repo.guard(['write', 'notes.txt'], { input: `n${i}\n` }).code).toBe(0);
  return { repo, rejected: rejected! };
}

const doctorSays = (repo: TestRepo) => repo.guard(['doctor']);

describe('adv5: a refused change made to vanish from the ref store', () => {
  it("an old rejected ref (older than the journal's newest 64 tips) removed with update-ref -d: doctor FAILs, recover puts it back", () => {
    const { repo, rejected } = withRejected(40);
    repo.git(['update-ref', '-d', rejected]);
    const d = doctorSays(repo);
    // on 184ae15: doctor checked only the newest 64 of the journal, as every door does: all ok
    expect(d.code).toBe(1);
    expect(d.stdout).toContain(`FAIL  1 of guard's refs were removed outside guard (${rejected})`);
    expect(repo.guard(['recover']).code).toBe(0);
    expect(repo.refs('refs/guard/rejected/')).toEqual([rejected]);
    expect(doctorSays(repo).stdout).not.toMatch(/removed outside guard/);
  });

  it('an old rejected ref hidden by packed-refs whose lines are out of order under its "sorted" header (git and guard both binary-search it): doctor FAILs', () => {
    const { repo, rejected } = withRejected(40);
    repo.git(['pack-refs', '--all']);
    const f = path.join(repo.dir, '.git', 'packed-refs');
    const [header, ...rest] = readFileSync(f, 'utf8').split('\n').filter(Boolean);
    // its line moved first: every other ref is where a search looks for it
    const mine = rest.filter((l) => l.endsWith(` ${rejected}`));
    writeFileSync(f, [header, ...mine, ...rest.filter((l) => !mine.includes(l))].join('\n') + '\n');
    // git no longer finds it, and neither does guard log; HEAD still resolves
    expect(repo.refs('refs/guard/rejected/')).toEqual([]);
    expect(repo.git(['rev-parse', 'main']).trim()).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.guard(['log']).stdout).not.toContain(rejected.split('/').pop());
    const d = doctorSays(repo);
    // on 184ae15: all ok (the ref is older than the newest 64 the doors check)
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/of guard's refs were removed outside guard \(.*rejected/);
  });

  it('held: refs/guard/rejected a symlink to a folder elsewhere holding the ref: guard log shows what git shows', () => {
    const { repo, rejected } = withRejected(2);
    const name = rejected.split('/').pop()!;
    const away = path.join(outsideDir(), 'rejected');
    const here = path.join(repo.dir, '.git', 'refs', 'guard', 'rejected');
    renameSync(here, away);
    symlinkSync(away, here);
    const gitSees = repo.refs('refs/guard/rejected/');
    expect(gitSees).toEqual([rejected]);
    const log = repo.guard(['log']).stdout;
    expect(log.includes(name)).toBe(gitSees.includes(rejected));
  });

  it('held: a loose ref under refs/guard/ that is a symref, or a folder named like a record: log falls back to git and shows the rejected ref', () => {
    const { repo, rejected } = withRejected(2);
    const name = rejected.split('/').pop()!;
    repo.git(['symbolic-ref', 'refs/guard/checkpoints/zz', 'refs/heads/main']);
    mkdirSync(
      path.join(repo.dir, '.git', 'refs', 'guard', 'rejected', '99999999T999999Z-ffffffff'),
    );
    expect(repo.guard(['log']).stdout).toContain(name);
  });

  it('held: a packed-refs.lock left behind and every ref both loose and packed', () => {
    const { repo, rejected } = withRejected(2);
    const name = rejected.split('/').pop()!;
    repo.git(['pack-refs', '--all', '--no-prune']);
    writeFileSync(path.join(repo.dir, '.git', 'packed-refs.lock'), '');
    expect(repo.guard(['log']).stdout).toContain(name);
    const d = doctorSays(repo);
    expect(d.stdout).not.toMatch(/removed outside guard/);
  });

  it("guard log --prune --keep 0 --include-rejected run from the agent's Bash (CLAUDECODE=1): refused, the refused Write's ref and record stay", () => {
    const { repo, before } = refusedRepo();
    const agent = { CLAUDECODE: '1' };
    const r = repo.guard(['log', '--prune', '--keep', '0', '--include-rejected'], { env: agent });
    // on 184ae15: exit 0, "pruned 1 checkpoint, 1 rejected ref, 1 decision record"; the hook
    // allows the Bash call (no file changes) and doctor, reading guard's own "- REF" lines, is all ok
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/a person runs it, not an agent's command tool/);
    expect(repo.refs('refs/guard/rejected/')).toEqual(before);
    // a person's prune (no agent shell) is as before
    expect(repo.guard(['log', '--prune', '--keep', '0', '--include-rejected']).code).toBe(0);
    expect(repo.refs('refs/guard/rejected/')).toEqual([]);
  });

  // was a hole (adv5): the agent's shell was told apart only by the variables its harness sets
  // (CLAUDECODE=1), which the agent unsets in its own command; then guard's own removal was noted
  // in its journal and nothing said anything. Now the processes above guard are read too
  // (runtime/agent-ancestry.ts): the shell Claude Code started keeps CLAUDECODE=1 in the
  // environment it was started with, whatever the command unsets, and Claude Code itself is above
  // a shell that replaced itself (holes6). Each command is run as Claude Code's Bash runs it.
  it("guard log --prune run from the agent's Bash with CLAUDECODE unset (env -u, unset and eval, a script it wrote, exec under claude): refused, the refused Write's ref stays", () => {
    const repo = claudeRepo({ 'state.py': lines(270) });
    claudeHook(
      repo,
      's',
      'Write',
      { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
      'w1',
    );
    const before = repo.refs('refs/guard/rejected/');
    expect(before).toHaveLength(1);
    const g = `${process.execPath} ${CLI}`;
    const prune = `${g} log --prune --keep 0 --include-rejected`;
    // a "claude" whose shell replaces itself with one that has no CLAUDECODE
    const bin = outsideDir();
    symlinkSync('/bin/sh', path.join(bin, 'claude'));
    // as Claude Code 2.1.330 runs a Bash call: eval'd, then `pwd -P >| FILE` (so bash forks it)
    const asClaude = (command: string) =>
      `eval '${command.replace(/'/g, `'\\''`)}' < /dev/null && pwd -P >| ${path.join(bin, 'cwd')}`;
    const commands: Array<[string, string[], Record<string, string>]> = [
      `env -u CLAUDECODE ${prune}`,
      `unset CLAUDECODE; x="${g} log"; eval "$x --prune --keep 0 --include-rejected"`,
      `printf '%s\\n' 'unset CLAUDECODE' '${prune}' > p.sh && bash p.sh`,
      `sh -c "$(printf 'env -u CLAUDECODE %s' "${prune}")"`,
    ].map((c): [string, string[], Record<string, string>] => [
      'bash',
      ['-c', asClaude(c)],
      { CLAUDECODE: '1' },
    ]);
    // the shell itself replaced (exec) by one without CLAUDECODE: the harness above it is still there
    commands.push([
      path.join(bin, 'claude'),
      ['-c', `CLAUDECODE=1 sh -c 'exec env -u CLAUDECODE ${prune}'; exit $?`],
      {},
    ]);
    for (const [file, args, env] of commands) {
      const r = spawnSync(file, args, { cwd: repo.dir, env: cleanEnv(env), encoding: 'utf8' });
      // on main: exit 0, "pruned ... 1 rejected ref ..."
      expect(r.status, `${args.join(' ')}\n${r.stdout}${r.stderr}`).not.toBe(0);
      expect(r.stderr).toMatch(/a person runs it, not an agent's command tool/);
      expect(repo.refs('refs/guard/rejected/')).toEqual(before);
    }
  });
});
