/**
 * commonDirOf finds a repository's git dir by files (the journal's hot path)
 * and must agree with git: a stray `.git` folder above a folder that is not
 * a repository (a /tmp/.git that a tool left) is not a repository, and the
 * journal must never be written into it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commonDirOf } from '../../src/git/journal.js';

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
};
const saved = { ...process.env };
afterEach(() => {
  for (const k of ['GIT_DIR', 'GIT_COMMON_DIR', 'GIT_CEILING_DIRECTORIES']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('commonDirOf', () => {
  it('a stray .git folder above a plain folder is not a repository', () => {
    const top = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-cd-')));
    mkdirSync(path.join(top, '.git', 'guard'), { recursive: true }); // what a tool once left in /tmp
    mkdirSync(path.join(top, 'plain', 'deep'), { recursive: true });
    expect(commonDirOf(path.join(top, 'plain', 'deep'))).toBeNull();
  });

  it('agrees with git in a repository, a subfolder and a linked worktree', () => {
    const top = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-cd-')));
    const repo = path.join(top, 'repo');
    mkdirSync(path.join(repo, 'sub'), { recursive: true });
    git(repo, 'init', '-q');
    git(
      repo,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@t',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'a',
    );
    expect(commonDirOf(path.join(repo, 'sub'))).toBe(path.join(repo, '.git'));
    git(repo, 'worktree', 'add', '-q', path.join(top, 'wt'));
    expect(commonDirOf(path.join(top, 'wt'))).toBe(
      path.resolve(repo, git(path.join(top, 'wt'), 'rev-parse', '--git-common-dir')),
    );
  });

  it('stops at GIT_CEILING_DIRECTORIES as git does', () => {
    const top = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-cd-')));
    git(top, 'init', '-q');
    mkdirSync(path.join(top, 'a', 'b'), { recursive: true });
    expect(commonDirOf(path.join(top, 'a', 'b'))).toBe(path.join(top, '.git'));
    process.env.GIT_CEILING_DIRECTORIES = path.join(top, 'a');
    expect(commonDirOf(path.join(top, 'a', 'b'))).toBeNull();
    expect(
      spawnSync('git', ['rev-parse', '--git-dir'], { cwd: path.join(top, 'a', 'b') }).status,
    ).not.toBe(0);
  });
});
