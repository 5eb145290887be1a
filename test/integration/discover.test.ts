/**
 * openRepo finds the work tree from the file system in the plain case
 * (git/discover.ts) and asks `git rev-parse` otherwise. Every case here is
 * held to rev-parse's own answer (revParseRepo): where the file system's
 * answer is given it must be rev-parse's, and each unusual case (git's
 * variables, a bare repository, inside .git, core.worktree, a gitfile of a
 * submodule or a separate git dir, a symlinked .git, includes, extensions,
 * another owner, a broken HEAD) must leave it to git.
 */
import { spawnSync } from 'node:child_process';
import {
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GuardError } from '../../src/core/errors.js';
import { repoFromFiles } from '../../src/git/discover.js';
import { discoverRepo as revParseRepo, openRepo } from '../../src/git/repo.js';

const saved = { ...process.env };
beforeEach(() => {
  // as the hook runs: no variable of git's own (a test run inside a git hook has some)
  for (const k of Object.keys(process.env)) if (k.startsWith('GIT_')) delete process.env[k];
  process.env.GIT_CONFIG_GLOBAL = '/dev/null';
  process.env.GIT_CONFIG_NOSYSTEM = '1';
});
afterEach(() => {
  for (const k of Object.keys(process.env)) if (k.startsWith('GIT_')) delete process.env[k];
  for (const [k, v] of Object.entries(saved)) if (k.startsWith('GIT_')) process.env[k] = v;
});

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
};

function scratch(): string {
  return realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-discover-')));
}

function repoIn(dir: string): string {
  mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'a');
  return dir;
}

/** What git says, or the error's code. */
async function gitSays(cwd: string): Promise<unknown> {
  return revParseRepo(cwd).catch((e: unknown) => (e instanceof GuardError ? e.code : String(e)));
}

/** The file system's answer is given, and is git's. */
async function found(cwd: string): Promise<void> {
  const fast = repoFromFiles(cwd);
  expect(fast, cwd).not.toBeNull();
  expect(fast).toEqual(await gitSays(cwd));
  expect(await openRepo(cwd)).toEqual(fast);
}

/** Left to git (and openRepo then answers what git says). */
async function leftToGit(cwd: string): Promise<void> {
  expect(repoFromFiles(cwd), cwd).toBeNull();
  expect(
    await openRepo(cwd).catch((e: unknown) => (e instanceof GuardError ? e.code : String(e))),
  ).toEqual(await gitSays(cwd));
}

describe('openRepo: the file system where it is plain, rev-parse otherwise', () => {
  it('a repository, its subfolders, a linked worktree and its subfolders, through a symlink: found, as git says', async () => {
    const top = scratch();
    const repo = repoIn(path.join(top, 'repo'));
    await found(repo);
    await found(path.join(repo, 'a'));
    await found(path.join(repo, 'a', 'b'));
    // the subfolder's shared git dir is the repository's (rev-parse prints it relative to the subfolder)
    expect((await revParseRepo(path.join(repo, 'a', 'b'))).commonDir).toBe(path.join(repo, '.git'));
    git(repo, 'worktree', 'add', '-q', path.join(top, 'wt'));
    mkdirSync(path.join(top, 'wt', 'sub'));
    await found(path.join(top, 'wt'));
    await found(path.join(top, 'wt', 'sub'));
    expect(repoFromFiles(path.join(top, 'wt'))?.commonDir).toBe(path.join(repo, '.git'));
    symlinkSync(top, path.join(top, '..', path.basename(top) + '-link'));
    await found(path.join(top + '-link', 'repo', 'a'));
    await found(path.join(top + '-link', 'wt', 'sub'));
    // a repository inside another's work tree is its own
    const inner = repoIn(path.join(repo, 'a', 'inner'));
    await found(path.join(inner, 'a'));
  });

  it("git's own variables: left to git", async () => {
    const top = scratch();
    const repo = repoIn(path.join(top, 'repo'));
    const other = repoIn(path.join(top, 'other'));
    for (const [k, v] of [
      ['GIT_DIR', path.join(other, '.git')],
      ['GIT_WORK_TREE', other],
      ['GIT_COMMON_DIR', path.join(other, '.git')],
      ['GIT_CEILING_DIRECTORIES', path.join(repo, 'a')],
      ['GIT_DISCOVERY_ACROSS_FILESYSTEM', '1'],
      ['GIT_CONFIG_PARAMETERS', "'core.worktree'='/'"],
      ['GIT_SOMETHING_NEW', '1'],
    ] as const) {
      process.env[k] = v;
      await leftToGit(path.join(repo, 'a', 'b'));
      delete process.env[k];
    }
    await found(path.join(repo, 'a', 'b'));
    // and the ones that only change how git talks or logs are plain
    process.env.GIT_SSL_CAINFO = '/etc/ssl/certs/ca-certificates.crt';
    process.env.GIT_PS1_SHOWDIRTYSTATE = '1';
    // what git sets for a commit's hooks
    process.env.GIT_INDEX_FILE = path.join(repo, '.git', 'index');
    process.env.GIT_PREFIX = 'a/';
    await found(path.join(repo, 'a', 'b'));
  });

  it('inside .git, a bare repository, no repository at all: left to git', async () => {
    const top = scratch();
    const repo = repoIn(path.join(top, 'repo'));
    await leftToGit(path.join(repo, '.git'));
    await leftToGit(path.join(repo, '.git', 'refs'));
    await leftToGit(path.join(repo, '.git', 'objects'));
    git(top, 'init', '-q', '--bare', 'bare.git');
    await leftToGit(path.join(top, 'bare.git'));
    mkdirSync(path.join(top, 'plain'));
    await leftToGit(path.join(top, 'plain'));
  });

  it('core.worktree, core.bare, an include, an extension, a newer format: left to git', async () => {
    const top = scratch();
    const cases: [string, string][] = [
      ['worktree', `[core]\n\tworktree = ${top}\n`],
      ['bare', '[core]\n\tbare = true\n'],
      ['bare-quoted', '[core]\n\tbare = "true"\n'],
      ['bare-key', '[core]\n\tbare\n'],
      ['include', `[include]\n\tpath = ${path.join(top, 'extra')}\n`],
      ['ext', '[extensions]\n\tworktreeConfig = true\n'],
      ['format', '[core]\n\trepositoryformatversion = 2\n'],
    ];
    writeFileSync(path.join(top, 'extra'), '[core]\n\tworktree = /\n');
    for (const [name, config] of cases) {
      const repo = repoIn(path.join(top, name));
      appendFileSync(path.join(repo, '.git', 'config'), config);
      await leftToGit(path.join(repo, 'a'));
    }
    // and core.bare = false (every repository's) is plain
    await found(path.join(repoIn(path.join(top, 'plain')), 'a'));
  });

  it("a key on its section's header line ([core] worktree = ...): left to git (adv2)", async () => {
    // git reads the rest of a header's line as a variable; main's file check read keys only at a
    // line's start and answered the cwd's tree while git's commands used the other one
    const top = scratch();
    mkdirSync(path.join(top, 'elsewhere'));
    const cases: [string, string][] = [
      ['worktree', `[core] worktree = ${path.join(top, 'elsewhere')}\n`],
      ['worktree-tight', `[core]worktree=${path.join(top, 'elsewhere')}\n`],
      ['bare', '[core] bare = true\n'],
      ['format', '[core] repositoryformatversion = 2\n'],
    ];
    for (const [name, config] of cases) {
      const repo = repoIn(path.join(top, name));
      appendFileSync(path.join(repo, '.git', 'config'), config);
      await leftToGit(path.join(repo, 'a'));
    }
    expect(await gitSays(path.join(top, 'worktree', 'a'))).toMatchObject({
      root: path.join(top, 'elsewhere'),
    });
  });

  it('a folder whose name has line breaks that spell another repository: refused, not that repository (adv2)', async () => {
    // rev-parse prints one path a line; main read "x", "victim", "victim/.git" from one folder's
    // name and would keep its records in the victim's git dir (the plugin always asks rev-parse)
    const top = scratch();
    const victim = repoIn(path.join(top, 'victim'));
    const evil = path.join(top, `x\n${victim}\n${path.join(victim, '.git')}\n`);
    repoIn(evil);
    expect(await gitSays(path.join(evil, 'a'))).toBe('E_NOT_A_REPO');
    // the file system's answer has the real paths
    expect(repoFromFiles(path.join(evil, 'a'))).toEqual({
      root: evil,
      gitDir: path.join(evil, '.git'),
      commonDir: path.join(evil, '.git'),
    });
  });

  it('a submodule-like gitfile, a separate git dir, a symlinked .git, a broken HEAD: left to git', async () => {
    const top = scratch();
    const sep = path.join(top, 'sep');
    mkdirSync(sep);
    git(sep, 'init', '-q', '--separate-git-dir', path.join(top, 'sep.git'));
    await leftToGit(sep);
    const linked = repoIn(path.join(top, 'linked'));
    renameSync(path.join(linked, '.git'), path.join(top, 'linked.git'));
    symlinkSync(path.join(top, 'linked.git'), path.join(linked, '.git'));
    await leftToGit(path.join(linked, 'a'));
    const broken = repoIn(path.join(top, 'broken'));
    writeFileSync(path.join(broken, '.git', 'HEAD'), 'garbage\n');
    await leftToGit(path.join(broken, 'a'));
    const odd = repoIn(path.join(top, 'odd'));
    writeFileSync(path.join(odd, 'a', '.git'), 'gitdir: ../.git\nsomething else\n');
    await leftToGit(path.join(odd, 'a', 'b'));
  });

  it("a worktree's commondir with a space after its path, its gitfile with a CR: git's answer, not the path trimmed (adv3)", async () => {
    // git strips only line ends from commondir: "../.. " is the folder ".. " beside the worktree's
    // git dir, a decoy the agent made; the file check trimmed it to the real common dir, so guard's
    // journal and hooks stayed in .git while every git command's refs and objects went to the decoy
    const top = scratch();
    const main = repoIn(path.join(top, 'main'));
    git(main, 'worktree', 'add', '-q', path.join(top, 'wt'));
    const wtGit = path.join(main, '.git', 'worktrees', 'wt');
    writeFileSync(path.join(wtGit, 'commondir'), '../.. \n');
    repoIn(path.join(top, 'decoy'));
    renameSync(path.join(top, 'decoy', '.git'), path.join(main, '.git', 'worktrees', '.. '));
    expect(await gitSays(path.join(top, 'wt'))).toEqual({
      root: path.join(top, 'wt'),
      gitDir: wtGit,
      commonDir: path.join(main, '.git', 'worktrees', '.. '),
    });
    expect(await openRepo(path.join(top, 'wt'))).toEqual(await gitSays(path.join(top, 'wt')));
    // and with CRLF, as git strips it
    writeFileSync(path.join(wtGit, 'commondir'), '../..\r\n');
    await found(path.join(top, 'wt'));
    // the gitfile the same way: a CR before its line end is no part of the path, though a folder
    // "wt\r" (a copy of the worktree's git dir, the agent's) is there
    cpSync(wtGit, wtGit + '\r', { recursive: true });
    writeFileSync(path.join(top, 'wt', '.git'), `gitdir: ${wtGit}\r\n`);
    await found(path.join(top, 'wt'));
  });

  it.runIf(process.geteuid?.() === 0)(
    "another user's repository (git's safe.directory check): left to git, which refuses it",
    async () => {
      const top = scratch();
      const repo = repoIn(path.join(top, 'repo'));
      chownSync(path.join(repo, '.git'), 4242, 4242);
      await leftToGit(path.join(repo, 'a'));
      expect(await gitSays(path.join(repo, 'a'))).not.toHaveProperty('root');
      chownSync(path.join(repo, '.git'), 0, 0);
      chownSync(repo, 4242, 4242);
      await leftToGit(path.join(repo, 'a'));
    },
  );
});
