/**
 * git/ref-list.ts reads refs/guard/ from packed-refs and the loose folders
 * without a process (guard log and doctor at 100,000 refs, issue 22). Every
 * answer here is held to git's own `for-each-ref` on the same repository:
 * packed and loose refs mixed, a loose ref that shadows a packed one, a
 * deleted packed ref, prefixes that sort next to each other; and each store
 * only git can read (reftable, an unsorted packed-refs, a symbolic or broken
 * loose ref, a lock file) gives null, so the caller asks git.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRefStore } from '../../src/git/ref-list.js';
import { cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

afterEach(cleanupRepos);

const forEachRef = (repo: TestRepo, prefix: string) =>
  repo
    .git(['for-each-ref', '--format=%(refname) %(objectname)', prefix])
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [ref, oid] = l.split(' ');
      return { ref: ref!, oid: oid! };
    });

/** A repository with `n` refs under each of refs/guard/{checkpoints,decisions}/ (and their neighbours), packed. */
function manyRefs(n: number): { repo: TestRepo; head: string; other: string } {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const head = repo.git(['rev-parse', 'HEAD']).trim();
  repo.write('a.txt', 'b\n');
  repo.git(['commit', '-qam', 'two']);
  const other = repo.git(['rev-parse', 'HEAD']).trim();
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `20261128T${String(100000 + i).slice(1)}Z-${i.toString(16).padStart(8, '0')}`;
    lines.push(`create refs/guard/checkpoints/${id} ${head}`);
    lines.push(`create refs/guard/decisions/${id} ${i % 2 ? head : other}`);
    lines.push(`create refs/guard/sessions/claude/s${i % 3}/${id} ${head}`);
  }
  lines.push(`create refs/guard/checkpoints-not/x ${head}`, `create refs/guard/checkpoint ${head}`);
  repo.git(['update-ref', '--stdin'], { input: lines.join('\n') + '\n' });
  repo.git(['pack-refs', '--all', '--prune']);
  return { repo, head, other };
}

function expectSameAsGit(repo: TestRepo, prefixes: string[]): Promise<void> {
  return readRefStore(path.join(repo.dir, '.git')).then((store) => {
    expect(store).not.toBeNull();
    for (const p of prefixes) {
      const git = forEachRef(repo, p);
      expect(store!.count(p), p).toBe(git.length);
      expect(store!.all(p), p).toEqual(git);
      const desc = [...git].reverse();
      for (const n of [0, 1, 3, git.length, git.length + 5])
        expect(store!.newest(p, n), `${p} ${n}`).toEqual(desc.slice(0, n));
    }
  });
}

const PREFIXES = [
  'refs/guard/',
  'refs/guard/checkpoints/',
  'refs/guard/decisions/',
  'refs/guard/rejected/',
  'refs/guard/sessions/',
  'refs/guard/sessions/claude/s1/',
];

describe('refs/guard/ from the ref store files (git/ref-list.ts)', () => {
  it('matches for-each-ref: packed, then loose ones added, moved, deleted', async () => {
    const { repo, head, other } = manyRefs(120);
    await expectSameAsGit(repo, PREFIXES);
    // loose: a newer one, one that shadows a packed ref with another commit, one in a new folder
    repo.git(['update-ref', 'refs/guard/checkpoints/20261129T000000Z-ffffffff', other]);
    repo.git(['update-ref', 'refs/guard/checkpoints/20261128T00010Z-0000000a', other]);
    repo.git(['update-ref', 'refs/guard/decisions/20261128T00005Z-00000005', other]);
    repo.git(['update-ref', 'refs/guard/rejected/20261128T000001Z-00000001', head]);
    repo.git(['update-ref', 'refs/guard/sessions/claude/new/20261128T000001Z-00000001', head]);
    // deleted: a packed one (git rewrites packed-refs) and one that was both loose and packed
    repo.git(['update-ref', '-d', 'refs/guard/checkpoints/20261128T00299Z-0000012b']);
    repo.git(['update-ref', '-d', 'refs/guard/decisions/20261128T00005Z-00000005']);
    await expectSameAsGit(repo, PREFIXES);
  });

  it('reads a repository with no packed-refs, and one with no refs/guard/ at all', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    await expectSameAsGit(repo, PREFIXES);
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    repo.git(['update-ref', 'refs/guard/checkpoints/20261128T000001Z-00000001', head]);
    repo.git(['update-ref', 'refs/guard/checkpoints/20261128T000002Z-00000002', head]);
    await expectSameAsGit(repo, PREFIXES);
  });

  it('leaves to git every store it does not read as git wrote it', async () => {
    const cases: Array<[string, (repo: TestRepo, git: string) => void]> = [
      ['reftable', (_r, g) => mkdirSync(path.join(g, 'reftable'))],
      [
        'packed-refs without its sorted header',
        (_r, g) => {
          const f = path.join(g, 'packed-refs');
          writeFileSync(f, readFileSync(f, 'utf8').replace(/^#.*\n/, ''));
        },
      ],
      [
        'a symbolic loose ref',
        (_r, g) =>
          writeFileSync(path.join(g, 'refs/guard/checkpoints/20261130T000000Z-1'), 'ref: HEAD\n'),
      ],
      [
        'a broken loose ref',
        (_r, g) => writeFileSync(path.join(g, 'refs/guard/checkpoints/20261130T000000Z-1'), 'xx\n'),
      ],
      [
        'a lock file',
        (_r, g) =>
          writeFileSync(path.join(g, 'refs/guard/checkpoints/20261130T000000Z-1.lock'), 'x\n'),
      ],
    ];
    for (const [name, spoil] of cases) {
      const { repo } = manyRefs(3);
      const gitDir = path.join(repo.dir, '.git');
      mkdirSync(path.join(gitDir, 'refs/guard/checkpoints'), { recursive: true });
      expect(await readRefStore(gitDir), name).not.toBeNull();
      spoil(repo, gitDir);
      expect(await readRefStore(gitDir), name).toBeNull();
    }
  });
});
