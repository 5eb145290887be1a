import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeHook, claudeRepo, cleanupRepos, lines, type TestRepo } from '../helpers.js';

/**
 * adv7 (docs/reliability/adv7.md): the pinned file's seal (holes6) after the merge with adv6's
 * foreign-range cut (`sealedAppend(commonDir, fd, text, { file, of })`): past 32 foreign ranges
 * the foreign bytes must be cut out of `journal-pinned` as out of the journal, or the oldest
 * range's `- REF` would read as guard's own removal of a lane base.
 */

afterAll(() => cleanupRepos());

const pinned = (repo: TestRepo) => path.join(repo.dir, '.git', 'guard', 'journal-pinned');

/** Lane l1 started, then 40 writes: the lane's start far from the journal's newest 64 tips. */
function laneRepo(): { repo: TestRepo; lane: string } {
  const repo = claudeRepo({ 'app.py': lines(10), 'notes.txt': 'n\n' });
  expect(repo.guard(['start', 'l1']).code).toBe(0);
  const [lane] = repo.refs('refs/guard/lanes/');
  expect(lane).toBeDefined();
  for (let i = 0; i < 40; i++)
    expect(repo.guard(['write', 'notes.txt'], { input: `n${i}\n` }).code).toBe(0);
  return { repo, lane: lane! };
}

describe('adv7: the pinned file past 32 foreign ranges', () => {
  it('a lane base removed with "- REF" appended to journal-pinned, then 33 times a line appended and a lane started (a pinned note): refused, doctor FAILs, the foreign bytes are cut out', () => {
    const { repo, lane } = laneRepo();
    repo.git(['update-ref', '-d', lane]);
    for (const f of ['journal-pinned', 'journal'])
      appendFileSync(path.join(repo.dir, '.git', 'guard', f), `- ${lane}\n`);
    for (let i = 0; i < 33; i++) {
      appendFileSync(pinned(repo), `x${i}\n`);
      // each start notes its lane base in journal-pinned: a sealed note after a foreign range
      expect(repo.guard(['start', `m${i}`]).code).toBe(0);
    }
    // the 33rd range made the seal cut the foreign bytes out rather than forget the oldest
    const text = readFileSync(pinned(repo), 'utf8');
    expect(text).not.toContain(`- ${lane}`);
    expect(text).not.toMatch(/^x\d+$/m);
    const h = claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b1');
    expect(h.json?.hookSpecificOutput?.permissionDecision, h.stdout).toBe('deny');
    expect(h.stdout).toContain(lane);
    const d = repo.guard(['doctor']);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(new RegExp(`removed outside guard .*${lane}`));
    // a person's recover puts the lane base back
    expect(repo.guard(['recover']).code).toBe(0);
    expect(repo.refs('refs/guard/lanes/')).toContain(lane);
  });

  it('held: 33 foreign lines with no "- REF" among them: cut out, the lanes read as before, doctor quiet after', () => {
    const { repo } = laneRepo();
    for (let i = 0; i < 33; i++) {
      appendFileSync(pinned(repo), `x${i}\n`);
      expect(repo.guard(['start', `m${i}`]).code).toBe(0);
    }
    expect(readFileSync(pinned(repo), 'utf8')).not.toMatch(/^x\d+$/m);
    expect(repo.refs('refs/guard/lanes/')).toHaveLength(34);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });
});
