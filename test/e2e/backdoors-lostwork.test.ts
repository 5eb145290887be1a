/**
 * Issue 13, "No back doors" (items 9-18, 22, 23, 25, 26): each attack or odd
 * input performed as an agent would, through the built CLI in a real
 * repository, asserting through git and the file system that nothing
 * destructive got in and nothing was lost.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resealJournal } from '../../src/git/journal-seal.js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  lanePath,
  laneWrite,
  lines,
  makeRepo,
  outsideDir,
  snapshotTree,
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
    expect(json.files.map((f: any) => [f.path, f.decision])).toEqual([
      ['cfg', 'blocked'],
      ['hooks', 'blocked'],
    ]);
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
    repo.write(
      'calc.py',
      'def run(x):\n    total = 0\n    # ... rest\u200b of the code ...\n    return total\n',
    );
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.files[0].reasons.join()).toMatch(/elision placeholder/);
    expect(repo.git(['show', 'HEAD:calc.py'])).toBe(file);
  });

  it('the same words where nothing was removed are allowed (a comment, not a truncation)', () => {
    const repo = makeRepo({ 'calc.py': file });
    repo.write(
      'calc.py',
      file.replace(
        '    total = 0\n',
        '    total = 0\n    # Keep the existing behaviour: ...\n    # ... rest of the code ...\n',
      ),
    );
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({ decision: 'allowed', needsApproval: false });
  });
});

describe('11: many small losses add up', () => {
  it('twelve 40-line files deleted in one commit need a person: check blocks, ci blocks', () => {
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`mod${i}.py`, lines(40, `m${i}`)]),
    );
    const repo = makeRepo({ ...files, 'keep.txt': 'k\n' });
    for (const f of Object.keys(files)) rmSync(path.join(repo.dir, f));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.blocked).toBe(12);
    expect(json.files[0].reasons.join()).toMatch(/as a whole loses 480 lines through 12/);
    // nothing left HEAD: every file still there
    expect(repo.git(['ls-tree', '--name-only', 'HEAD']).split('\n').filter(Boolean)).toHaveLength(
      13,
    );
    repo.git(['reset', '-q', '--hard']);
    const head = prHead(repo, () => {
      for (const f of Object.keys(files)) rmSync(path.join(repo.dir, f));
    });
    const ci = repo.guardJson(['ci', '--base', 'main', '--head', head]);
    expect(ci.code).toBe(1);
    expect(ci.json.blocked).toBe(12);
  });
});

describe('11: many small losses through a lane', () => {
  it('review --auto of a lane that deleted twelve 40-line files merges none of the deletions', () => {
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`mod${i}.py`, lines(40, `m${i}`)]),
    );
    const repo = makeRepo({ ...files, 'keep.txt': 'k\n' });
    const lane = startLane(repo);
    for (const f of Object.keys(files)) rmSync(path.join(lane, f));
    laneWrite(lane, 'keep.txt', 'k\nmore\n');
    const r = repo.guardJson(['review', 'agent', '--auto']);
    expect(r.code).toBe(1);
    expect(r.json.blocked).toBe(12);
    for (const f of Object.keys(files)) expect(existsSync(path.join(repo.dir, f))).toBe(true);
    expect(repo.read('keep.txt')).toBe('k\nmore\n'); // the small edit still merged
  });
});

describe('12: a reindent is not a loss', () => {
  it('a whitespace-only rewrite of a large file is allowed, flagged whitespaceOnly, in check and ci', () => {
    const src = Array.from({ length: 300 }, (_, i) => `  call${i}(a, b);`).join('\n') + '\n';
    const repo = makeRepo({ 'app.js': src });
    repo.write('app.js', src.replace(/^ {2}/gm, '    '));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({
      status: 'modify',
      whitespaceOnly: true,
      needsApproval: false,
      decision: 'allowed',
    });
    repo.git(['reset', '-q', '--hard']);
    const head = prHead(repo, () => repo.write('app.js', src.replace(/^ {2}/gm, '\t')));
    const ci = repo.guardJson(['ci', '--base', 'main', '--head', head]);
    expect(ci.code).toBe(0);
    expect(ci.json.files[0]).toMatchObject({ whitespaceOnly: true, decision: 'allowed' });
  });

  it('a reindent that also deletes code is still a replace', () => {
    const src = Array.from({ length: 300 }, (_, i) => `  call${i}(a, b);`).join('\n') + '\n';
    const repo = makeRepo({ 'app.js': src });
    repo.write(
      'app.js',
      src.replace(/^ {2}/gm, '    ').split('\n').slice(0, 200).join('\n') + '\n',
    );
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

function decisionsFile(list: unknown): string {
  const f = path.join(outsideDir(), 'decisions.json');
  writeFileSync(f, JSON.stringify(list));
  return f;
}

describe('15: guard start does not follow a planted .guard symlink', () => {
  it('refuses, names the link, and checks nothing out outside the work tree', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const elsewhere = outsideDir();
    symlinkSync(elsewhere, path.join(repo.dir, '.guard'));
    const r = repo.guardJson(['start', 'agent']);
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'E_PATH_ESCAPE' });
    expect(r.json.error.message).toMatch(/\.guard is a symlink/);
    expect(existsSync(path.join(elsewhere, 'lanes'))).toBe(false);
    expect(repo.git(['worktree', 'list', '--porcelain']).match(/^worktree /gm)).toHaveLength(1);
    expect(repo.refs()).toEqual([]);
    // and a planted .guard/lanes link the same
    rmSync(path.join(repo.dir, '.guard'));
    mkdirSync(path.join(repo.dir, '.guard'));
    symlinkSync(elsewhere, path.join(repo.dir, '.guard', 'lanes'));
    expect(repo.guardJson(['start', 'agent']).json.error.message).toMatch(
      /\.guard\/lanes is a symlink/,
    );
    expect(existsSync(path.join(elsewhere, 'agent'))).toBe(false);
  });
});

describe('16: the undo of a review puts the index back too', () => {
  it('following the printed undo leaves nothing of the merge staged', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const lane = startLane(repo);
    laneWrite(lane, 'a.txt', 'a\nfrom the agent\n');
    const r = repo.guard(['review', 'agent', '--auto']);
    expect(r.code).toBe(0);
    const undo = /Undo this review: (guard restore \S+(?: --staged)?)/.exec(r.stdout)?.[1];
    expect(undo).toMatch(/--staged$/);
    expect(repo.git(['diff', '--cached', '--name-only'])).toBe('a.txt\n');
    expect(repo.guard(undo!.split(' ').slice(1)).code).toBe(0);
    // the next commit commits nothing of the review
    expect(repo.git(['diff', '--cached', '--name-only'])).toBe('');
    expect(repo.read('a.txt')).toBe('a\n');
  });
});

describe('22: writes that cannot be: clear errors, nothing recorded as allowed', () => {
  it('under a file, --cwd naming a file, into a submodule: exit 2, one line, no decision, nothing written', () => {
    const repo = makeRepo({ 'f.txt': 'f\n' });
    const sub = outsideDir();
    spawnSync('git', ['init', '-q', sub], { env: cleanEnv() });
    writeFileSync(path.join(sub, 's.txt'), 's\n');
    spawnSync('git', ['-C', sub, 'add', '.'], { env: cleanEnv() });
    spawnSync('git', ['-C', sub, 'commit', '-qm', 's'], { env: cleanEnv() });
    repo.git(['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub']);
    repo.commitAll('submodule');
    const before = snapshotTree(repo.dir);
    const cases: Array<[string[], RegExp]> = [
      [['write', 'f.txt/x'], /f\.txt is a file, not a folder/],
      [['write', 'x', '--cwd', path.join(repo.dir, 'f.txt')], /--cwd .* is a file, not a folder/],
      [['write', 'sub/s.txt'], /sub is a repository of its own/],
      [['write', 'sub/new.txt'], /sub is a repository of its own/],
    ];
    for (const [args, message] of cases) {
      const r = repo.guard([...args, '--auto'], { input: 'x\n' });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/internal|E_GIT|at .*\.js/);
    }
    expect(snapshotTree(repo.dir)).toEqual(before);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);
    expect(readFileSync(path.join(repo.dir, 'sub', 's.txt'), 'utf8')).toBe('s\n');
    expect(existsSync(path.join(repo.dir, 'sub', 'new.txt'))).toBe(false);
  });
});

describe('25: an approval for a name ending in a space round-trips to ci', () => {
  it('review --commit writes a trailer ci reads back for "notes.txt "', () => {
    const name = 'notes.txt ';
    const repo = makeRepo({ [name]: lines(150, 'old'), 'keep.txt': 'k\n' });
    const lane = startLane(repo);
    laneWrite(lane, name, lines(150, 'new'));
    const r = repo.guardJson([
      'review',
      'agent',
      '--decisions',
      decisionsFile([{ path: name, action: 'approve' }]),
      '--commit',
      '-m',
      'take the rewrite',
    ]);
    expect(r.code).toBe(0);
    expect(repo.git(['log', '-1', '--format=%B'])).toContain(`Guard-Approved: "notes.txt " `);
    const ci = repo.guardJson(['ci', '--base', 'HEAD~1', '--head', 'HEAD']);
    expect(ci.json.files).toMatchObject([{ path: name, decision: 'approved' }]);
    expect(ci.code).toBe(0);
  });
});

describe('26: small contract slips', () => {
  it('log --limit 0 says how many entries it hides, not that there are none; a negative limit is a usage error', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('a.txt', 'b\n');
    repo.git(['add', '-A']);
    expect(repo.guard(['check', '--auto']).code).toBe(0);
    const r = repo.guard(['log', '--limit', '0']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/no checkpoints or decisions yet/);
    expect(r.stdout).toMatch(/1 older entries not shown/);
    expect(repo.guard(['log', '--limit', '-1']).code).toBe(2);
  });

  it('run NAME -- /nonexistent exits 2 and leaves no lane behind', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['run', 'agent', '--', '/nonexistent/cmd']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot run "\/nonexistent\/cmd": not found/);
    expect(existsSync(lanePath(repo, 'agent'))).toBe(false);
    expect(repo.refs('refs/guard/lanes/')).toEqual([]);
    expect(repo.git(['branch', '--list', 'guard/*'])).toBe('');
    // a lane that existed before stays
    startLane(repo, 'kept');
    expect(repo.guard(['run', 'kept', '--', '/nonexistent/cmd']).code).toBe(2);
    expect(existsSync(lanePath(repo, 'kept'))).toBe(true);
  });

  it('a config {"__proto__": {}} is a config error naming the key', () => {
    const repo = makeRepo({ 'guard.config.json': '{"__proto__": {}}\n', 'a.txt': 'a\n' });
    repo.write('a.txt', 'b\n');
    repo.git(['add', '-A']);
    const r = repo.guard(['check', '--auto']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"__proto__" is not a known key/);
  });

  it('ci --format github mentions a job summary only when GITHUB_STEP_SUMMARY is set', () => {
    const repo = makeRepo({ 'big.txt': lines(150) });
    const head = prHead(repo, () => rmSync(path.join(repo.dir, 'big.txt')));
    const without = repo.guard(['ci', '--base', 'main', '--head', head, '--format', 'github'], {
      env: { GITHUB_STEP_SUMMARY: undefined },
    });
    expect(without.code).toBe(1);
    expect(without.stdout).not.toMatch(/job summary/);
    const file = path.join(outsideDir(), 'summary.md');
    const withIt = repo.guard(['ci', '--base', 'main', '--head', head, '--format', 'github'], {
      env: { GITHUB_STEP_SUMMARY: file },
    });
    expect(withIt.stdout).toMatch(/job summary/);
    expect(readFileSync(file, 'utf8')).toContain('big.txt');
  });

  it('ci --format bogus names the value and the choices on one line', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['ci', '--base', 'HEAD', '--format', 'bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(
      /^guard: Invalid values: Argument: format, Given: "bogus", Choices: "text", .*"sarif"$/,
    );
  });
});

describe('23: blocking N deletions costs one tree, not N', () => {
  it('60 blocked deletions: one rejected commit holding all of them, a constant number of new objects', () => {
    const files = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [
        `f${String(i).padStart(2, '0')}.txt`,
        lines(120, `f${i}`),
      ]),
    );
    const repo = makeRepo(files);
    repo.git(['gc', '-q']);
    const objects = () => Number(/^count: (\d+)/m.exec(repo.git(['count-objects', '-v']))![1]);
    const before = objects();
    for (const f of Object.keys(files)) rmSync(path.join(repo.dir, f));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.blocked).toBe(60);
    const refs = new Set(json.files.map((f: any) => f.ref));
    expect(refs.size).toBe(1);
    const ref = [...refs][0] as string;
    expect(repo.git(['rev-parse', `${ref}^`]).trim()).toBe(repo.git(['rev-parse', 'HEAD']).trim());
    expect(
      repo
        .git(['diff', '--name-only', `${ref}^`, ref])
        .split('\n')
        .filter(Boolean),
    ).toHaveLength(60);
    expect(repo.git(['diff', '--numstat', `${ref}^`, ref, '--', 'f07.txt']).trim()).toBe(
      '0\t120\tf07.txt',
    );
    // the rejected commit, its tree, the decision record (and its empty tree): not 60 commits and 60 trees
    expect(objects() - before).toBeLessThanOrEqual(6);
    // and nothing was lost: every deleted file is still in HEAD
    expect(repo.git(['ls-tree', '--name-only', 'HEAD']).split('\n').filter(Boolean)).toHaveLength(
      60,
    );
  });
});

describe('13: discard keeps repositories nested in the lane', () => {
  it('a clone the agent made, with local commits and uncommitted work, is kept and can be checked out after discard', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const lane = startLane(repo);
    const inner = path.join(lane, 'vendor', 'lib');
    mkdirSync(inner, { recursive: true });
    laneGit(inner, ['init', '-q']);
    writeFileSync(path.join(inner, 'v.txt'), 'committed\n');
    laneGit(inner, ['add', '.']);
    laneGit(inner, ['commit', '-qm', 'only here']);
    writeFileSync(path.join(inner, 'v.txt'), 'committed\nuncommitted\n');
    writeFileSync(path.join(inner, 'untracked.txt'), 'untracked\n');
    const r = repo.guardJson(['discard', 'agent']);
    expect(r.code).toBe(0);
    expect(existsSync(lane)).toBe(false);
    expect(r.json.nested).toEqual([expect.objectContaining({ path: 'vendor/lib' })]);
    const kept = r.json.nested[0].commit;
    // through git: the checkpoint holds the uncommitted and untracked work, its parent the local commit
    expect(repo.git(['show', `${kept}:v.txt`])).toBe('committed\nuncommitted\n');
    expect(repo.git(['show', `${kept}:untracked.txt`])).toBe('untracked\n');
    expect(repo.git(['log', '--format=%s', `${kept}^`])).toBe('only here\n');
    expect(repo.refs('refs/guard/checkpoints/')).toContain(
      `refs/guard/checkpoints/${r.json.nested[0].checkpoint}`,
    );
  });

  it("uncommitted work inside a lane's submodule is kept", () => {
    const sub = outsideDir();
    for (const args of [
      ['init', '-q', sub],
      ['-C', sub, 'add', '.'],
      ['-C', sub, 'commit', '-qm', 's', '--allow-empty'],
    ])
      spawnSync('git', args, { env: cleanEnv() });
    writeFileSync(path.join(sub, 's.txt'), 's\n');
    spawnSync('git', ['-C', sub, 'add', '.'], { env: cleanEnv() });
    spawnSync('git', ['-C', sub, 'commit', '-qm', 'file'], { env: cleanEnv() });
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.git(['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub']);
    repo.commitAll('submodule');
    const lane = startLane(repo);
    laneGit(lane, ['-c', 'protocol.file.allow=always', 'submodule', 'update', '--init', '-q']);
    writeFileSync(path.join(lane, 'sub', 's.txt'), 's\nagent work\n');
    const r = repo.guardJson(['discard', 'agent']);
    expect(r.code).toBe(0);
    expect(r.json.nested).toEqual([expect.objectContaining({ path: 'sub' })]);
    expect(repo.git(['show', `${r.json.nested[0].commit}:s.txt`])).toBe('s\nagent work\n');
  });

  it('a nested repository that cannot be kept stops the discard, names it, and removes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const lane = startLane(repo);
    const inner = path.join(lane, 'broken');
    mkdirSync(inner);
    laneGit(inner, ['init', '-q']);
    writeFileSync(path.join(inner, 'w.txt'), 'work\n');
    laneGit(inner, ['add', '.']);
    laneGit(inner, ['commit', '-qm', 'w']);
    // planted by a sly agent: the repository hides guard's refs from a fetch
    laneGit(inner, ['config', 'uploadpack.hideRefs', 'refs/guard/']);
    const r = repo.guardJson(['discard', 'agent']);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ code: 'E_NESTED_REPO' });
    expect(r.json.error.message).toMatch(/^broken is a git repository inside the lane/);
    expect(readFileSync(path.join(inner, 'w.txt'), 'utf8')).toBe('work\n');
    expect(repo.refs('refs/guard/lanes/')).toEqual(['refs/guard/lanes/agent']);
  });
});

/** `guard run agent --json -- CMD...` (--json before the `--`, or it is the command's). */
function runJson(repo: TestRepo, cmd: string[]): { code: number; json: any } {
  const r = repo.guard(['run', 'agent', '--json', '--', ...cmd]);
  return { code: r.code, json: JSON.parse(r.stdout) };
}

describe('14: a lane is not a sandbox: guard run watches the main tree', () => {
  it('an agent that deletes an untracked main-tree file and edits a tracked one is reported, and the printed command brings both back', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('notes.txt', 'my untracked notes\n');
    const before = snapshotTree(repo.dir);
    const r = runJson(repo, [
      'sh',
      '-c',
      'rm ../../../notes.txt && echo agent >> ../../../a.txt && echo lane > in-lane.txt',
    ]);
    expect(r.code).toBe(0);
    expect(existsSync(path.join(repo.dir, 'notes.txt'))).toBe(false);
    expect(r.json.mainTree.changed).toEqual([
      { path: 'a.txt', change: 'modified' },
      { path: 'notes.txt', change: 'deleted' },
    ]);
    expect(r.json.mainTree.restore).toBe(
      `guard restore ${r.json.mainTree.checkpoint} -- a.txt notes.txt`,
    );
    // the lane's own work is not reported as outside
    expect(r.json.files.map((f: any) => f.path)).toEqual(['in-lane.txt']);
    const back = repo.guard(r.json.mainTree.restore.split(' ').slice(1));
    expect(back.code).toBe(0);
    expect(snapshotTree(repo.dir)).toEqual(before);
    // and the human summary says it, with the same command
    const again = repo.guard(['run', 'agent', '--', 'sh', '-c', 'rm ../../../notes.txt']);
    expect(again.stdout).toMatch(
      /the main tree changed outside the lane while the command ran \(1 file\)/,
    );
    expect(again.stdout).toMatch(/put it back: guard restore \S+ -- notes\.txt/);
  });

  it('a command that leaves the main tree alone reports nothing there', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = runJson(repo, ['sh', '-c', 'echo x > new.txt']);
    expect(r.json.mainTree).toMatchObject({ changed: [], restore: null });
  });
});

describe('17: restore is byte exact under * text=auto', () => {
  it('a CRLF file written by guard write and then restored comes back CRLF, byte for byte', () => {
    const repo = makeRepo({ '.gitattributes': '* text=auto\n', 'a.txt': 'a\n' });
    const crlf = Buffer.from('one\r\ntwo\r\nthree\r\n');
    expect(repo.guard(['write', 'notes.txt', '--auto'], { input: crlf }).code).toBe(0);
    const second = repo.guardJson(['write', 'notes.txt', '--auto'], { input: 'replaced\n' });
    expect(readFileSync(path.join(repo.dir, 'notes.txt'), 'utf8')).toBe('replaced\n');
    expect(repo.guard(['restore', second.json.checkpoint, '--', 'notes.txt']).code).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'notes.txt'))).toEqual(crlf);
  });

  it("a whole-tree checkpoint keeps an agent's CRLF file raw too, and its restore undoes byte for byte", () => {
    const repo = makeRepo({ '.gitattributes': '* text=auto\n', 'a.txt': 'a\n' });
    const crlf = Buffer.from('x\r\ny\r\n');
    writeFileSync(path.join(repo.dir, 'win.txt'), crlf);
    // a restore checkpoints the whole tree first (its undo); restoring that undo must bring the bytes back
    const cp = repo.guardJson(['write', 'a.txt', '--auto'], { input: 'b\n' }).json.checkpoint;
    const r = repo.guardJson(['restore', cp]);
    rmSync(path.join(repo.dir, 'win.txt'));
    expect(repo.guard(['restore', r.json.undo]).code).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'win.txt'))).toEqual(crlf);
  });
});

describe('18: a whole-tree restore that meets a folder', () => {
  it('finishes what it can, leaves the blocked path whole, reports it, exits 1, and prints the undo', () => {
    const repo = makeRepo({ x: 'file x\n', 'y.txt': 'y\n', '.gitignore': '*.log\n' });
    const cp = repo.guardJson(['write', 'y.txt', '--auto'], { input: 'y2\n' }).json
      .checkpoint as string;
    // take a whole-tree checkpoint of the original state to restore to
    const whole = repo.guardJson(['restore', cp]).json.undo as string; // state: x file, y2
    // the agent turns x into a folder with a tracked-to-be file and an ignored log, and edits y.txt
    rmSync(path.join(repo.dir, 'x'));
    mkdirSync(path.join(repo.dir, 'x'));
    writeFileSync(path.join(repo.dir, 'x', 'inner.txt'), 'inner\n');
    writeFileSync(path.join(repo.dir, 'x', 'debug.log'), 'ignored, guard does not know it\n');
    writeFileSync(path.join(repo.dir, 'y.txt'), 'agent\n');
    const r = repo.guard(['restore', whole]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /did not restore x: a folder stands there holding files the checkpoint does not know \(x\/debug\.log\)/,
    );
    expect(r.stdout).toMatch(/undo: guard restore \S+/);
    // y.txt was restored; x is left whole, nothing under it removed
    expect(repo.read('y.txt')).toBe('y2\n');
    expect(repo.read('x/inner.txt')).toBe('inner\n');
    expect(repo.read('x/debug.log')).toBe('ignored, guard does not know it\n');
    // once the unknown file is moved away, the same restore finishes
    rmSync(path.join(repo.dir, 'x', 'debug.log'));
    expect(repo.guard(['restore', whole]).code).toBe(0);
    expect(repo.read('x')).toBe('file x\n');
  });
});

describe('18: a restore that meets a file where a folder is needed', () => {
  it('an ignored file named like the folder blocks only that path, and is left alone', () => {
    const repo = makeRepo({ 'd/f.txt': 'f\n', 'e.txt': 'e\n', '.gitignore': '/d\n!/d/\n' });
    const cp = repo.guardJson(['write', 'e.txt', '--auto'], { input: 'e2\n' }).json
      .checkpoint as string;
    const whole = repo.guardJson(['restore', cp]).json.undo as string; // d/f.txt, e2
    rmSync(path.join(repo.dir, 'd'), { recursive: true });
    writeFileSync(path.join(repo.dir, 'd'), 'an ignored file the agent made\n');
    writeFileSync(path.join(repo.dir, 'e.txt'), 'agent\n');
    const r = repo.guard(['restore', whole]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/did not restore d\/f\.txt: d is a file guard does not know about/);
    expect(r.stdout).toMatch(/undo: guard restore \S+/);
    expect(repo.read('e.txt')).toBe('e2\n');
    expect(repo.read('d')).toBe('an ignored file the agent made\n');
  });
});

describe('new: a reader that goes away', () => {
  it('guard write | head -c0 writes the file and prints no stack trace', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = spawnSync(
      'sh',
      ['-c', `printf 'new\\n' | "$NODE" "$CLI" write b.txt --json | head -c 0`],
      {
        cwd: repo.dir,
        env: cleanEnv({ CI: 'true', NODE: process.execPath, CLI }),
      },
    );
    expect(r.stderr.toString()).not.toMatch(/EPIPE|at .*\.js/);
    expect(repo.read('b.txt')).toBe('new\n');
  });
});

describe('11: the session base of guard write', () => {
  const file = lines(300, 'keep');
  const cut = (text: string, n: number) => text.split('\n').slice(n).join('\n');

  it('three writes that each remove under half of a file: the second is measured against the session start and blocked', () => {
    const repo = makeRepo({ 'mod.py': file });
    const env = { GUARD_SESSION: 'agent-session-1' };
    const w1 = repo.guardJson(['write', 'mod.py', '--auto'], { input: cut(file, 140), env });
    expect(w1.json.files[0]).toMatchObject({ decision: 'allowed', written: true });
    const w2 = repo.guardJson(['write', 'mod.py', '--auto'], { input: cut(file, 210), env });
    expect(w2.code).toBe(1);
    expect(w2.json.files[0]).toMatchObject({
      decision: 'blocked',
      status: 'replace',
      existingLines: 300,
    });
    expect(w2.json.files[0].reasons.join()).toMatch(/as session agent-session-1 first saw it/);
    expect(repo.read('mod.py')).toBe(cut(file, 140));
    // the refused write is kept, and the first checkpoint still has the whole file
    expect(repo.git(['show', `${w2.json.files[0].ref}:mod.py`])).toBe(cut(file, 210));
    expect(repo.git(['show', `refs/guard/checkpoints/${w1.json.checkpoint}:mod.py`])).toBe(file);
    // another session does not inherit agent-session-1's base, but the same day it is still measured
    // against the file as guard write first saw it today (refs/guard/write-base/, since the branch gate:
    // a fresh --session per write must not make each write its own base; branch-gate-steps.test.ts, 5.)
    const other = repo.guardJson(['write', 'mod.py', '--auto', '--session', 'another'], {
      input: cut(file, 210),
    });
    expect(other.json.files[0].decision).toBe('blocked');
    expect(other.json.files[0].reasons.join()).toMatch(/as guard write first saw it today/);
    expect(other.json.files[0].reasons.join()).not.toMatch(/agent-session-1/);
    expect(repo.read('mod.py')).toBe(cut(file, 140));
    // on another day (no day's base yet), --session names the session: another one starts from the disk
    // (another day has neither the refs nor the journal's word on them: removing only the refs is
    // an agent resetting the sum, which the journal keeps, adv4-writebase.test.ts)
    for (const ref of repo.refs('refs/guard/write-base/')) repo.git(['update-ref', '-d', ref]);
    const journal = path.join(repo.dir, '.git', 'guard', 'journal');
    writeFileSync(
      journal,
      readFileSync(journal, 'utf8')
        .split('\n')
        .filter((l) => !l.includes('refs/guard/write-base/'))
        .join('\n'),
    );
    // (as guard would have left it: sealed, git/journal-seal.ts)
    resealJournal(path.join(repo.dir, '.git'), journal);
    const nextDay = repo.guardJson(['write', 'mod.py', '--auto', '--session', 'another'], {
      input: cut(file, 210),
    });
    expect(nextDay.json.files[0].decision).toBe('allowed');
    expect(repo.read('mod.py')).toBe(cut(file, 210));
  });

  it("the day's base is found by the file's name, after guard packs its refs, and under the older names", () => {
    const repo = makeRepo({ 'mod.py': file, 'other.py': file });
    const w1 = repo.guardJson(['write', 'mod.py', '--auto'], { input: cut(file, 140) });
    expect(w1.json.files[0]).toMatchObject({ decision: 'allowed', written: true });
    // one ref, in the folder named by the work tree and the path (git/session-base.ts)
    const [ref, ...more] = repo.refs('refs/guard/write-base/');
    expect(more).toEqual([]);
    expect(ref).toMatch(
      /^refs\/guard\/write-base\/\d{4}-\d\d-\d\d\/f\/[0-9a-f]{16}\/\d{8}T\d{6}Z-[0-9a-f]{8}$/,
    );
    const blocked = (r: ReturnType<typeof repo.guardJson>) => {
      expect(r.code).toBe(1);
      expect(r.json.files[0].decision).toBe('blocked');
      expect(r.json.files[0].reasons.join()).toMatch(/as guard write first saw it today/);
      expect(repo.read('mod.py')).toBe(cut(file, 140));
    };
    // packed (guard packs its refs every few hundred calls): read from packed-refs
    repo.git(['pack-refs', '--all', '--prune']);
    expect(existsSync(path.join(repo.dir, '.git', ref!))).toBe(false);
    blocked(repo.guardJson(['write', 'mod.py', '--auto'], { input: cut(file, 210) }));
    // another file of the same day has its own base: the disk
    const w2 = repo.guardJson(['write', 'other.py', '--auto'], { input: cut(file, 140) });
    expect(w2.json.files[0].decision).toBe('allowed');
    // a day that an older guard wrote (refs/guard/write-base/<day>/<time>-<id>): listed and read as then
    const old = ref!.replace(/\/f\/[0-9a-f]{16}\//, '/');
    for (const r of repo.refs('refs/guard/write-base/')) {
      if (r === ref) repo.git(['update-ref', old, r]);
      repo.git(['update-ref', '-d', r]);
    }
    blocked(repo.guardJson(['write', 'mod.py', '--auto'], { input: cut(file, 210) }));
    // (the base was found: no new ref for mod.py)
    expect(repo.refs('refs/guard/write-base/').filter((r) => r !== old)).toEqual([]);
  });

  it("the day's base by name is read from the ref files with no listing; where refs are not files (reftable), listed", () => {
    const repo = makeRepo({ 'mod.py': file });
    const traced = (input: string) => {
      const trace = path.join(mkdtempSync(path.join(tmpdir(), 'guard-trace-')), 'trace');
      const r = repo.guardJson(['write', 'mod.py', '--auto'], {
        input,
        env: { GUARD_TRACE_GIT: trace },
      });
      const git = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
      return { r, listed: git.some((l) => l.startsWith('for-each-ref')) };
    };
    expect(traced(cut(file, 140)).r.json.files[0].decision).toBe('allowed');
    const byName = traced(cut(file, 210));
    expect(byName.r.json.files[0].reasons.join()).toMatch(/as guard write first saw it today/);
    expect(byName.listed).toBe(false);
    // (git 2.39 ignores the folder; git 2.45 and later keep every ref there when the repository says so)
    mkdirSync(path.join(repo.dir, '.git', 'reftable'));
    // the journal's word on the file's bases is read first, whatever the ref store (adv4): no listing
    const fromJournal = traced(cut(file, 210));
    expect(fromJournal.r.json.files[0].reasons.join()).toMatch(/as guard write first saw it today/);
    expect(fromJournal.listed).toBe(false);
    // without it, refs that are not files are listed
    // (a repository where guard never journaled: no journal, no seal)
    rmSync(path.join(repo.dir, '.git', 'guard', 'journal'));
    rmSync(path.join(repo.dir, '.git', 'info', 'guard-journal-seal'));
    const listed = traced(cut(file, 210));
    expect(listed.r.json.files[0].reasons.join()).toMatch(/as guard write first saw it today/);
    expect(listed.listed).toBe(true);
  });

  it('a forged session record that makes the base equal the new content does not let a rewrite through', () => {
    const repo = makeRepo({ 'big.py': file });
    const next = lines(300, 'rewritten');
    // the agent forges a "session start" whose tree already holds its rewrite
    const blob = repo.git(['hash-object', '-w', '--stdin'], { input: next }).trim();
    const tree = repo.git(['mktree'], { input: `100644 blob ${blob}\tbig.py\n` }).trim();
    const body = JSON.stringify({
      v: 1,
      harness: 'cli',
      session: 's',
      kind: 'write',
      phase: 'pre',
      checkpoint: 'x',
      paths: ['big.py'],
      worktree: repo.dir,
      time: '2000-01-01T00:00:00.000Z',
    });
    const commit = repo
      .git(['commit-tree', tree, '-m', `guard session cli s: write big.py\n\n${body}`])
      .trim();
    repo.git(['update-ref', 'refs/guard/sessions/cli/s/20000101T000000Z-forged', commit]);
    const r = repo.guardJson(['write', 'big.py', '--auto', '--session', 's'], { input: next });
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({ decision: 'blocked', status: 'replace' });
    expect(repo.read('big.py')).toBe(file);
  });
});

describe('new: attacks on the new rules', () => {
  it('a space slipped inside a line of a reindent (rm -rf /tmp/x -> rm -rf / tmp/x) is not "whitespace only"', () => {
    const src =
      Array.from({ length: 200 }, (_, i) => `  step${i} --flag`).join('\n') +
      '\n  rm -rf /tmp/build\n';
    const repo = makeRepo({ 'deploy.sh': src });
    repo.write(
      'deploy.sh',
      src.replace(/^ {2}/gm, '    ').replace('rm -rf /tmp/build', 'rm -rf / tmp/build'),
    );
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.files[0]).toMatchObject({
      status: 'replace',
      whitespaceOnly: false,
      decision: 'blocked',
    });
    expect(repo.git(['show', 'HEAD:deploy.sh'])).toBe(src);
  });

  it('a placeholder added in one commit, the code beside it cut in the next: the second is caught', () => {
    const body = Array.from({ length: 30 }, (_, i) => `    total += part_${i}(x)`).join('\n');
    const file =
      `def run(x):\n    total = 0\n${body}\n    return total\n` +
      Array.from({ length: 200 }, (_, i) => `# note ${i}`).join('\n') +
      '\n';
    const repo = makeRepo({ 'calc.py': file });
    const step1 = file.replace('    total = 0\n', '    total = 0\n    # ... existing code ...\n');
    repo.write('calc.py', step1);
    expect(stageAndCheck(repo).code).toBe(0); // a comment that removes nothing
    repo.git(['commit', '-qm', 'step 1']);
    repo.write('calc.py', step1.replace(body + '\n', ''));
    const { code, json } = stageAndCheck(repo);
    expect(code).toBe(1);
    expect(json.files[0].reasons.join()).toMatch(/elision placeholder where code stood \(line 3/);
    expect(repo.git(['show', 'HEAD:calc.py'])).toBe(step1);
  });
});

describe("new: a nested repository cannot make guard run the agent's commands", () => {
  it('discard keeps a clone whose config plants an fsmonitor, hooks, a clean filter and a signing program, and runs none of them', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const lane = startLane(repo);
    const inner = path.join(lane, 'n');
    mkdirSync(inner);
    laneGit(inner, ['init', '-q']);
    writeFileSync(path.join(inner, 'w.txt'), 'work\n');
    laneGit(inner, ['add', '.']);
    laneGit(inner, ['commit', '-qm', 'w']);
    const marker = (what: string) => path.join(outsideDir(), `ran-${what}`);
    const marks = {
      fsmonitor: marker('fsmonitor'),
      hook: marker('hook'),
      filter: marker('filter'),
      gpg: marker('gpg'),
    };
    laneGit(inner, ['config', 'core.fsmonitor', `touch ${marks.fsmonitor}; false`]);
    laneGit(inner, ['config', 'filter.x.clean', `touch ${marks.filter}; cat`]);
    laneGit(inner, ['config', 'commit.gpgSign', 'true']);
    laneGit(inner, ['config', 'gpg.program', `sh -c 'touch ${marks.gpg}'`]);
    for (const hook of ['reference-transaction', 'post-index-change']) {
      writeFileSync(path.join(inner, '.git', 'hooks', hook), `#!/bin/sh\ntouch ${marks.hook}\n`, {
        mode: 0o755,
      });
    }
    writeFileSync(path.join(inner, '.gitattributes'), '* filter=x\n');
    writeFileSync(path.join(inner, 'w.txt'), 'work\nuncommitted\n');
    const r = repo.guardJson(['discard', 'agent']);
    expect(r.code).toBe(0);
    for (const m of Object.values(marks)) expect(existsSync(m), m).toBe(false);
    expect(repo.git(['show', `${r.json.nested[0].commit}:w.txt`])).toBe('work\nuncommitted\n');
  });
});

describe('11: one guard run is one session', () => {
  it('two guard writes inside a run that together cut most of a file: the second is blocked', () => {
    const file = lines(300, 'keep');
    const repo = makeRepo({ 'mod.py': file });
    const cut = (n: number) => file.split('\n').slice(n).join('\n');
    const w = (n: number) => `printf '%s' '${cut(n)}' | "$NODE" "$CLI" write mod.py --auto`;
    const r = repo.guard(['run', 'agent', '--', 'sh', '-c', `${w(140)} && ${w(210)}`], {
      env: { NODE: process.execPath, CLI },
    });
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toMatch(/first saw it/);
    expect(readFileSync(path.join(lanePath(repo, 'agent'), 'mod.py'), 'utf8')).toBe(cut(140));
  });
});
