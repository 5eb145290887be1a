import { spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpoint, type Checkpoint } from '../../src/git/checkpoint.js';
import { openRepo } from '../../src/git/repo.js';
import { ROOT, cleanEnv, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';
import { scale } from '../scale.js';

/** Rounds of random edits: 8 in npm test, 30 in npm run soak. */
const FUZZ_ROUNDS = scale(8, 30);

afterAll(cleanupRepos);

/** Everything a checkpoint must leave as it was, read through git and the file system. */
function snapshot(repo: TestRepo) {
  const indexFile = path.join(repo.dir, '.git', 'index');
  return {
    index: readFileSync(indexFile).toString('base64'),
    lsFiles: repo.git(['ls-files', '-s', '--debug']),
    status: repo.git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored']),
    stash: repo.git(['stash', 'list']),
    files: Object.fromEntries(
      ['a.txt', 'b.txt', 'new.txt', 'build.log', 'sub/c.txt'].map((f) => [f, safeRead(repo, f)]),
    ),
  };
}

function safeRead(repo: TestRepo, f: string): string | null {
  try {
    return repo.read(f);
  } catch {
    return null;
  }
}

function tree(repo: TestRepo, ref: string): string[] {
  return repo.git(['ls-tree', '-r', '--name-only', '-z', ref]).split('\0').filter(Boolean);
}

describe('checkpoint', () => {
  it('captures tracked, modified and untracked-not-ignored files, and touches nothing of the user', async () => {
    const repo = makeRepo({
      'a.txt': lines(10),
      'b.txt': 'b\n',
      'sub/c.txt': 'c\n',
      '.gitignore': '*.log\n',
    });
    repo.write('a.txt', lines(12));
    repo.write('b.txt', 'b staged\n');
    repo.git(['add', 'b.txt']);
    repo.write('b.txt', 'b staged then edited\n');
    repo.write('new.txt', 'untracked\n');
    repo.write('build.log', 'ignored\n');
    repo.write('stash-me.txt', 'x\n');
    repo.git(['stash', 'push', '-u', '-q', '--', 'stash-me.txt']);
    const before = snapshot(repo);

    const cp = await checkpoint(await openRepo(repo.dir), {
      reason: 'test',
      command: 'test',
      lane: null,
    });

    expect(snapshot(repo)).toEqual(before);
    expect(cp.ref).toMatch(/^refs\/guard\/checkpoints\/\d{8}T\d{6}Z-[0-9a-f]{8}$/);
    expect(repo.git(['rev-parse', cp.ref]).trim()).toBe(cp.commit);
    expect(repo.git(['rev-parse', `${cp.ref}^`]).trim()).toBe(
      repo.git(['rev-parse', 'HEAD']).trim(),
    );
    expect(tree(repo, cp.ref).sort()).toEqual([
      '.gitignore',
      'a.txt',
      'b.txt',
      'new.txt',
      'sub/c.txt',
    ]);
    expect(repo.git(['show', `${cp.ref}:a.txt`])).toBe(lines(12));
    expect(repo.git(['show', `${cp.ref}:b.txt`])).toBe('b staged then edited\n');
    expect(repo.git(['show', `${cp.ref}:new.txt`])).toBe('untracked\n');
    expect(repo.git(['log', '-1', '--format=%B', cp.ref])).toContain('"reason":"test"');
    expect(repo.git(['log', '-1', '--format=%an <%ae>', cp.ref]).trim()).toBe(
      'guard <guard@localhost>',
    );
    // what was staged (and differs from the file) is kept too: the second parent, like git stash
    expect(cp.index).not.toBeNull();
    expect(repo.git(['show', `${cp.ref}^2:b.txt`])).toBe('b staged\n');
    expect(repo.git(['rev-parse', `${cp.ref}^2^{tree}`]).trim()).toBe(cp.index);
  });

  it('reuses the last checkpoint when nothing changed, and makes a new one when something did', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = await openRepo(repo.dir);
    const first = await checkpoint(r, { reason: 'one', command: 'test', lane: null });
    const again = await checkpoint(r, { reason: 'two', command: 'test', lane: null });
    expect(again.reused).toBe(true);
    expect(again.ref).toBe(first.ref);
    expect(repo.refs('refs/guard/checkpoints/')).toEqual([first.ref]);
    repo.write('a.txt', 'changed\n');
    const third = await checkpoint(r, { reason: 'three', command: 'test', lane: null });
    expect(third.reused).toBe(false);
    expect(third.ref).not.toBe(first.ref);
    expect(repo.refs('refs/guard/checkpoints/')).toHaveLength(2);
  });

  it('with known paths, hashes only those: the rest of its tree is the index', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    repo.write('a.txt', 'a edited\n');
    repo.write('b.txt', 'b edited\n');
    repo.write('new.txt', 'n\n');
    const cp = await checkpoint(await openRepo(repo.dir), {
      reason: 'w',
      command: 'write',
      lane: null,
      paths: ['a.txt', 'not-yet.txt'],
    });
    expect(repo.git(['show', `${cp.ref}:a.txt`])).toBe('a edited\n');
    expect(repo.git(['show', `${cp.ref}:b.txt`])).toBe('b\n');
    expect(tree(repo, cp.ref).sort()).toEqual(['a.txt', 'b.txt']);
    expect(repo.git(['status', '--porcelain'])).toBe(' M a.txt\n M b.txt\n?? new.txt\n');
  });

  it('works before the first commit (a root commit)', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' }, { commit: false });
    const cp = await checkpoint(await openRepo(repo.dir), {
      reason: 'unborn',
      command: 'test',
      lane: null,
    });
    expect(repo.git(['rev-list', '--parents', '-n', '1', cp.ref]).trim().split(' ')).toHaveLength(
      1,
    );
    expect(repo.git(['show', `${cp.ref}:a.txt`])).toBe('a\n');
    expect(repo.git(['ls-files', '--stage'])).toBe('');
  });

  it('two checkpoints in parallel processes both land, under distinct refs', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('dirty.txt', 'x\n');
    const mod = pathToFileURL(path.join(ROOT, 'dist', 'git', 'checkpoint.js')).href;
    const repoMod = pathToFileURL(path.join(ROOT, 'dist', 'git', 'repo.js')).href;
    statSync(new URL(mod)); // the CLI must be built (npm test builds it)
    const script = `
      const { checkpoint } = await import(${JSON.stringify(mod)});
      const { openRepo } = await import(${JSON.stringify(repoMod)});
      const r = await openRepo(process.cwd());
      const cp = await checkpoint(r, { reason: 'parallel ' + process.argv[1], command: 'test', lane: null, paths: ['a.txt'] });
      process.stdout.write(JSON.stringify(cp));`;
    const run = (n: number) =>
      new Promise<{ ref: string; commit: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(n)], {
          cwd: repo.dir,
          env: cleanEnv(),
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (b) => (out += b));
        child.stderr.on('data', (b) => (err += b));
        child.on('close', (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err)),
        );
      });
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map(run));
    const refs = new Set(results.map((r) => r.ref));
    expect(refs.size).toBe(6);
    const listed = repo.refs('refs/guard/checkpoints/');
    for (const r of results) {
      expect(listed).toContain(r.ref);
      expect(repo.git(['rev-parse', r.ref]).trim()).toBe(r.commit);
    }
  });

  it('racy git: a file rewritten in the same second with the same size is captured, every time', async () => {
    const repo = makeRepo({ 'a.txt': 'v00\n', 'b.txt': 'b\n' });
    // the user's own config weakens git's stat checks: guard's checkpoints must not inherit that
    repo.git(['config', 'core.checkStat', 'minimal']);
    repo.git(['config', 'core.trustctime', 'false']);
    const r = await openRepo(repo.dir);
    for (let i = 1; i <= 12; i++) {
      const content = `v${String(i).padStart(2, '0')}\n`; // always 4 bytes
      repo.write('a.txt', content);
      if (i % 2 === 0) repo.write('new.txt', `n${i % 10}\n`); // an untracked file rewritten the same way
      const cp = await checkpoint(r, { reason: `racy ${i}`, command: 'test', lane: null });
      expect(repo.git(['show', `${cp.ref}:a.txt`]), `round ${i}`).toBe(content);
      if (i % 2 === 0)
        expect(repo.git(['show', `${cp.ref}:new.txt`]), `round ${i}`).toBe(`n${i % 10}\n`);
    }
  });

  it('racy git: a file rewritten with its size and mtime put back is captured (ctime, from any seed)', async () => {
    const repo = makeRepo({ 'a.txt': 'old!\n', 'b.txt': 'b\n' });
    repo.git(['config', 'core.checkStat', 'minimal']);
    repo.git(['config', 'core.trustctime', 'false']);
    const file = path.join(repo.dir, 'a.txt');
    const old = new Date('2020-01-02T03:04:05Z');
    utimesSync(file, old, old);
    repo.write('u.txt', 'utrk\n');
    utimesSync(path.join(repo.dir, 'u.txt'), old, old);
    repo.git(['add', 'a.txt']); // the user's index now holds a.txt with the old mtime, long before the index file's
    const r = await openRepo(repo.dir);
    const first = await checkpoint(r, { reason: 'before', command: 'test', lane: null });
    expect(repo.git(['show', `${first.ref}:a.txt`])).toBe('old!\n');
    // rewrite in place, same size, mtime restored exactly: only ctime tells
    const rewrite = (f: string, content: string) => {
      const abs = path.join(repo.dir, f);
      const ref = path.join(repo.dir, '.git', 'stamp');
      expect(spawnSync('touch', ['-r', abs, ref]).status).toBe(0);
      writeFileSync(abs, content);
      expect(spawnSync('touch', ['-r', ref, abs]).status).toBe(0);
      expect(statSync(abs).mtimeMs).toBe(statSync(ref).mtimeMs);
    };
    // Into the next second: within the second git recorded the file's stat in, a rewrite that puts
    // the mtime back is invisible to git's stat (this git keeps no nanoseconds: docs/performance.md).
    await nextSecond();
    rewrite('a.txt', 'new!\n');
    rewrite('u.txt', 'UTRK\n');
    // plain git, as configured, does not see it: the case is real
    expect(repo.git(['status', '--porcelain', '--', 'a.txt'])).toBe('');
    const second = await checkpoint(r, { reason: 'after', command: 'test', lane: null }); // seeded from guard's own index
    expect(repo.git(['show', `${second.ref}:a.txt`])).toBe('new!\n');
    expect(repo.git(['show', `${second.ref}:u.txt`])).toBe('UTRK\n');
    await nextSecond();
    rewrite('a.txt', 'NEW!\n');
    repo.git(['add', 'b.txt']); // the user's index changes: seeded from it again
    const third = await checkpoint(r, { reason: 'again', command: 'test', lane: null });
    expect(repo.git(['show', `${third.ref}:a.txt`])).toBe('NEW!\n');
  });

  /** Wait until the wall clock's second changes (and a little more). */
  const nextSecond = () =>
    new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));

  it('untracked files over the cap, past the budget, refused by git, or nested repositories are left out and recorded', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'tracked-big.bin': Buffer.alloc(4096, 1) });
    repo.write('small.txt', 'small\n');
    repo.write('big.bin', Buffer.alloc(4096, 7));
    repo.write('git~1', 'a name git refuses (.git on NTFS)\n');
    mkdirSync(path.join(repo.dir, 'nested'));
    spawnSync('git', ['init', '-q'], { cwd: path.join(repo.dir, 'nested') });
    repo.write('nested/inner.txt', 'inner\n');
    repo.write('tracked-big.bin', Buffer.alloc(4096, 2));
    const r = await openRepo(repo.dir);
    const cp = await checkpoint(r, {
      reason: 'cap',
      command: 'test',
      lane: null,
      maxUntrackedBytes: 1000,
    });
    expect(tree(repo, cp.ref).sort()).toEqual(['a.txt', 'small.txt', 'tracked-big.bin']);
    // tracked files are kept whatever their size
    expect(repo.git(['show', `${cp.ref}:tracked-big.bin`])).toBe(Buffer.alloc(4096, 2).toString());
    const byPath = Object.fromEntries(cp.skipped.map((s) => [s.path, s]));
    expect(byPath).toEqual({
      'big.bin': { path: 'big.bin', reason: 'size', bytes: 4096 },
      'git~1': { path: 'git~1', reason: 'name', bytes: 34 },
      nested: { path: 'nested', reason: 'repository' },
    });
    // recorded in the checkpoint itself, and listed by guard log
    const body = JSON.parse(repo.git(['log', '-1', '--format=%b', cp.ref]).trim());
    expect(body.skippedCount).toBe(3);
    expect(body.skipped.map((s: { path: string }) => s.path).sort()).toEqual([
      'big.bin',
      'git~1',
      'nested',
    ]);
    const log = repo.guardJson(['log']).json;
    expect(log.entries.find((e: { id: string }) => e.id === cp.id).skipped).toHaveLength(3);

    // a budget of 0 ms: every untracked file is left out, and says why
    repo.write('small2.txt', 'small\n');
    const none = await checkpoint(r, {
      reason: 'budget',
      command: 'test',
      lane: null,
      untrackedBudgetMs: 0,
    });
    expect(
      none.skipped
        .filter((s) => s.reason === 'time')
        .map((s) => s.path)
        .sort(),
    ).toEqual(['big.bin', 'git~1', 'small2.txt']);
    // (small.txt was taken by the checkpoint before: guard's own index carries it)
    expect(tree(repo, none.ref).sort()).toEqual(['a.txt', 'small.txt', 'tracked-big.bin']);
  });

  it('an untracked file guard already keeps that grows past the cap is left out and recorded, never hashed', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('grows.bin', Buffer.alloc(100, 1));
    const r = await openRepo(repo.dir);
    const first = await checkpoint(r, {
      reason: 'small',
      command: 'test',
      lane: null,
      maxUntrackedBytes: 1000,
    });
    expect(tree(repo, first.ref).sort()).toEqual(['a.txt', 'grows.bin']);
    const big = Buffer.alloc(5000, 2);
    repo.write('grows.bin', big);
    repo.write('a.txt', 'a2\n');
    const second = await checkpoint(r, {
      reason: 'grown',
      command: 'test',
      lane: null,
      maxUntrackedBytes: 1000,
    });
    expect(tree(repo, second.ref).sort()).toEqual(['a.txt']);
    expect(repo.git(['show', `${second.ref}:a.txt`])).toBe('a2\n');
    expect(second.skipped).toEqual([{ path: 'grows.bin', reason: 'size', bytes: 5000 }]);
    // git never stored the grown content
    const oid = spawnSync('git', ['hash-object', '--stdin'], { cwd: repo.dir, input: big })
      .stdout.toString()
      .trim();
    expect(spawnSync('git', ['cat-file', '-e', oid], { cwd: repo.dir }).status).not.toBe(0);
    expect(
      readdirSync(path.join(repo.dir, '.git')).filter((n) => n.startsWith('guard-index-')),
    ).toEqual([]);
  });

  it(`${FUZZ_ROUNDS} rounds of random edits, deletions, mode flips, symlinks, new and vanished untracked files, stages and commits: every checkpoint is the tree \`git add -A\` would make`, async () => {
    // guard's kept index seeds most rounds (the tree built from the last one plus what add named);
    // a stage or a commit starts again from the user's index (write-tree)
    const files: Record<string, string> = {};
    for (let i = 0; i < 16; i++) files[`d${i % 4}/f${i}.txt`] = `file ${i}\n`;
    const repo = makeRepo(files);
    const r = await openRepo(repo.dir);
    let seed = 20261123;
    const rnd = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      seed >>>= 0;
      return seed % n;
    };
    const names = () =>
      repo
        .git(['ls-files', '-z', '--cached', '--others', '--exclude-standard'])
        .split('\0')
        .filter((f) => f && existsSync(path.join(repo.dir, f)));
    for (let round = 0; round < FUZZ_ROUNDS; round++) {
      for (let k = 1 + rnd(3); k > 0; k--) {
        const all = names();
        const f = all[rnd(all.length)];
        const abs = f && path.join(repo.dir, f);
        const link = abs !== undefined && lstatSync(abs).isSymbolicLink();
        switch (rnd(7)) {
          case 0:
            if (abs) rmSync(abs);
            break;
          case 1:
            if (abs && !link) chmodSync(abs, statSync(abs).mode & 0o100 ? 0o644 : 0o755);
            break;
          case 2:
            repo.write(`new${rnd(3)}/u${rnd(20)}.txt`, `untracked ${round}\n`);
            break;
          case 3: {
            const l = path.join(repo.dir, `link${rnd(4)}`);
            rmSync(l, { force: true });
            symlinkSync(`target${rnd(3)}`, l);
            break;
          }
          case 4:
            if (rnd(3) === 0) {
              repo.git(['add', '-A']);
              repo.git(['commit', '-q', '--no-verify', '--allow-empty', '-m', `round ${round}`]);
            } else if (f) repo.git(['add', '--', f]);
            break;
          default:
            if (abs && !link) appendFileSync(abs, `round ${round}\n`);
        }
      }
      const cp = await checkpoint(r, { reason: `round ${round}`, command: 'test', lane: null });
      const fresh = path.join(repo.dir, '.git', 'fuzz-index');
      rmSync(fresh, { force: true });
      repo.git(['add', '-A'], { env: { GIT_INDEX_FILE: fresh } });
      const want = repo.git(['write-tree'], { env: { GIT_INDEX_FILE: fresh } }).trim();
      expect(cp.tree, `round ${round}`).toBe(want);
      expect(repo.git(['rev-parse', `${cp.commit}^{tree}`]).trim()).toBe(want);
    }
  });

  it('a name git refuses does not fail lanes, review or discard (issue 13 item 20)', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.guard(['init']);
    repo.git(['add', '-A']);
    repo.git(['commit', '-q', '--no-verify', '--allow-empty', '-m', 'init']);
    const lane = repo.guardJson(['start', 'agent']).json.path as string;
    writeFileSync(path.join(lane, 'git~1'), 'x\n');
    writeFileSync(path.join(repo.dir, 'git~1'), 'y\n');
    writeFileSync(path.join(lane, 'b.txt'), 'b\n');
    const lanes = repo.guard(['lanes', '--json']);
    expect(lanes.code, lanes.stdout + lanes.stderr).toBe(0);
    const rv = repo.guard(['review', 'agent', '--auto', '--json']);
    expect([0, 1], rv.stdout + rv.stderr).toContain(rv.code);
    const d = repo.guard(['discard', 'agent', '--json']);
    expect(d.code, d.stdout + d.stderr).toBe(0);
    const skipped = (
      repo.guardJson(['log']).json.entries as Array<{
        kind: string;
        skipped?: Array<{ path: string }>;
      }>
    )
      .filter((e) => e.kind === 'checkpoint' && e.skipped)
      .flatMap((e) => e.skipped!.map((s) => s.path));
    expect(skipped).toContain('git~1');
  });

  it("guard's own index follows the user's: a file force-added past .gitignore is captured", async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', '.gitignore': '*.log\n' });
    const r = await openRepo(repo.dir);
    await checkpoint(r, { reason: 'one', command: 'test', lane: null });
    repo.write('keep.log', 'forced\n');
    repo.git(['add', '-f', 'keep.log']);
    repo.write('a.txt', 'a2\n');
    const cp: Checkpoint = await checkpoint(r, { reason: 'two', command: 'test', lane: null });
    expect(tree(repo, cp.ref).sort()).toEqual(['.gitignore', 'a.txt', 'keep.log']);
    repo.git(['rm', '-q', '--cached', 'keep.log']);
    repo.write('a.txt', 'a3\n');
    const after = await checkpoint(r, { reason: 'three', command: 'test', lane: null });
    expect(tree(repo, after.ref).sort()).toEqual(['.gitignore', 'a.txt']);
  });

  it('a restore never removes an untracked file its checkpoint left out', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('big.bin', Buffer.alloc(4096, 3));
    const cp = await checkpoint(await openRepo(repo.dir), {
      reason: 'capped',
      command: 'test',
      lane: null,
      maxUntrackedBytes: 1000,
    });
    expect(cp.skipped.map((s) => s.path)).toEqual(['big.bin']);
    repo.write('a.txt', 'a changed\n');
    // the restore's own undo checkpoint (default cap) does hold big.bin: only the record keeps it from being "extra"
    const r = repo.guardJson(['restore', cp.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(repo.read('a.txt')).toBe('a\n');
    expect(readFileSync(path.join(repo.dir, 'big.bin')).equals(Buffer.alloc(4096, 3))).toBe(true);
    expect(r.json.skipped.map((s: { path: string }) => s.path)).toContain('big.bin');
  });
});
