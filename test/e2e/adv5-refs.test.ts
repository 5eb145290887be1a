import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, outsideDir, type TestRepo } from '../helpers.js';

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
});
