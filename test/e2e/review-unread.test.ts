/**
 * Review judges only what it read (issue 20): a version guard never read is
 * unknown, never "already in the main tree", never merged; files the lane's
 * checkpoint left out are named; a file that becomes a folder (or the
 * reverse) merges cleanly both ways, and never crashes half merged.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  cleanupRepos,
  laneWrite,
  lines,
  makeRepo,
  startLane,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

function laneGit(lane: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd: lane, env: cleanEnv() });
  if (r.status !== 0)
    throw new Error(`git ${args.join(' ')} in lane failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function file(json: any, p: string): any {
  const f = json.files.find((x: any) => x.path === p);
  if (!f) throw new Error(`no ${p} in ${JSON.stringify(json.files.map((x: any) => x.path))}`);
  return f;
}

/** A repository whose HEAD has gitlink `sub` at one of its own commits; returns it and another commit to move to. */
function withSubmodule(): { repo: TestRepo; first: string; second: string } {
  const repo = makeRepo({ 'f.txt': 'a\n' });
  const first = repo.git(['rev-parse', 'HEAD']).trim();
  repo.write('f.txt', 'a\nb\n');
  const second = repo.commitAll('two');
  repo.git(['update-index', '--add', '--cacheinfo', `160000,${first},sub`]);
  repo.git(['commit', '-q', '--no-verify', '-m', 'add submodule']);
  return { repo, first, second };
}

describe('a version guard did not read is unknown', () => {
  it('a lane that only moves a submodule is not "already in the main tree": not merged, said, exit 1, with the command', () => {
    const { repo, first, second } = withSubmodule();
    const lane = startLane(repo);
    laneGit(lane, ['update-index', '--cacheinfo', `160000,${second},sub`]);
    laneGit(lane, ['commit', '-q', '--no-verify', '-m', 'move the submodule']);

    const { code, json } = repo.guardJson(['review', 'agent']);
    expect(code).toBe(1);
    const sub = file(json, 'sub');
    expect(sub.already).toBeUndefined();
    expect(sub).toMatchObject({ submodule: true, unread: true, conflict: true });
    expect(sub.outcome).toContain('not merged: guard did not read it');
    expect(json.summary.already).toBe(0);
    // the main tree's gitlink did not move
    expect(repo.git(['ls-files', '-s', 'sub'])).toContain(first);

    const human = repo.guard(['review', 'agent']);
    expect(human.code).toBe(1);
    expect(human.stdout).not.toContain('already in the main tree');
    expect(human.stdout).toContain('take it by hand, once you have looked: git checkout ');
    // the command it prints does what it says
    const cmd = sub.takeByHand as string;
    expect(cmd).toMatch(/^git checkout [0-9a-f]{40} -- sub$/);
    repo.git(cmd.split(' ').slice(1));
    expect(repo.git(['ls-files', '-s', 'sub'])).toContain(second);
  });

  it("a lane's file the checkpoint left out (over its size cap) is named, not merged, and the review exits 1", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const lane = startLane(repo);
    laneWrite(lane, 'huge.bin', Buffer.alloc(4096, 'x'));
    laneWrite(lane, 'small.txt', 'small\n');
    const env = { GUARD_CHECKPOINT_MAX_BYTES: '1024' };
    const { code, json } = repo.guardJson(['review', 'agent'], { env });
    expect(code).toBe(1);
    expect(json.notReviewed).toEqual([
      { path: 'huge.bin', why: expect.stringContaining("larger than the checkpoint's size cap") },
    ]);
    expect(repo.read('small.txt')).toBe('small\n');
    expect(() => lstatSync(path.join(repo.dir, 'huge.bin'))).toThrow();

    const human = repo.guard(['review', 'agent'], { env });
    expect(human.stdout).toMatch(
      /huge\.bin {2}not reviewed, not merged: larger than the checkpoint's size cap/,
    );
  });
});

describe('a file that becomes a folder, and the reverse', () => {
  it('x -> x/x (a rename into a folder of its old name): merged, not a crash half way (was exit 3)', () => {
    const repo = makeRepo({ x: lines(20) });
    const lane = startLane(repo);
    laneGit(lane, ['mv', 'x', 'tmp']);
    mkdirSync(path.join(lane, 'x'));
    laneGit(lane, ['mv', 'tmp', 'x/x']);
    laneGit(lane, ['commit', '-q', '--no-verify', '-m', 'into a folder']);
    const r = repo.guard(['review', 'agent']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(repo.read('x/x')).toBe(lines(20));
    expect(repo.git(['status', '--porcelain'])).toBe('R  x -> x/x\n');
  });

  it('x/x -> x (a folder that becomes a file of its name): merged', () => {
    const repo = makeRepo({ 'x/x': lines(20) });
    const lane = startLane(repo);
    laneGit(lane, ['mv', 'x/x', 'tmp']);
    rmSync(path.join(lane, 'x'), { recursive: true, force: true }); // git mv may leave the empty folder
    laneGit(lane, ['mv', 'tmp', 'x']);
    laneGit(lane, ['commit', '-q', '--no-verify', '-m', 'out of the folder']);
    const r = repo.guard(['review', 'agent']);
    expect(r.code).toBe(0);
    expect(lstatSync(path.join(repo.dir, 'x')).isFile()).toBe(true);
    expect(repo.read('x')).toBe(lines(20));
  });

  it("a folder replaced by a file (uncommitted in the lane): the folder's files go first, then the file is written", () => {
    const repo = makeRepo({ 'x/y': 'a\n', 'x/z': 'b\n' });
    const lane = startLane(repo);
    rmSync(path.join(lane, 'x'), { recursive: true });
    writeFileSync(path.join(lane, 'x'), 'file\n');
    const r = repo.guard(['review', 'agent']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(repo.read('x')).toBe('file\n');
    expect(repo.git(['status', '--porcelain'])).toBe('A  x\nD  x/y\nD  x/z\n');
  });

  it("a person's untracked file in that folder stops only the file: kept, the rest merged, the lane's file kept as a ref", () => {
    const repo = makeRepo({ 'x/y': 'a\n' });
    const lane = startLane(repo);
    rmSync(path.join(lane, 'x'), { recursive: true });
    writeFileSync(path.join(lane, 'x'), 'file\n');
    repo.write('x/mine.txt', "the person's\n");
    const { code, json } = repo.guardJson(['review', 'agent']);
    expect(code).toBe(1);
    expect(repo.read('x/mine.txt')).toBe("the person's\n");
    const x = file(json, 'x');
    expect(x.decision).toBe('blocked');
    expect(repo.git(['show', `${x.ref}:x`])).toBe('file\n');
  });

  it('a file made a folder while the main tree changed that file: the file is kept, the new folder kept as a ref, no crash', () => {
    const repo = makeRepo({ x: lines(5) });
    const lane = startLane(repo);
    rmSync(path.join(lane, 'x'));
    laneWrite(lane, 'x/y', 'q\n');
    repo.write('x', lines(5) + 'changed by the person\n');
    const { code, json } = repo.guardJson(['review', 'agent']);
    expect(code).toBe(1);
    expect(readFileSync(path.join(repo.dir, 'x'), 'utf8')).toBe(
      lines(5) + 'changed by the person\n',
    );
    const y = file(json, 'x/y');
    expect(y.decision).toBe('blocked');
    expect(y.reasons.join(' ')).toContain(
      'the main tree has a file at x, where a folder of x/y goes',
    );
    expect(repo.git(['show', `${y.ref}:x/y`])).toBe('q\n');
  });
});
