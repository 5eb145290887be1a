import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, lines, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

/** Every file of the work tree but .git, with its bytes and mode: what a restore must get back. */
function files(repo: TestRepo): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(repo.dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === '.git') continue;
      if (e.isDirectory()) walk(p);
      else
        out[p] =
          `${(statSync(path.join(repo.dir, p)).mode & 0o777).toString(8)} ${readFileSync(path.join(repo.dir, p)).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

describe('guard restore', () => {
  it('round trip: write, restore (bytes identical), then restore the restore', () => {
    const repo = makeRepo({ 'big_module.py': fixture('big_module.py'), 'b.txt': 'b\n' });
    const original = readFileSync(path.join(repo.dir, 'big_module.py'));
    const w = repo.guardJson(['write', 'big_module.py'], {
      input: fixture('big_module_modified.py'),
    });
    expect(w.code).toBe(0);
    const r = repo.guardJson(['restore', w.json.checkpoint]);
    expect(r.code).toBe(0);
    expect(r.json.changes).toEqual([{ path: 'big_module.py', action: 'rewritten' }]);
    expect(readFileSync(path.join(repo.dir, 'big_module.py')).equals(original)).toBe(true);
    expect(repo.git(['status', '--porcelain'])).toBe('');
    // the undo checkpoint holds what the restore replaced
    expect(repo.git(['show', `refs/guard/checkpoints/${r.json.undo}:big_module.py`])).toBe(
      fixture('big_module_modified.py'),
    );
    const back = repo.guardJson(['restore', `refs/guard/checkpoints/${r.json.undo}`]);
    expect(back.code).toBe(0);
    expect(repo.read('big_module.py')).toBe(fixture('big_module_modified.py'));
  });

  it('restores a whole work tree: modified rewritten, deleted recreated, created removed; index untouched', () => {
    const repo = makeRepo({
      'a.txt': 'a\n',
      'b.txt': 'b\n',
      'keep/c.txt': 'c\n',
      '.gitignore': '*.log\n',
    });
    repo.write('untracked-then.txt', 'was here\n');
    chmodSync(path.join(repo.dir, 'a.txt'), 0o755);
    // a whole-tree checkpoint, through a restore that changes nothing
    const cp = wholeCheckpoint(repo);
    const before = files(repo);
    const headIndex = repo.git(['ls-files', '-s']);

    repo.write('a.txt', 'a changed\n');
    chmodSync(path.join(repo.dir, 'a.txt'), 0o644);
    repo.git(['rm', '-q', 'b.txt']);
    repo.write('untracked-then.txt', 'edited\n');
    repo.write('created/new.txt', 'new\n');
    repo.write('created-and-added.txt', 'added\n');
    repo.git(['add', 'created-and-added.txt']);
    repo.write('build.log', 'ignored, must stay\n');
    const indexAfterEdits = repo.git(['ls-files', '-s']);

    const r = repo.guardJson(['restore', cp]);
    expect(r.code).toBe(0);
    expect(r.json.changes).toEqual([
      { path: 'a.txt', action: 'rewritten' },
      { path: 'b.txt', action: 'recreated' },
      { path: 'created-and-added.txt', action: 'removed' },
      { path: 'created/new.txt', action: 'removed' },
      { path: 'untracked-then.txt', action: 'rewritten' },
    ]);
    const after = files(repo);
    expect(repo.read('build.log')).toBe('ignored, must stay\n');
    delete after['build.log'];
    expect(after).toEqual(before);
    expect(existsSync(path.join(repo.dir, 'created'))).toBe(false);
    // the index is as the edits left it (no --staged)
    expect(repo.git(['ls-files', '-s'])).toBe(indexAfterEdits);
    expect(indexAfterEdits).not.toBe(headIndex);
    expect(r.json.staged).toEqual([]);
  });

  it('with --staged also puts the index entries back', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const cp = wholeCheckpoint(repo);
    const index = repo.git(['ls-files', '-s']);
    repo.write('a.txt', 'a2\n');
    repo.write('c.txt', 'c\n');
    repo.git(['add', '-A']);
    repo.git(['rm', '-q', '--cached', 'b.txt']);
    const r = repo.guardJson(['restore', cp, '--staged']);
    expect(r.code).toBe(0);
    expect(repo.git(['ls-files', '-s'])).toBe(index);
    expect(repo.git(['status', '--porcelain'])).toBe('');
  });

  it('never deletes ignored files or files it did not know, and only the paths asked for', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'src/x.txt': 'x\n', '.gitignore': 'secret.env\n' });
    const cp = wholeCheckpoint(repo);
    repo.write('secret.env', 'TOKEN=1\n');
    repo.write('src/x.txt', 'x2\n');
    repo.write('src/y.txt', 'y\n');
    repo.write('a.txt', 'a2\n');
    const r = json(repo, ['restore', cp, '--', 'src']);
    expect(r.changes).toEqual([
      { path: 'src/x.txt', action: 'rewritten' },
      { path: 'src/y.txt', action: 'removed' },
    ]);
    expect(repo.read('secret.env')).toBe('TOKEN=1\n');
    expect(repo.read('a.txt')).toBe('a2\n');
    // a restore from a subfolder takes paths relative to it
    repo.write('src/x.txt', 'x3\n');
    const sub = repo.guard(['restore', cp, '--', 'x.txt'], { cwd: path.join(repo.dir, 'src') });
    expect(sub.code).toBe(0);
    expect(repo.read('src/x.txt')).toBe('x\n');
  });

  it("restoring guard write's checkpoint touches only the written path, and removes a file it created", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('mine.txt', "untracked, not guard's\n");
    const w = repo.guardJson(['write', 'gen/new.txt'], { input: lines(5) });
    expect(w.code).toBe(0);
    repo.write('a.txt', 'edited later by a person\n');
    const r = repo.guardJson(['restore', w.json.checkpoint]);
    expect(r.code).toBe(0);
    expect(r.json.changes).toEqual([{ path: 'gen/new.txt', action: 'removed' }]);
    expect(existsSync(path.join(repo.dir, 'gen'))).toBe(false);
    expect(repo.read('mine.txt')).toBe("untracked, not guard's\n");
    expect(repo.read('a.txt')).toBe('edited later by a person\n');
  });

  it('prints what it changed and the checkpoint that undoes it', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const w = repo.guardJson(['write', 'a.txt'], { input: 'b\n' });
    const r = repo.guard(['restore', w.json.checkpoint]);
    expect(r.code).toBe(0);
    const out = r.stdout.replace(/\d{8}T\d{6}Z-[0-9a-f]{8}/g, 'ID');
    expect(out).toBe(
      'guard: restored 1 file from checkpoint ID\n  rewritten  a.txt\nundo: guard restore ID\n',
    );
    expect(r.stderr).toBe('');
  });

  it('an unknown checkpoint is a usage error that changes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    for (const name of [
      'nope',
      'refs/guard/checkpoints/nope',
      '../../heads/main',
      'refs/heads/main',
    ]) {
      const r = repo.guardJson(['restore', name]);
      expect(r.code).toBe(2);
      expect(r.json.error.code).toBe('E_NO_CHECKPOINT');
    }
    expect(repo.refs()).toEqual([]);
  });
});

/**
 * A checkpoint of the whole work tree as it is now: a restore takes one
 * before it changes anything, so restore a path that does not differ.
 */
function firstCheckpoint(repo: TestRepo): string {
  const w = repo.guardJson(['write', '.guard-probe'], { input: 'p\n' });
  expect(w.code).toBe(0);
  expect(repo.guardJson(['restore', w.json.checkpoint]).code).toBe(0); // removes the probe again
  expect(existsSync(path.join(repo.dir, '.guard-probe'))).toBe(false);
  return w.json.checkpoint;
}

function wholeCheckpoint(repo: TestRepo): string {
  const cp = firstCheckpoint(repo);
  // a tracked file that matches (a path nobody has is an error now)
  const r = json(repo, ['restore', cp, '--', repo.git(['ls-files']).split('\n')[0]!]);
  expect(r.changes).toEqual([]);
  return r.undo;
}

/** --json before `--`, since what follows `--` is paths. */
function json(repo: TestRepo, args: string[], cwd?: string): any {
  const r = repo.guard(['--json', ...args], cwd ? { cwd } : {});
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('guard restore --staged and a staged version', () => {
  it('puts back what was staged as well as the file, when the two differed', () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    repo.write('a.txt', 'staged\n');
    repo.git(['add', 'a.txt']);
    repo.write('a.txt', 'in the work tree\n');
    // any restore first takes a full checkpoint of the state it changes: that one holds both versions
    const w = repo.guardJson(['write', 'b.txt'], { input: 'b\n' });
    expect(w.code).toBe(0);
    const r = repo.guardJson(['restore', w.json.checkpoint]);
    expect(r.code).toBe(0);
    const undo: string = r.json.undo;
    expect(repo.git(['show', `refs/guard/checkpoints/${undo}^2:a.txt`])).toBe('staged\n');
    // wreck both the index and the file
    repo.write('a.txt', 'wrecked\n');
    repo.git(['add', 'a.txt']);
    const back = repo.guardJson(['restore', undo, '--staged']);
    expect(back.code).toBe(0);
    expect(repo.read('a.txt')).toBe('in the work tree\n');
    expect(repo.git(['show', ':a.txt'])).toBe('staged\n');
  });
});
