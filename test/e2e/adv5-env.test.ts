import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision,
  claudePayload,
  claudeRepo,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

/**
 * adv5 (docs/reliability/adv5.md): GIT_* variables in the hook's environment beyond adv3's
 * GIT_DIR and GIT_WORK_TREE. A Claude Code settings file's `env` (one file the agent can write)
 * reaches the hook; each test hands the hook the variable as that `env` would. The call is a
 * shell command that deletes 260 lines of uncommitted work (`rm state.py`): guard must keep a
 * checkpoint of it in the repository, or refuse.
 */

afterAll(() => cleanupRepos());

function withWork(): TestRepo {
  const repo = claudeRepo({ 'state.py': lines(270) });
  repo.write('state.py', lines(260, 'work'));
  return repo;
}

/**
 * The hook, with `env` in its environment. By a route the net does not read: the net already
 * refuses every call while a Claude Code settings file's `env` names a GIT_* variable (the
 * first test); the variable can reach a hook by other routes (a harness started with it, a
 * harness that loads a project's `.env` into its own environment, as Gemini CLI does).
 */
function rmCall(repo: TestRepo, env: Record<string, string>, id: string, settings = false) {
  if (settings) {
    mkdirSync(path.join(repo.dir, '.claude'), { recursive: true });
    writeFileSync(path.join(repo.dir, '.claude', 'settings.local.json'), JSON.stringify({ env }));
  }
  const r = repo.guard(['hook', 'claude'], {
    input: claudePayload(repo, 's', 'Bash', { command: 'rm state.py' }, id),
    env,
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

/** Every checkpoint ref guard holds, and whether the repository itself has its commit. */
const checkpoints = (repo: TestRepo) =>
  repo
    .git(['for-each-ref', '--format=%(objectname)', 'refs/guard/checkpoints/'])
    .split('\n')
    .filter(Boolean)
    .map((oid) => repo.gitRun(['cat-file', '-e', oid]).code === 0);

/** A folder of objects the agent owns, reading the repository's through alternates. */
function decoyObjects(repo: TestRepo): string {
  const decoy = path.join(outsideDir(), 'objects');
  mkdirSync(path.join(decoy, 'info'), { recursive: true });
  mkdirSync(path.join(decoy, 'pack'), { recursive: true });
  writeFileSync(
    path.join(decoy, 'info', 'alternates'),
    path.join(repo.dir, '.git', 'objects') + '\n',
  );
  return decoy;
}

describe('adv5: GIT_* in the hook environment', () => {
  it("held: GIT_OBJECT_DIRECTORY set in .claude/settings.local.json's env: the net refuses every call", () => {
    const repo = withWork();
    const r = rmCall(repo, { GIT_OBJECT_DIRECTORY: decoyObjects(repo) }, 'b0', true);
    expect(claudeDecision(r), r.stdout).toBe('deny');
    expect(r.stdout).toMatch(/GIT_OBJECT_DIRECTORY/);
  });

  it("GIT_OBJECT_DIRECTORY naming a folder of the agent's (alternates to the real objects): refused", () => {
    const repo = withWork();
    const r = rmCall(repo, { GIT_OBJECT_DIRECTORY: decoyObjects(repo) }, 'b1');
    // on 184ae15: allowed, its checkpoint's commit written into the decoy: the ref is in the
    // repository, its commit is not (rm -rf the folder and the checkpoint is gone)
    expect(claudeDecision(r), r.stdout).toBe('deny');
    expect(r.stdout).toMatch(/GIT_OBJECT_DIRECTORY in the environment/);
    expect(checkpoints(repo).every(Boolean)).toBe(true);
  });

  it('GIT_COMMON_DIR naming a bare copy of the repository: refused', () => {
    const repo = withWork();
    const copy = path.join(outsideDir(), 'copy.git');
    repo.git(['clone', '-q', '--bare', repo.dir, copy]);
    const r = rmCall(repo, { GIT_COMMON_DIR: copy }, 'b2');
    // on 184ae15: allowed, its checkpoint, records and journal in the copy
    expect(claudeDecision(r), r.stdout).toBe('deny');
    expect(r.stdout).toMatch(/GIT_COMMON_DIR in the environment/);
  });

  it("held: GIT_OBJECT_DIRECTORY naming the repository's own objects (through a symlink) is not refused", () => {
    const repo = withWork();
    const link = path.join(outsideDir(), 'objs');
    symlinkSync(path.join(repo.dir, '.git', 'objects'), link);
    const r = rmCall(repo, { GIT_OBJECT_DIRECTORY: link }, 'b3');
    expect(claudeDecision(r), r.stdout).not.toBe('deny');
    expect(checkpoints(repo).length).toBeGreaterThan(0);
    expect(checkpoints(repo).every(Boolean)).toBe(true);
  });

  it("held: GIT_ALTERNATE_OBJECT_DIRECTORIES and GIT_INDEX_FILE elsewhere: the checkpoint is the repository's", () => {
    const repo = withWork();
    const alt = makeRepo({ 'x.txt': 'x\n' });
    rmCall(repo, { GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(alt.dir, '.git', 'objects') }, 'b4');
    rmCall(repo, { GIT_INDEX_FILE: path.join(outsideDir(), 'index') }, 'b5');
    const kept = checkpoints(repo);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.every(Boolean)).toBe(true);
  });

  it("held: core.worktree handed to git through GIT_CONFIG_COUNT/KEY/VALUE (config from the environment): git takes it from the repository's config only, so the checkpoint is the repository's", () => {
    const repo = withWork();
    const elsewhere = makeRepo({ 'x.txt': 'x\n' });
    const env = {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.worktree',
      GIT_CONFIG_VALUE_0: elsewhere.dir,
    };
    rmCall(repo, env, 'b6');
    expect(checkpoints(repo)).toEqual([true]);
    expect(elsewhere.refs()).toEqual([]);
  });

  it("GIT_DIR naming a bare decoy while GIT_WORK_TREE names the real folder (the work tree matches, adv3's check passed): refused", () => {
    const repo = withWork();
    const decoy = path.join(outsideDir(), 'decoy.git');
    repo.git(['init', '-q', '--bare', decoy]);
    const r = rmCall(repo, { GIT_DIR: decoy, GIT_WORK_TREE: repo.dir }, 'b7');
    // on 184ae15: allowed, its checkpoint and records in the decoy, nothing in the repository
    expect(claudeDecision(r), r.stdout).toBe('deny');
    expect(r.stdout).toMatch(/GIT_DIR in the environment/);
  });
});
