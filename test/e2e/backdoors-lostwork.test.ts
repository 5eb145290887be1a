/**
 * Issue 13, "No back doors" (items 9-18, 22, 23, 25, 26): each attack or odd
 * input performed as an agent would, through the built CLI in a real
 * repository, asserting through git and the file system that nothing
 * destructive got in and nothing was lost.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupRepos, lanePath, laneWrite, lines, makeRepo, outsideDir, snapshotTree, startLane, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

function laneGit(lane: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd: lane, env: cleanEnv() });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in lane failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** Stage everything and run the gate as the pre-commit hook would (auto mode). */
function stageAndCheck(repo: TestRepo): { code: number; json: any } {
  repo.git(['add', '-A']);
  const r = repo.guardJson(['check', '--auto']);
  return { code: r.code, json: r.json };
}

/** A commit on a branch, as a PR head, for `guard ci`. */
function prHead(repo: TestRepo, change: () => void): string {
  repo.git(['checkout', '-q', '-b', 'pr']);
  change();
  repo.commitAll('agent change');
  return repo.git(['rev-parse', 'HEAD']).trim();
}

describe('9: symlinks into .git/ need approval (check, ci)', () => {
  it('check blocks cfg -> .git/config and hooks -> .git/hooks; nothing is committed', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    symlinkSync('.git/config', path.join(repo.dir, 'cfg'));
    symlinkSync('.git/hooks', path.join(repo.dir, 'hooks'));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.files.map((f: any) => [f.path, f.decision])).toEqual([['cfg', 'blocked'], ['hooks', 'blocked']]);
    expect(json.files[0].reasons.join()).toMatch(/into \.git\//);
    // the hook's refusal stops the commit: HEAD holds no link into .git
    expect(repo.git(['ls-tree', '--name-only', 'HEAD'])).toBe('a.txt\n');
  });

  it('ci blocks a PR that adds a link into .git, also through a subfolder and in other letter case', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const head = prHead(repo, () => {
      mkdirSync(path.join(repo.dir, 'tools'));
      symlinkSync('../.GIT/hooks/pre-commit', path.join(repo.dir, 'tools', 'pc'));
    });
    const r = repo.guardJson(['ci', '--base', 'main', '--head', head]);
    expect(r.code).toBe(1);
    expect(r.json.files).toMatchObject([{ path: 'tools/pc', decision: 'blocked', symlink: true }]);
  });
});

describe('10: placeholders where code stood', () => {
  const body = Array.from({ length: 60 }, (_, i) => `    total += step_${i}(x)`).join('\n');
  const file = `def run(x):\n    total = 0\n${body}\n    return total\n`;

  it('a truncation behind a zero-width space is blocked by check, and the file stays whole in HEAD', () => {
    const repo = makeRepo({ 'calc.py': file });
    repo.write('calc.py', 'def run(x):\n    total = 0\n    # ... rest\u200b of the code ...\n    return total\n');
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.files[0].reasons.join()).toMatch(/elision placeholder/);
    expect(repo.git(['show', 'HEAD:calc.py'])).toBe(file);
  });

  it('the same words where nothing was removed are allowed (a comment, not a truncation)', () => {
    const repo = makeRepo({ 'calc.py': file });
    repo.write('calc.py', file.replace('    total = 0\n', '    total = 0\n    # Keep the existing behaviour: ...\n    # ... rest of the code ...\n'));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({ decision: 'allowed', needsApproval: false });
  });
});

describe('11: many small losses add up', () => {
  it('twelve 40-line files deleted in one commit need a person: check blocks, ci blocks', () => {
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`mod${i}.py`, lines(40, `m${i}`)]));
    const repo = makeRepo({ ...files, 'keep.txt': 'k\n' });
    for (const f of Object.keys(files)) rmSync(path.join(repo.dir, f));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.blocked).toBe(12);
    expect(json.files[0].reasons.join()).toMatch(/as a whole loses 480 lines through 12/);
    // nothing left HEAD: every file still there
    expect(repo.git(['ls-tree', '--name-only', 'HEAD']).split('\n').filter(Boolean)).toHaveLength(13);
    repo.git(['reset', '-q', '--hard']);
    const head = prHead(repo, () => {
      for (const f of Object.keys(files)) rmSync(path.join(repo.dir, f));
    });
    const ci = repo.guardJson(['ci', '--base', 'main', '--head', head]);
    expect(ci.code).toBe(1);
    expect(ci.json.blocked).toBe(12);
  });
});

describe('12: a reindent is not a loss', () => {
  it('a whitespace-only rewrite of a large file is allowed, flagged whitespaceOnly, in check and ci', () => {
    const src = Array.from({ length: 300 }, (_, i) => `  call${i}(a, b);`).join('\n') + '\n';
    const repo = makeRepo({ 'app.js': src });
    repo.write('app.js', src.replace(/^ {2}/gm, '    '));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({ status: 'modify', whitespaceOnly: true, needsApproval: false, decision: 'allowed' });
    repo.git(['reset', '-q', '--hard']);
    const head = prHead(repo, () => repo.write('app.js', src.replace(/^ {2}/gm, '\t')));
    const ci = repo.guardJson(['ci', '--base', 'main', '--head', head]);
    expect(ci.code).toBe(0);
    expect(ci.json.files[0]).toMatchObject({ whitespaceOnly: true, decision: 'allowed' });
  });

  it('a reindent that also deletes code is still a replace', () => {
    const src = Array.from({ length: 300 }, (_, i) => `  call${i}(a, b);`).join('\n') + '\n';
    const repo = makeRepo({ 'app.js': src });
    repo.write('app.js', src.replace(/^ {2}/gm, '    ').split('\n').slice(0, 200).join('\n') + '\n');
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.files[0]).toMatchObject({ status: 'replace', whitespaceOnly: false });
  });

  it('guard write of a reindented file writes it, flagged whitespaceOnly', () => {
    const src = Array.from({ length: 300 }, (_, i) => `  call${i}(a, b);`).join('\n') + '\n';
    const repo = makeRepo({ 'app.js': src });
    const next = src.replace(/^ {2}/gm, '    ');
    const r = repo.guardJson(['write', 'app.js', '--auto'], { input: next });
    expect(r.code).toBe(0);
    expect(r.json.files[0]).toMatchObject({ whitespaceOnly: true, written: true });
    expect(repo.read('app.js')).toBe(next);
  });
});
