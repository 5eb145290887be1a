import { createHash } from 'node:crypto';
import { appendFileSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, makeRepo, outsideDir, type TestRepo } from '../helpers.js';

/**
 * adv5 (docs/reliability/adv5.md): `guard write`'s day base
 * (refs/guard/write-base/<day>/f/<16 hex of work tree and path>/...), attacked
 * where adv4 did not: before the day's first write, and through other names
 * for the same file. Three writes that each take 50 of 400 lines are allowed;
 * the fourth, 200 of 400 against the day's base, needs approval (exit 1).
 */

afterAll(() => cleanupRepos());

const src = (n: number) =>
  Array.from({ length: n }, (_, i) => `def f${i}(a, b):\n    return a * ${i} + b\n`).join('');

const write = (
  repo: TestRepo,
  name: string,
  n: number,
  opts: { cwd?: string; env?: Record<string, string> } = {},
) => repo.guard(['write', name, '--json'], { input: src(n), ...opts }).code;

/** The folder guard write keeps app.py's base in today (git/session-base.ts dayBaseFileStore). */
function storeOf(repo: TestRepo, rel: string): string {
  const day = new Date().toISOString().slice(0, 10);
  const key = createHash('sha1').update(`${repo.dir}\0${rel}`).digest('hex').slice(0, 16);
  return `refs/guard/write-base/${day}/f/${key}/`;
}

/**
 * A record as guard writes it for a day's first write (git/session-base.ts sessionEvent), whose
 * commit holds `content` at `rel`, under `ref`: made with plain git, as an agent would.
 */
function plantBase(repo: TestRepo, ref: string, rel: string, content: string): void {
  const blob = repo.git(['hash-object', '-w', '--stdin'], { input: content }).trim();
  const tree = repo.git(['mktree'], { input: `100644 blob ${blob}\t${rel}\n` }).trim();
  const body = {
    v: 1,
    harness: 'cli',
    session: 'today',
    toolCall: null,
    tool: 'guard write',
    phase: 'pre',
    kind: 'write',
    checkpoint: repo.git(['rev-parse', 'HEAD']).trim(),
    paths: [rel],
    worktree: repo.dir,
    time: '2000-01-01T00:00:00.000Z',
    outcome: 'allowed',
  };
  const msg = `guard session cli today: write ${rel}\n\n${JSON.stringify(body)}\n`;
  const commit = repo.git(['commit-tree', tree, '-m', msg]).trim();
  repo.git(['update-ref', ref, commit]);
}

describe('adv5: the day base of guard write', () => {
  it("a base planted before the day's first write (a record holding an empty app.py): the writes still add up", () => {
    const repo = makeRepo({ 'app.py': src(200), 'other.txt': 'o\n' });
    // guard has written here before (its journal exists), but not app.py today
    expect(write(repo, 'other.txt', 3)).toBe(0);
    plantBase(repo, `${storeOf(repo, 'app.py')}00000000T000000Z-00000000`, 'app.py', '');
    const codes = [175, 150, 125, 100].map((n) => write(repo, 'app.py', n));
    // on 184ae15: 0, 0, 0, 0 (and on down to 50 of 200 functions): every write measured as a
    // growth of the planted empty file, and no base of guard's own was ever recorded
    expect(codes).toEqual([0, 0, 0, 1]);
    expect(repo.read('app.py')).toBe(src(125));
  });

  it('held: the same file named another way at each write (./, sub/.., absolute, a symlinked folder, --cwd through a symlink, GIT_DIR): one base', () => {
    const repo = makeRepo({ 'app.py': src(200), 'sub/x.txt': 'x\n' });
    symlinkSync('.', path.join(repo.dir, 'alias'));
    const link = path.join(outsideDir(), 'link');
    symlinkSync(repo.dir, link);
    const codes = [
      write(repo, './app.py', 175),
      write(repo, 'sub/../app.py', 150),
      write(repo, path.join(repo.dir, 'app.py'), 125),
      write(repo, 'alias/app.py', 100),
    ];
    expect(codes).toEqual([0, 0, 0, 1]);
    // through a symlink to the work tree and with GIT_DIR set (rev-parse's answer): the same base
    expect(write(repo, 'app.py', 100, { cwd: link })).toBe(1);
    // (an absolute path through a link from outside is refused as outside the work tree: exit 2)
    expect(write(repo, path.join(link, 'app.py'), 100)).toBe(2);
    expect(
      write(repo, 'app.py', 100, {
        env: { GIT_DIR: path.join(link, '.git'), GIT_WORK_TREE: link },
      }),
    ).toBe(1);
    expect(repo.read('app.py')).toBe(src(125));
  });

  it('held: a hard link and a symlink to the file, written instead of it, leave the file whole', () => {
    const repo = makeRepo({ 'app.py': src(200) });
    // a symlink is written as a symlink (its target), never through
    symlinkSync('app.py', path.join(repo.dir, 'link.py'));
    repo.guard(['write', 'link.py', '--json'], { input: src(10) });
    expect(repo.read('app.py')).toBe(src(200));
    // a hard link: the prepared file is renamed over the name, which breaks the link
    mkdirSync(path.join(repo.dir, 'h'));
    linkSync(path.join(repo.dir, 'app.py'), path.join(repo.dir, 'h', 'app.py'));
    for (const n of [175, 150, 125, 100]) write(repo, 'h/app.py', n);
    expect(repo.read('app.py')).toBe(src(200));
  });

  it("held: the journal compacted past 1 MB after the day's first write still names the base (a busy day of 12,000 refs)", () => {
    const repo = makeRepo({ 'app.py': src(200) });
    expect(write(repo, 'app.py', 175)).toBe(0);
    const journal = path.join(repo.dir, '.git', 'guard', 'journal');
    const oid = 'a'.repeat(40);
    appendFileSync(
      journal,
      Array.from(
        { length: 12_000 },
        (_, i) => `${oid} refs/guard/checkpoints/20261128T000000Z-${String(i).padStart(8, '0')}\n`,
      ).join(''),
    );
    // this write's note is past 1 MB: the journal is compacted to its newest 5,000 live entries
    expect(write(repo, 'app.py', 150)).toBe(0);
    expect(statSync(journal).size).toBeLessThan(1 << 20);
    expect(readFileSync(journal, 'utf8')).toContain(storeOf(repo, 'app.py'));
    expect([125, 100].map((n) => write(repo, 'app.py', n))).toEqual([0, 1]);
  });

  it('GIT_DIR naming a fresh bare repository at each write, GIT_WORK_TREE the real folder: refused, not a first write of the day each time', () => {
    const repo = makeRepo({ 'app.py': src(200) });
    const codes = [175, 150, 125, 100].map((n, i) => {
      const decoy = path.join(outsideDir(), `decoy${i}.git`);
      repo.git(['init', '-q', '--bare', decoy]);
      return write(repo, 'app.py', n, { env: { GIT_DIR: decoy, GIT_WORK_TREE: repo.dir } });
    });
    // on 184ae15: 0, 0, 0, 0 (each base and checkpoint kept in its own decoy, whose HEAD has no
    // guard.config.json: the defaults' policy too): 400 -> 200 lines and on down
    expect(codes.every((c) => c !== 0)).toBe(true);
    expect(repo.read('app.py')).toBe(src(200));
  });
});
