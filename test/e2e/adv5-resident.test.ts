import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudePayload,
  claudeRepo,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';
import { endServersAfterEachTest, hook, residentEnv, warm } from './resident-shared.js';

/**
 * adv5 (docs/reliability/adv5.md): the resident hook (GUARD_RESIDENT=1) keeps each folder's
 * repository between calls (git/resident.ts). A call with GIT_* in its environment must be
 * judged as a fresh process judges it, and leave nothing to the next call.
 */

endServersAfterEachTest();

const decision = (stdout: string): string | null => {
  try {
    return JSON.parse(stdout).hookSpecificOutput?.permissionDecision ?? null;
  } catch {
    return null;
  }
};

const rm = (repo: TestRepo, id: string) =>
  claudePayload(repo, 's', 'Bash', { command: 'rm state.py' }, id);

/** Does the repository itself hold every checkpoint's commit? */
const kept = (repo: TestRepo) =>
  repo
    .git(['for-each-ref', '--format=%(objectname)', 'refs/guard/checkpoints/'])
    .split('\n')
    .filter(Boolean)
    .map((oid) => repo.gitRun(['cat-file', '-e', oid]).code === 0);

describe('adv5: the resident hook and GIT_* between calls', () => {
  it('a kept repository, then a call with GIT_OBJECT_DIRECTORY (GIT_DIR, GIT_WORK_TREE) naming a decoy, then a plain call: refused, refused, kept in the repository; all served', async () => {
    const repo = claudeRepo({ 'state.py': lines(270) });
    repo.write('state.py', lines(260, 'work'));
    const decoy = path.join(outsideDir(), 'objects');
    fs.mkdirSync(path.join(decoy, 'info'), { recursive: true });
    fs.writeFileSync(
      path.join(decoy, 'info', 'alternates'),
      path.join(repo.dir, '.git', 'objects') + '\n',
    );
    const other = makeRepo({ 'x.txt': 'x\n' });
    const r = residentEnv();
    await warm(repo, r);
    r.reset();
    expect(
      decision(hook(repo, rm(repo, 'b1'), { ...r.env, GIT_OBJECT_DIRECTORY: decoy }).stdout),
    ).toBe('deny');
    const away = { GIT_DIR: path.join(other.dir, '.git'), GIT_WORK_TREE: other.dir };
    expect(decision(hook(repo, rm(repo, 'b2'), { ...r.env, ...away }).stdout)).toBe('deny');
    expect(decision(hook(repo, rm(repo, 'b3'), r.env).stdout)).not.toBe('deny');
    expect(r.trace()).toBe('served\n'.repeat(3));
    const all = kept(repo);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every(Boolean)).toBe(true);
    expect(other.refs()).toEqual([]);
  });
});
