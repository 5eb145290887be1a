import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision,
  claudeHook,
  claudeRepo,
  cleanupRepos,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

/**
 * adv4 (docs/reliability/adv4.md): the day's base of `guard write` under a
 * path-derived name (refs/guard/write-base/<day>/f/<hash>/...), attacked
 * with refs the agent can write. Three writes that each take 50 of 400
 * lines are allowed; the fourth, 200 of 400 against the day's base, needs
 * approval (exit 1). An agent that removes, moves or plants base refs
 * between writes must not reset that sum.
 */

afterAll(() => cleanupRepos());

const src = (n: number) =>
  Array.from({ length: n }, (_, i) => `def f${i}(a, b):\n    return a * ${i} + b\n`).join('');

function write(repo: TestRepo, n: number): number {
  return repo.guardJson(['write', 'app.py'], { input: src(n) }).code;
}

const baseRefs = (repo: TestRepo) =>
  repo
    .git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/guard/write-base/'])
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ') as [string, string]);

/** Four writes down from 200 functions, `between` run after each: the fourth's exit code. */
function steps(between: (repo: TestRepo) => void): { repo: TestRepo; codes: number[] } {
  const repo = makeRepo({ 'app.py': src(200) });
  const codes: number[] = [];
  for (const n of [175, 150, 125, 100]) {
    codes.push(write(repo, n));
    between(repo);
  }
  return { repo, codes };
}

describe('adv4: the day base of guard write under refs the agent can write', () => {
  it('untouched: the fourth small write adds up to a replace and needs approval', () => {
    expect(steps(() => {}).codes).toEqual([0, 0, 0, 1]);
  });

  it('the base refs removed and their commits pruned (reflog expire, gc --prune=now): the next write is refused, nothing more is lost', () => {
    const { repo, codes } = steps((r) => {
      for (const [ref] of baseRefs(r)) r.git(['update-ref', '-d', ref]);
      r.git(['reflog', 'expire', '--all', '--expire=now']);
      r.git(['gc', '-q', '--prune=now']);
    });
    // on 89e52bf: 0, 0, 0, 0 (each write a fresh first write of the day: 200 -> 100 functions)
    expect(codes[0]).toBe(0);
    expect(codes.slice(1)).toEqual([1, 1, 1]);
    expect(repo.read('app.py')).toBe(src(175));
    const again = repo.guardJson(['write', 'app.py'], { input: src(150) });
    expect(again.json.error?.message).toMatch(
      /record of app\.py as guard write first saw it today is gone/,
    );
  });

  it('the base refs removed after every write (git update-ref -d): the writes still add up', () => {
    const { codes } = steps((repo) => {
      for (const [ref] of baseRefs(repo)) repo.git(['update-ref', '-d', ref]);
    });
    expect(codes).toEqual([0, 0, 0, 1]);
  });

  it('the base ref moved to the file as it is now: the writes still add up', () => {
    const { codes } = steps((repo) => {
      repo.git(['add', 'app.py']);
      const tree = repo.git(['write-tree']).trim();
      for (const [ref, oid] of baseRefs(repo)) {
        const msg = repo.git(['cat-file', 'commit', oid]).split('\n\n').slice(1).join('\n\n');
        const now = repo.git(['commit-tree', tree, '-p', 'HEAD', '-m', msg.trim()]).trim();
        repo.git(['update-ref', ref, now]);
      }
    });
    expect(codes).toEqual([0, 0, 0, 1]);
  });

  it("an earlier-looking base planted beside guard's, holding the file as it is now: the writes still add up", () => {
    const { codes } = steps((repo) => {
      repo.git(['add', 'app.py']);
      const tree = repo.git(['write-tree']).trim();
      for (const [ref, oid] of baseRefs(repo)) {
        const msg = repo
          .git(['cat-file', 'commit', oid])
          .split('\n\n')
          .slice(1)
          .join('\n\n')
          .replace(/"time":"[^"]*"/, '"time":"2000-01-01T00:00:00.000Z"');
        const fake = repo.git(['commit-tree', tree, '-p', 'HEAD', '-m', msg.trim()]).trim();
        repo.git(['update-ref', `${path.posix.dirname(ref)}/00000000T000000Z-00000000`, fake]);
      }
    });
    expect(codes).toEqual([0, 0, 0, 1]);
  });

  it('a ref of another name in the day folder (the listing path) and the bases removed: the writes still add up', () => {
    const { codes } = steps((repo) => {
      const refs = baseRefs(repo);
      for (const [ref] of refs) repo.git(['update-ref', '-d', ref]);
      const day = refs[0]?.[0].split('/').slice(0, 4).join('/');
      if (day) repo.git(['update-ref', `${day}/x`, 'HEAD']);
    });
    expect(codes).toEqual([0, 0, 0, 1]);
  });

  it('the base refs packed with an unsorted packed-refs claiming sorted, loose ones removed: the writes still add up', () => {
    const { codes } = steps((repo) => {
      repo.git(['pack-refs', '--all']);
      const f = path.join(repo.dir, '.git', 'packed-refs');
      const ls = readFileSync(f, 'utf8').split('\n');
      const head = ls.shift()!;
      // reversed: a binary search over it finds nothing under the folder
      writeFileSync(f, [head, ...ls.filter(Boolean).reverse()].join('\n') + '\n');
    });
    expect(codes).toEqual([0, 0, 0, 1]);
  });

  // was a hole (holes5): a `- REF` line is guard's word that it removed REF itself (guard log
  // --prune); written by hand beside a `git update-ref -d`, the base was gone from both and the next
  // write started a new sum. Lines past the journal's seal are not guard's (git/journal-seal.ts).
  it('the base refs removed and a "- REF" line appended to the journal for each: the writes still add up', () => {
    const { codes } = steps((repo) => {
      const journal = path.join(repo.dir, '.git', 'guard', 'journal');
      for (const [ref] of baseRefs(repo)) {
        repo.git(['update-ref', '-d', ref]);
        appendFileSync(journal, `- ${ref}\n`);
      }
    });
    expect(codes).toEqual([0, 0, 0, 1]);
  });

  // was a hole (holes5): a journal that is not a regular file (a FIFO) was reported by doctor and
  // the hook, but guard write fell back to the ref files, which the agent removed: a new sum. Now
  // it refuses, as for bases whose commits are gone, until a person runs guard recover.
  it('a FIFO put in place of the journal and the base refs removed: the next write is refused, nothing more is lost', () => {
    const { repo, codes } = steps((repo) => {
      const journal = path.join(repo.dir, '.git', 'guard', 'journal');
      for (const [ref] of baseRefs(repo)) repo.git(['update-ref', '-d', ref]);
      rmSync(journal, { force: true });
      execFileSync('mkfifo', [journal]);
    });
    expect(codes).toEqual([0, 1, 1, 1]);
    expect(repo.read('app.py')).toBe(src(175));
    const again = repo.guardJson(['write', 'app.py'], { input: src(150) });
    expect(again.json.error?.message).toMatch(/guard's journal .* is not the one guard kept/);
  });

  it('the journal removed with the base refs (its seal says guard kept one): the next write is refused', () => {
    const { codes } = steps((repo) => {
      for (const [ref] of baseRefs(repo)) repo.git(['update-ref', '-d', ref]);
      rmSync(path.join(repo.dir, '.git', 'guard'), { recursive: true, force: true });
    });
    expect(codes).toEqual([0, 1, 1, 1]);
  });

  it('the journal rewritten from git for-each-ref after the base refs were removed: the next write is refused', () => {
    const { codes } = steps((repo) => {
      for (const [ref] of baseRefs(repo)) repo.git(['update-ref', '-d', ref]);
      const left = repo.git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/guard/']);
      writeFileSync(path.join(repo.dir, '.git', 'guard', 'journal'), left);
    });
    expect(codes).toEqual([0, 1, 1, 1]);
  });
});

describe("adv4: the journal's pre-named refs (`+ REF`)", () => {
  it('a record moved by hand and a "+ REF" line appended to hide it: doctor still says it was moved', () => {
    const repo = makeRepo({ 'app.py': src(200) });
    expect(write(repo, 190)).toBe(0);
    const ref = repo.refs('refs/guard/checkpoints/').at(-1)!;
    repo.git(['update-ref', ref, 'HEAD']);
    appendFileSync(path.join(repo.dir, '.git', 'guard', 'journal'), `+ ${ref}\n`);
    const r = repo.guard(['doctor']);
    expect(r.stdout + r.stderr).toMatch(/moved to another commit outside guard/);
  });
});

describe("adv4: the hook's session steps under refs the agent removes", () => {
  it("held: the session's refs removed after each Write: the next Write is refused, not a new sum", () => {
    const repo = claudeRepo({ 'app.py': src(200) });
    const out: Array<string | null> = [];
    [175, 150, 125, 100].forEach((n, k) => {
      const input = { file_path: path.join(repo.dir, 'app.py'), content: src(n) };
      const d = claudeDecision(claudeHook(repo, 's1', 'Write', input, `t${k}`));
      out.push(d);
      if (d !== 'deny') {
        repo.write('app.py', src(n));
        claudeHook(repo, 's1', 'Write', input, `t${k}`, true);
      }
      for (const ref of repo.refs('refs/guard/sessions/')) repo.git(['update-ref', '-d', ref]);
    });
    expect(out.slice(1)).toEqual(['deny', 'deny', 'deny']);
  });
});
