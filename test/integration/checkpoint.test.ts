import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpoint } from '../../src/git/checkpoint.js';
import { openRepo } from '../../src/git/repo.js';
import { ROOT, cleanEnv, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

/** Everything a checkpoint must leave as it was, read through git and the file system. */
function snapshot(repo: TestRepo) {
  const indexFile = path.join(repo.dir, '.git', 'index');
  return {
    index: readFileSync(indexFile).toString('base64'),
    lsFiles: repo.git(['ls-files', '-s', '--debug']),
    status: repo.git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored']),
    stash: repo.git(['stash', 'list']),
    files: Object.fromEntries(['a.txt', 'b.txt', 'new.txt', 'build.log', 'sub/c.txt'].map((f) => [f, safeRead(repo, f)])),
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
    const repo = makeRepo({ 'a.txt': lines(10), 'b.txt': 'b\n', 'sub/c.txt': 'c\n', '.gitignore': '*.log\n' });
    repo.write('a.txt', lines(12));
    repo.write('b.txt', 'b staged\n');
    repo.git(['add', 'b.txt']);
    repo.write('b.txt', 'b staged then edited\n');
    repo.write('new.txt', 'untracked\n');
    repo.write('build.log', 'ignored\n');
    repo.write('stash-me.txt', 'x\n');
    repo.git(['stash', 'push', '-u', '-q', '--', 'stash-me.txt']);
    const before = snapshot(repo);

    const cp = await checkpoint(await openRepo(repo.dir), { reason: 'test', command: 'test', lane: null });

    expect(snapshot(repo)).toEqual(before);
    expect(cp.ref).toMatch(/^refs\/guard\/checkpoints\/\d{8}T\d{6}Z-[0-9a-f]{8}$/);
    expect(repo.git(['rev-parse', cp.ref]).trim()).toBe(cp.commit);
    expect(repo.git(['rev-parse', `${cp.ref}^`]).trim()).toBe(repo.git(['rev-parse', 'HEAD']).trim());
    expect(tree(repo, cp.ref).sort()).toEqual(['.gitignore', 'a.txt', 'b.txt', 'new.txt', 'sub/c.txt']);
    expect(repo.git(['show', `${cp.ref}:a.txt`])).toBe(lines(12));
    expect(repo.git(['show', `${cp.ref}:b.txt`])).toBe('b staged then edited\n');
    expect(repo.git(['show', `${cp.ref}:new.txt`])).toBe('untracked\n');
    expect(repo.git(['log', '-1', '--format=%B', cp.ref])).toContain('"reason":"test"');
    expect(repo.git(['log', '-1', '--format=%an <%ae>', cp.ref]).trim()).toBe('guard <guard@localhost>');
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
    const cp = await checkpoint(await openRepo(repo.dir), { reason: 'w', command: 'write', lane: null, paths: ['a.txt', 'not-yet.txt'] });
    expect(repo.git(['show', `${cp.ref}:a.txt`])).toBe('a edited\n');
    expect(repo.git(['show', `${cp.ref}:b.txt`])).toBe('b\n');
    expect(tree(repo, cp.ref).sort()).toEqual(['a.txt', 'b.txt']);
    expect(repo.git(['status', '--porcelain'])).toBe(' M a.txt\n M b.txt\n?? new.txt\n');
  });

  it('works before the first commit (a root commit)', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' }, { commit: false });
    const cp = await checkpoint(await openRepo(repo.dir), { reason: 'unborn', command: 'test', lane: null });
    expect(repo.git(['rev-list', '--parents', '-n', '1', cp.ref]).trim().split(' ')).toHaveLength(1);
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
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(n)], { cwd: repo.dir, env: cleanEnv() });
        let out = '';
        let err = '';
        child.stdout.on('data', (b) => (out += b));
        child.stderr.on('data', (b) => (err += b));
        child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
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
});
