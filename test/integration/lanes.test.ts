import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GuardError } from '../../src/core/errors.js';
import {
  findLane,
  listLanes,
  mainRepo,
  parseWorktrees,
  validateLaneName,
} from '../../src/git/lanes.js';
import { laneChanges, start } from '../../src/flows/lanes/lanes.js';
import { cleanupRepos, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

/** The contract `guard review` builds on: src/git/lanes.ts and laneChanges. */
describe('lanes API', () => {
  it('validateLaneName accepts the allowed alphabet and throws E_USAGE for the rest', () => {
    for (const ok of ['a', 'agent-7', 'fix_bug.2', 'A1', '0'])
      expect(() => validateLaneName(ok)).not.toThrow();
    for (const bad of [
      '',
      '-x',
      '.x',
      'a/b',
      'a\\b',
      'a..b',
      'x.lock',
      'x.',
      'a b',
      'é',
      'x'.repeat(101),
      'a\nb',
    ]) {
      let err: unknown;
      try {
        validateLaneName(bad);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(bad)).toBeInstanceOf(GuardError);
      expect((err as GuardError).code).toBe('E_USAGE');
      expect((err as GuardError).exitCode).toBe(2);
    }
  });

  it('parseWorktrees reads the -z porcelain format, main tree first', () => {
    const fields = [
      'worktree /r',
      'HEAD abc',
      'branch refs/heads/main',
      '',
      'worktree /r/.guard/lanes/a b',
      'HEAD def',
      'branch refs/heads/guard/a',
      'prunable gitdir file points to non-existent location',
      '',
    ];
    expect(parseWorktrees(fields)).toEqual([
      { path: '/r', head: 'abc', branch: 'refs/heads/main', bare: false },
      { path: '/r/.guard/lanes/a b', head: 'def', branch: 'refs/heads/guard/a', bare: false },
    ]);
  });

  it('mainRepo finds the main tree from inside a lane; findLane and listLanes describe lanes', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'big.txt': lines(200) });
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    const s = await start({ cwd: repo.dir, color: false, name: 'one' });
    const fromLane = await mainRepo(path.join(s.path));
    expect(fromLane.root).toBe(repo.dir);
    expect(fromLane.commonDir).toBe(path.join(repo.dir, '.git'));
    expect(await mainRepo(repo.dir)).toEqual(fromLane);

    const lane = await findLane(fromLane, 'one');
    expect(lane).toEqual({
      name: 'one',
      path: path.join(repo.dir, '.guard', 'lanes', 'one'),
      branch: 'guard/one',
      base,
      broken: false,
    });
    await expect(findLane(fromLane, 'two')).rejects.toMatchObject({
      code: 'E_NO_LANE',
      message: 'lane "two" does not exist',
      hint: 'guard lanes lists them',
    });

    repo.write('.guard/lanes/one/big.txt', lines(200, 'other'));
    const changes = await laneChanges(fromLane, lane);
    expect(changes).toMatchObject({
      filesChanged: 1,
      needsApproval: 1,
      head: changes.checkpoint!.commit,
    });
    expect(changes.files[0]).toMatchObject({
      path: 'big.txt',
      status: 'replace',
      existingLines: 200,
    });
    expect(repo.git(['show', `${changes.checkpoint!.ref}:big.txt`])).toBe(lines(200, 'other'));

    rmSync(lane.path, { recursive: true, force: true });
    expect(await listLanes(fromLane)).toEqual([{ ...lane, broken: true }]);
  });
});
