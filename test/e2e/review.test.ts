import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  cleanupRepos,
  fixture,
  laneWrite,
  lanePath,
  lines,
  makeRepo,
  outsideDir,
  snapshotTree as snapshot,
  startLane,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/** A repo with `files` committed and lane NAME started from it with the built CLI. */
function withLane(files: Record<string, string>, name = 'agent'): { repo: TestRepo; lane: string } {
  const repo = makeRepo(files);
  return { repo, lane: startLane(repo, name) };
}

function laneGit(lane: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd: lane, env: cleanEnv() });
  if (r.status !== 0)
    throw new Error(`git ${args.join(' ')} in lane failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function laneCommit(lane: string, message = 'agent work'): void {
  laneGit(lane, ['add', '-A']);
  laneGit(lane, ['commit', '-q', '--no-verify', '-m', message]);
}

/** A decisions file outside the repository. */
function decisions(list: unknown): string {
  const f = path.join(outsideDir(), 'decisions.json');
  writeFileSync(f, typeof list === 'string' ? list : JSON.stringify(list));
  return f;
}

function file(json: any, p: string): any {
  const f = json.files.find((x: any) => x.path === p);
  if (!f) throw new Error(`no ${p} in ${JSON.stringify(json.files.map((x: any) => x.path))}`);
  return f;
}

/** Added and removed lines of `git diff REF^ REF`, without headers. */
function changedLines(repo: TestRepo, ref: string): string[] {
  return repo
    .git(['diff', '--no-color', `${ref}^`, ref])
    .split('\n')
    .filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l));
}

const staged = (repo: TestRepo) =>
  repo.git(['diff', '--cached', '--name-only']).split('\n').filter(Boolean).sort();

const PY_OLD = `class Store:
    def __init__(self):
        self.items = {}

    def get(self, key):
        return self.items.get(key)
`;
const PY_NEW = `class Store:
    def put(self, key, value):
        self.items[key] = value

    def clear(self):
        self.items.clear()
`;
const TS_OLD = `export class Box {
  private value = 0;

  get(): number {
    return this.value;
  }
}
`;
const TS_NEW = `export class Box {
  label = 'box';

  set(v: number): void {
    this.value = v;
  }
}
`;

describe('guard review --auto', () => {
  it('blocks a destructive rewrite (kept as a ref) and merges and stages a new file and a small committed edit', () => {
    const { repo, lane } = withLane({ 'state.py': fixture('state.py'), 'small.txt': lines(10) });
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    laneWrite(lane, 'small.txt', lines(10).replace('line 5\n', 'line five\n'));
    laneCommit(lane, 'small edit');
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'new.txt', 'brand new\n');

    const { code, json } = repo.guardJson(['review', 'agent', '--auto']);
    expect(code).toBe(1);
    expect(file(json, 'state.py')).toMatchObject({
      status: 'replace',
      needsApproval: true,
      decision: 'blocked',
      decider: 'auto',
    });
    expect(file(json, 'new.txt')).toMatchObject({ status: 'new', decision: 'allowed' });
    expect(file(json, 'small.txt')).toMatchObject({ status: 'modify', decision: 'allowed' });
    expect(json.blocked).toBe(1);

    // blocked: main tree untouched, the rewrite kept whole in a ref on the base
    expect(repo.read('state.py')).toBe(fixture('state.py'));
    const ref = file(json, 'state.py').ref;
    expect(repo.git(['rev-parse', `${ref}^`]).trim()).toBe(base);
    expect(repo.git(['show', `${ref}:state.py`])).toBe(fixture('state_replacement.py'));
    expect(repo.git(['diff', '--name-only', `${ref}^`, ref]).trim()).toBe('state.py');
    expect(repo.git(['diff', `${ref}^`, ref])).toContain('-class ');

    // merged and staged
    expect(repo.read('new.txt')).toBe('brand new\n');
    expect(repo.read('small.txt')).toBe(lines(10).replace('line 5\n', 'line five\n'));
    expect(staged(repo)).toEqual(['new.txt', 'small.txt']);
    expect(repo.git(['status', '--porcelain'])).toBe('A  new.txt\nM  small.txt\n');

    // the lane is untouched, the main tree was checkpointed before the merge
    expect(readFileSync(path.join(lane, 'state.py'), 'utf8')).toBe(fixture('state_replacement.py'));
    expect(repo.git(['show', `refs/guard/checkpoints/${json.checkpoint}:small.txt`])).toBe(
      lines(10),
    );
  });

  it('human output names the blocked file, its ref and the undo command', () => {
    const { repo, lane } = withLane({ 'state.py': fixture('state.py') });
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'n.txt', 'n\n');
    const r = repo.guard(['review', 'agent']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/state\.py\s+blocked \(needs a person\)/); // name first, outcome in an aligned column
    expect(r.stdout).toMatch(/kept as refs\/guard\/rejected\//);
    expect(r.stdout).toMatch(/Undo this review: guard restore \S+/);
    expect(r.stdout).toContain('1 merged and staged, 1 blocked');
  });

  it('a second review of the same lane merges nothing new and loses nothing', () => {
    const { repo, lane } = withLane({ 'state.py': fixture('state.py'), 'a.txt': lines(5) });
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'a.txt', lines(5).replace('line 2', 'line two'));
    expect(repo.guardJson(['review', '--auto']).code).toBe(1);
    const after = snapshot(repo.dir);
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    expect(file(json, 'a.txt').conflict).toBeUndefined();
    expect(snapshot(repo.dir)).toEqual(after);
    expect(staged(repo)).toEqual(['a.txt']);
    expect(repo.git(['show', `${file(json, 'state.py').ref}:state.py`])).toBe(
      fixture('state_replacement.py'),
    );
  });

  it('sees a same-size rewrite made in the same second the lane started (racy git)', () => {
    const { repo, lane } = withLane({ 'f.txt': 'aaaa\n' });
    laneWrite(lane, 'f.txt', 'bbbb\n');
    spawnSync('sleep', ['1.1']); // the review's own index copy must not look newer than the edit
    const { json } = repo.guardJson(['review', '--auto']);
    expect(json.files.map((f: any) => f.path)).toEqual(['f.txt']);
    expect(repo.read('f.txt')).toBe('bbbb\n');
  });
});

describe('guard review --decisions: strategies', () => {
  const rewrite = () => {
    const { repo, lane } = withLane({ 'state.py': fixture('state.py') });
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    return { repo, lane };
  };

  it('append keeps the old content and adds the new after it', () => {
    const { repo } = rewrite();
    const { code, json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'state.py', action: 'approve', strategy: 'append' }]),
    ]);
    expect(code).toBe(0);
    expect(file(json, 'state.py')).toMatchObject({
      decision: 'approved',
      decider: 'person',
      strategy: 'append',
    });
    expect(repo.read('state.py')).toBe(fixture('state.py') + fixture('state_replacement.py'));
    expect(staged(repo)).toEqual(['state.py']);
    expect(repo.git(['rev-parse', ':state.py']).trim()).toBe(file(json, 'state.py').blob);
  });

  it('insert puts the new content after the chosen line', () => {
    const { repo, lane } = withLane({ 'cfg.txt': 'one\ntwo\nthree\nfour\n' });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    const { code } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'cfg.txt', action: 'approve', strategy: 'insert', insertAt: 2 }]),
    ]);
    expect(code).toBe(0);
    expect(repo.read('cfg.txt')).toBe('one\ntwo\nNEW\nthree\nfour\n');
  });

  it('an out-of-range insertAt is a usage error that changes nothing; a valid one then works', () => {
    const { repo, lane } = withLane({ 'cfg.txt': 'one\ntwo\n' });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    laneWrite(lane, 'other.txt', 'other\n');
    const before = snapshot(repo.dir);
    const bad = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'cfg.txt', action: 'approve', strategy: 'insert', insertAt: 9 }]),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.json.error.code).toBe('E_USAGE');
    expect(bad.json.error.message).toMatch(/line 9/);
    expect(snapshot(repo.dir)).toEqual(before);
    expect(staged(repo)).toEqual([]);
    expect(repo.refs('refs/guard/rejected/')).toEqual([]);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);

    const good = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'cfg.txt', action: 'approve', strategy: 'insert', insertAt: 0 }]),
    ]);
    expect(good.code).toBe(0);
    expect(repo.read('cfg.txt')).toBe('NEW\none\ntwo\n');
    expect(repo.read('other.txt')).toBe('other\n');
  });

  it('a rejection (what a cancelled insert becomes) writes nothing for the file and keeps it in a ref', () => {
    const { repo, lane } = withLane({ 'cfg.txt': 'one\ntwo\n' });
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    const { code, json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'cfg.txt', action: 'reject' }]),
    ]);
    expect(code).toBe(1);
    expect(file(json, 'cfg.txt')).toMatchObject({ decision: 'rejected', decider: 'person' });
    expect(repo.read('cfg.txt')).toBe('one\ntwo\n');
    expect(changedLines(repo, file(json, 'cfg.txt').ref)).toEqual(['-one', '-two', '+NEW']);
  });

  it('extend: a Python class gains methods and keeps its old ones', () => {
    const { repo, lane } = withLane({ 'store.py': PY_OLD });
    laneWrite(lane, 'store.py', PY_NEW);
    const { code, json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'store.py', action: 'approve', strategy: 'extend' }]),
    ]);
    expect(code).toBe(0);
    expect(file(json, 'store.py')).toMatchObject({ decision: 'approved', strategy: 'extend' });
    const out = repo.read('store.py');
    for (const def of [
      'def __init__(self):',
      'def get(self, key):',
      'def put(self, key, value):',
      'def clear(self):',
    ])
      expect(out).toContain(def);
    expect(out.match(/^class Store:/gm)).toHaveLength(1);
    // it still parses as Python with all four methods inside the class
    const py = spawnSync(
      'python3',
      [
        '-c',
        'import sys; ns={}; exec(sys.stdin.read(), ns); print(sorted(k for k in vars(ns["Store"]) if not k.startswith("__") or k=="__init__"))',
      ],
      { input: out },
    );
    if (py.status === 0)
      expect(py.stdout.toString().trim()).toBe("['__init__', 'clear', 'get', 'put']");
  });

  it('extend: a TypeScript class gains members and keeps its old ones', () => {
    const { repo, lane } = withLane({ 'box.ts': TS_OLD });
    laneWrite(lane, 'box.ts', TS_NEW);
    const { code, json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'box.ts', action: 'approve', strategy: 'extend' }]),
    ]);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(file(json, 'box.ts').strategy).toBe('extend');
    const out = repo.read('box.ts');
    for (const m of [
      'private value = 0;',
      'get(): number',
      "label = 'box';",
      'set(v: number): void',
    ])
      expect(out).toContain(m);
    expect(out.match(/class Box/g)).toHaveLength(1);
  });

  it('extend with a syntax error falls back to append and warns', () => {
    const { repo, lane } = withLane({ 'retry.py': PY_OLD });
    laneWrite(lane, 'retry.py', fixture('syntax_error.py'));
    const { code, json, stderr } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'retry.py', action: 'approve', strategy: 'extend' }]),
    ]);
    expect(code).toBe(0);
    expect(file(json, 'retry.py')).toMatchObject({ decision: 'approved', strategy: 'append' });
    expect(file(json, 'retry.py').warning).toMatch(/fell back to append/);
    expect(stderr).toMatch(/retry\.py: extend fell back to append/);
    expect(repo.read('retry.py')).toBe(PY_OLD + fixture('syntax_error.py'));
  });
});

describe('guard review: hunks', () => {
  const base = lines(30);
  const lane2 = base.replace('line 2\n', 'line TWO\n').replace('line 28\n', 'line TWENTY-EIGHT\n');
  /** A protected file, so that auto review blocks it and lists its hunks without merging. */
  const twoHunks = () => {
    const { repo, lane } = withLane({
      'doc.txt': base,
      'guard.config.json': JSON.stringify({ protect: ['doc.txt'] }),
    });
    laneWrite(lane, 'doc.txt', lane2);
    laneCommit(lane);
    return { repo, lane };
  };

  it('--json lists every file with its hunks (id, index, header) and its decision', () => {
    const { repo } = twoHunks();
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    const f = file(json, 'doc.txt');
    expect(f).toMatchObject({ needsApproval: true, decision: 'blocked', status: 'modify' });
    expect(f.hunks).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{6,}$/),
        index: 0,
        header: expect.stringMatching(/^@@ -1,5 \+1,5 @@/),
      },
      {
        id: expect.stringMatching(/^[0-9a-f]{6,}$/),
        index: 1,
        header: expect.stringMatching(/^@@ -25,6 \+25,6 @@/),
      },
    ]);
    expect(f.hunks[0].id).not.toBe(f.hunks[1].id);
    expect(repo.read('doc.txt')).toBe(base);
  });

  it('takes one of two hunks by index; the other is kept in a ref', () => {
    const { repo } = twoHunks();
    const { code, json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'doc.txt', action: 'approve', hunks: [0] }]),
    ]);
    expect(repo.read('doc.txt')).toBe(base.replace('line 2\n', 'line TWO\n'));
    expect(staged(repo)).toEqual(['doc.txt']);
    const f = file(json, 'doc.txt');
    expect(f.decision).toBe('approved');
    expect(f.taken).toEqual([f.hunks[0].id]);
    expect(changedLines(repo, f.ref)).toEqual(['-line 28', '+line TWENTY-EIGHT']);
    expect(repo.git(['show', `${f.ref}:doc.txt`])).toBe(lane2);
    expect(code).toBe(1); // something was left
  });

  it('takes one of two hunks by stable id, which survives a change to the other hunk', () => {
    const { repo, lane } = twoHunks();
    const first = file(repo.guardJson(['review', '--auto']).json, 'doc.txt').hunks;
    // the agent changes its first hunk; the second keeps its id
    laneWrite(lane, 'doc.txt', lane2.replace('line TWO\n', 'line 2 (again)\n'));
    const listed = file(repo.guardJson(['review', '--auto']).json, 'doc.txt').hunks;
    expect(listed[1].id).toBe(first[1].id);
    expect(listed[0].id).not.toBe(first[0].id);

    const { json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'doc.txt', action: 'approve', hunks: [first[1].id] }]),
    ]);
    expect(repo.read('doc.txt')).toBe(base.replace('line 28\n', 'line TWENTY-EIGHT\n'));
    const f = file(json, 'doc.txt');
    expect(changedLines(repo, f.ref)).toEqual(['-line 2', '+line 2 (again)']);
  });

  it("takes a hunk edited by hand (as `e` does), by id; the lane's version is kept in a ref", () => {
    const { repo } = twoHunks();
    const id = file(repo.guardJson(['review', 'agent', '--dry-run', '--json']).json, 'doc.txt')
      .hunks[1].id;
    const edit = [
      {
        path: 'doc.txt',
        action: 'approve',
        hunks: [],
        edits: [
          {
            hunk: id,
            lines: [
              ' line 25',
              ' line 26',
              ' line 27',
              '-line 28',
              '+line 28, checked by hand',
              ' line 29',
              ' line 30',
            ],
          },
        ],
      },
    ];
    const { code, json } = repo.guardJson(['review', 'agent', '--decisions', decisions(edit)]);
    const result = base.replace('line 28\n', 'line 28, checked by hand\n');
    expect(repo.read('doc.txt')).toBe(result);
    expect(repo.git(['show', ':doc.txt'])).toBe(result); // staged as written
    const f = file(json, 'doc.txt');
    expect(f).toMatchObject({
      decision: 'approved',
      strategy: 'hunks',
      taken: [expect.any(String)],
    });
    expect(repo.git(['show', `${f.ref}:doc.txt`])).toBe(lane2); // the proposal whole, beside what was taken
    expect(changedLines(repo, f.ref)).toEqual([
      '-line 2',
      '+line TWO',
      '-line 28, checked by hand',
      '+line TWENTY-EIGHT',
    ]);
    expect(code).toBe(1); // the first hunk was left out
  });

  it('an edited hunk that does not apply is one usage error with a hint, and changes nothing', () => {
    const { repo } = twoHunks();
    const before = { files: snapshot(repo.dir), index: repo.git(['ls-files', '-s']) };
    const edit = [
      {
        path: 'doc.txt',
        action: 'approve',
        edits: [{ hunk: 0, lines: [' line 1', '-line 7', '+line seven'] }],
      },
    ];
    const r = repo.guard(['review', 'agent', '--decisions', decisions(edit)]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/"doc.txt": the edit of hunk #0 does not apply: /),
      expect.stringMatching(/' ' and '-' lines/),
    ]);
    expect({ files: snapshot(repo.dir), index: repo.git(['ls-files', '-s']) }).toEqual(before);
    expect(repo.refs('refs/guard/rejected/')).toEqual([]);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);
  });

  it('an unknown hunk id, an unknown path or a malformed file is a usage error that changes nothing', () => {
    const { repo } = twoHunks();
    const before = { files: snapshot(repo.dir), index: repo.git(['ls-files', '-s']) };
    for (const d of [
      [{ path: 'doc.txt', action: 'approve', hunks: ['deadbeef0000'] }],
      [{ path: 'doc.txt', action: 'approve', hunks: [2] }],
      [{ path: 'nope.txt', action: 'approve' }],
      [{ path: 'doc.txt', action: 'maybe' }],
      [{ path: 'doc.txt', action: 'approve', extra: 1 }],
      '[{"path": "doc.txt",',
      { path: 'doc.txt', action: 'approve' },
    ]) {
      const r = repo.guardJson(['review', '--decisions', decisions(d)]);
      expect(r.code, JSON.stringify(d)).toBe(2);
      expect(r.json.error.code).toBe('E_USAGE');
    }
    const missing = repo.guardJson([
      'review',
      '--decisions',
      path.join(outsideDir(), 'absent.json'),
    ]);
    expect(missing.code).toBe(2);
    expect({ files: snapshot(repo.dir), index: repo.git(['ls-files', '-s']) }).toEqual(before);
    expect(repo.refs('refs/guard/rejected/')).toEqual([]);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);
  });
});

describe('guard review: three-way merge onto a main tree that moved on', () => {
  const base = lines(30);

  it('main changed another part of the same file: both changes are kept', () => {
    const { repo, lane } = withLane({ 'doc.txt': base });
    laneWrite(lane, 'doc.txt', base.replace('line 2\n', 'lane 2\n'));
    laneCommit(lane);
    repo.write('doc.txt', base.replace('line 28\n', 'main 28\n'));
    repo.commitAll('main moves on');
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(0);
    expect(file(json, 'doc.txt').conflict).toBeUndefined();
    expect(repo.read('doc.txt')).toBe(
      base.replace('line 2\n', 'lane 2\n').replace('line 28\n', 'main 28\n'),
    );
    expect(staged(repo)).toEqual(['doc.txt']);
    expect(file(json, 'doc.txt').blob).toBe(repo.git(['rev-parse', ':doc.txt']).trim());
  });

  it('main changed the same lines: conflict markers, exit 1, and guard restore brings the main tree back byte for byte', () => {
    const { repo, lane } = withLane({ 'doc.txt': base, 'b.txt': 'b\n' });
    laneWrite(lane, 'doc.txt', base.replace('line 2\n', 'lane 2\n'));
    laneWrite(lane, 'c.txt', 'new from lane\n');
    repo.write('doc.txt', base.replace('line 2\n', 'main 2\n')); // uncommitted work of the user
    repo.write('mine.txt', 'untracked, mine\n');
    const before = snapshot(repo.dir);
    const statusBefore = repo.git(['status', '--porcelain']);

    const r = repo.guard(['review', '--auto']);
    expect(r.code).toBe(1);
    const doc = repo.read('doc.txt');
    expect(doc).toMatch(/^<<<<<<< main\nmain 2\n=======\nlane 2\n>>>>>>> lane agent\n/m);
    expect(doc).toContain('line 28\n');
    expect(r.stdout).toMatch(/doc\.txt\s+conflicts with later changes/);
    const cp = /guard restore (\S+)/.exec(r.stdout)?.[1];
    expect(cp).toBeTruthy();
    // the conflicted file is not staged; the clean one is
    expect(staged(repo)).toEqual(['c.txt']);

    const undo = repo.guard(['restore', cp!]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(snapshot(repo.dir)).toEqual(before);
    expect(repo.read('doc.txt')).toBe(base.replace('line 2\n', 'main 2\n'));
    expect(existsSync(path.join(repo.dir, 'c.txt'))).toBe(false);
    void statusBefore;
  });

  it('--json reports the conflict and the checkpoint to restore', () => {
    const { repo, lane } = withLane({ 'doc.txt': base });
    laneWrite(lane, 'doc.txt', base.replace('line 2\n', 'lane 2\n'));
    repo.write('doc.txt', base.replace('line 2\n', 'main 2\n'));
    const before = snapshot(repo.dir);
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    expect(file(json, 'doc.txt')).toMatchObject({ conflict: true });
    expect(json.conflicts).toBe(1);
    expect(typeof json.checkpoint).toBe('string');
    expect(repo.guard(['restore', json.checkpoint]).code).toBe(0);
    expect(snapshot(repo.dir)).toEqual(before);
  });
});

describe('guard review: containment', () => {
  it('a symlink in the lane pointing outside is flagged, blocked in auto mode, and never followed', () => {
    const out = outsideDir();
    writeFileSync(path.join(out, 'secret.txt'), 'outside secret\n');
    const { repo, lane } = withLane({ 'a.txt': 'a\n' });
    symlinkSync(path.join(out, 'secret.txt'), path.join(lane, 'link'));
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    const f = file(json, 'link');
    expect(f).toMatchObject({ symlink: true, needsApproval: true, decision: 'blocked' });
    expect(f.reasons.join(' ')).toMatch(/outside/);
    expect(f.hunks).toEqual([]);
    expect(existsSync(path.join(repo.dir, 'link'))).toBe(false);
    expect(json.files.map((x: any) => x.path)).toEqual(['link']);
    // the ref keeps the link as a link, not the outside file's content
    expect(repo.git(['ls-tree', f.ref, 'link'])).toMatch(/^120000 /);
    expect(repo.git(['show', `${f.ref}:link`])).toBe(path.join(out, 'secret.txt'));
    expect(JSON.stringify(json)).not.toContain('outside secret');
  });

  it('an approved outside symlink is written as a symlink, not through it', () => {
    const out = outsideDir();
    writeFileSync(path.join(out, 'secret.txt'), 'outside secret\n');
    const { repo, lane } = withLane({ 'a.txt': 'a\n' });
    symlinkSync(path.join(out, 'secret.txt'), path.join(lane, 'link'));
    const { code } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'link', action: 'approve' }]),
    ]);
    expect(code).toBe(0);
    expect(lstatSync(path.join(repo.dir, 'link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(repo.dir, 'link'))).toBe(path.join(out, 'secret.txt'));
    expect(readFileSync(path.join(out, 'secret.txt'), 'utf8')).toBe('outside secret\n');
    expect(repo.git(['ls-files', '-s', 'link'])).toMatch(/^120000 /);
  });

  it("a main-tree symlink over the lane's folder (uncommitted) is never written through", () => {
    const out = outsideDir();
    const { repo, lane } = withLane({ 'dir/a.txt': 'a\n', 'top.txt': 't\n' });
    laneWrite(lane, 'dir/b.txt', 'lane b\n');
    laneWrite(lane, 'dir/a.txt', 'a\na2\n');
    laneWrite(lane, 'top.txt', 't\nt2\n');
    // the user replaces dir/ with a symlink to a folder outside
    rmSync(path.join(repo.dir, 'dir'), { recursive: true });
    symlinkSync(out, path.join(repo.dir, 'dir'));
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    expect(readdirSync(out)).toEqual([]);
    expect(file(json, 'dir/b.txt').decision).not.toMatch(/allowed|approved/);
    expect(file(json, 'dir/a.txt').decision).not.toMatch(/allowed|approved/);
    expect(repo.read('top.txt')).toBe('t\nt2\n');
    expect(lstatSync(path.join(repo.dir, 'dir')).isSymbolicLink()).toBe(true);
    // what was not written is still reachable from a ref
    const ref = file(json, 'dir/b.txt').ref;
    expect(ref).toMatch(/^refs\/guard\/rejected\//);
    expect(repo.git(['show', `${ref}:dir/b.txt`])).toBe('lane b\n');
  });

  it('a committed main-tree symlink to outside: the lane turning it into a folder never writes outside', () => {
    const out = outsideDir();
    const repo = makeRepo({ 'a.txt': 'a\n' });
    symlinkSync(out, path.join(repo.dir, 'out'));
    repo.commitAll('a link to a folder outside');
    expect(repo.guard(['start', 'agent']).code).toBe(0);
    const lane = lanePath(repo, 'agent');
    rmSync(path.join(lane, 'out'));
    laneWrite(lane, 'out/x.txt', 'lane x\n');
    const { json } = repo.guardJson(['review', '--auto']);
    expect(readdirSync(out)).toEqual([]);
    // the link goes first (git's order), then out/ is a real folder of the main tree
    expect(file(json, 'out').decision).toBe('allowed');
    expect(lstatSync(path.join(repo.dir, 'out')).isDirectory()).toBe(true);
    expect(repo.read('out/x.txt')).toBe('lane x\n');
    expect(staged(repo)).toEqual(['out', 'out/x.txt']);
  });

  it('the same lane while the main tree changed the link: out/x.txt is not written and is kept in a ref', () => {
    const out = outsideDir();
    const other = outsideDir();
    const repo = makeRepo({ 'a.txt': 'a\n' });
    symlinkSync(out, path.join(repo.dir, 'out'));
    repo.commitAll('a link to a folder outside');
    expect(repo.guard(['start', 'agent']).code).toBe(0);
    const lane = lanePath(repo, 'agent');
    rmSync(path.join(lane, 'out'));
    laneWrite(lane, 'out/x.txt', 'lane x\n');
    rmSync(path.join(repo.dir, 'out'));
    symlinkSync(other, path.join(repo.dir, 'out'));
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    expect(readdirSync(out)).toEqual([]);
    expect(readdirSync(other)).toEqual([]);
    expect(readlinkSync(path.join(repo.dir, 'out'))).toBe(other);
    const x = file(json, 'out/x.txt');
    expect(x.decision).not.toMatch(/allowed|approved/);
    expect(repo.git(['show', `${x.ref}:out/x.txt`])).toBe('lane x\n');
  });
});

describe('guard review: the main tree cannot take a file', () => {
  it("a folder of the user's where the lane adds a file: that file is blocked and kept, the rest is merged and staged", () => {
    const { repo, lane } = withLane({ 'a.txt': 'a\n' });
    laneWrite(lane, 'a.txt', 'a\nmore\n');
    laneWrite(lane, 'd', 'lane d\n');
    repo.write('d/mine.txt', 'mine\n');
    const { code, json } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    expect(repo.read('d/mine.txt')).toBe('mine\n');
    expect(repo.read('a.txt')).toBe('a\nmore\n');
    expect(staged(repo)).toEqual(['a.txt']);
    const d = file(json, 'd');
    expect(d.decision).toBe('blocked');
    expect(d.reasons.join(' ')).toMatch(/not written: .*folder/);
    expect(repo.git(['show', `${d.ref}:d`])).toBe('lane d\n');
    expect(typeof json.checkpoint).toBe('string');
  });
});

describe('guard review --commit', () => {
  it('writes one Guard-Approved trailer per approved change that needed approval, with the committed blob, and leaves other staged paths alone', () => {
    const { repo, lane } = withLane({
      'state.py': fixture('state.py'),
      'doc.txt': lines(30),
      'small.txt': 'small\n',
      'guard.config.json': JSON.stringify({ protect: ['doc.txt'] }),
    });
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(
      lane,
      'doc.txt',
      lines(30).replace('line 2\n', 'two\n').replace('line 28\n', 'twenty-eight\n'),
    );
    laneWrite(lane, 'small.txt', 'small\nmore\n'); // allowed: no trailer
    repo.write('mine.txt', 'my own staged work\n');
    repo.git(['add', 'mine.txt']);
    const head = repo.git(['rev-parse', 'HEAD']).trim();

    const { code, json } = repo.guardJson([
      'review',
      '--commit',
      '-m',
      'Merge the agent',
      '--decisions',
      decisions([
        { path: 'state.py', action: 'approve', strategy: 'append' },
        { path: 'doc.txt', action: 'approve', hunks: [1] },
      ]),
    ]);
    expect(code).toBe(1); // a hunk of doc.txt was left
    expect(json.commit).toBe(repo.git(['rev-parse', 'HEAD']).trim());
    expect(repo.git(['rev-parse', 'HEAD^']).trim()).toBe(head);
    expect(repo.git(['log', '-1', '--format=%s']).trim()).toBe('Merge the agent');
    const trailers = repo
      .git(['log', '-1', '--format=%(trailers)'])
      .split('\n')
      .filter(Boolean)
      .sort();
    expect(trailers).toEqual([
      `Guard-Approved: doc.txt ${repo.git(['rev-parse', 'HEAD:doc.txt']).trim()}`,
      `Guard-Approved: state.py ${repo.git(['rev-parse', 'HEAD:state.py']).trim()}`,
    ]);
    expect(repo.git(['show', 'HEAD:state.py'])).toBe(
      fixture('state.py') + fixture('state_replacement.py'),
    );
    expect(
      repo
        .git(['diff-tree', '--no-commit-id', '--name-only', '-r', 'HEAD'])
        .split('\n')
        .filter(Boolean)
        .sort(),
    ).toEqual(['doc.txt', 'small.txt', 'state.py']);
    // the user's own staged file is still staged, not committed
    expect(staged(repo)).toEqual(['mine.txt']);
  });

  it('commits the merged blob when main moved on in the same file', () => {
    const base = lines(30);
    const { repo, lane } = withLane({
      'doc.txt': base,
      'guard.config.json': JSON.stringify({ protect: ['doc.txt'] }),
    });
    laneWrite(lane, 'doc.txt', base.replace('line 2\n', 'lane 2\n'));
    repo.write('doc.txt', base.replace('line 28\n', 'main 28\n'));
    repo.commitAll('main moves on');
    const { code } = repo.guardJson([
      'review',
      '--commit',
      '-m',
      'm',
      '--decisions',
      decisions([{ path: 'doc.txt', action: 'approve' }]),
    ]);
    expect(code).toBe(0);
    expect(repo.git(['show', 'HEAD:doc.txt'])).toBe(
      base.replace('line 2\n', 'lane 2\n').replace('line 28\n', 'main 28\n'),
    );
    expect(repo.git(['log', '-1', '--format=%(trailers)']).trim()).toBe(
      `Guard-Approved: doc.txt ${repo.git(['rev-parse', 'HEAD:doc.txt']).trim()}`,
    );
  });
});

describe('guard review: feedback to the agent', () => {
  it('.guard/feedback.md in the lane says what was refused, why, and where it is kept', () => {
    const { repo, lane } = withLane({
      'state.py': fixture('state.py'),
      'cfg.txt': 'one\ntwo\n',
      'ok.txt': 'ok\n',
    });
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'cfg.txt', 'NEW\n');
    laneWrite(lane, 'ok.txt', 'ok\nfine\n');
    const { code, json } = repo.guardJson([
      'review',
      '--decisions',
      decisions([{ path: 'cfg.txt', action: 'reject' }]),
    ]);
    expect(code, JSON.stringify(json)).toBe(1);
    const fb = readFileSync(path.join(lane, '.guard', 'feedback.md'), 'utf8');
    expect(json.feedback).toBe(path.join(lane, '.guard', 'feedback.md'));
    expect(fb).toMatch(/`state\.py` \(replace\): blocked/);
    expect(fb).toContain('replaces 87% of a 270-line file');
    expect(fb).toContain(file(json, 'state.py').ref);
    expect(fb).toMatch(/`cfg\.txt` \(\w+\): rejected/);
    expect(fb).toContain(file(json, 'cfg.txt').ref);
    expect(fb).not.toContain('ok.txt');
    // ignored in the lane, like all of .guard/: the agent's git status stays clean of it
    expect(laneGit(lane, ['status', '--porcelain', '--untracked-files=all'])).not.toContain(
      'feedback',
    );
  });

  it('never writes through a symlink the agent planted at .guard/feedback.md', () => {
    const { repo, lane } = withLane({ 'state.py': fixture('state.py') });
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    const victim = path.join(repo.dir, '.git', 'victim.txt'); // outside the lane's work tree
    writeFileSync(victim, 'precious\n');
    mkdirSync(path.join(lane, '.guard'), { recursive: true });
    symlinkSync(victim, path.join(lane, '.guard', 'feedback.md'));
    const { code } = repo.guardJson(['review', '--auto']);
    expect(code).toBe(1);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(path.join(lane, '.guard', 'feedback.md')).isSymbolicLink()).toBe(false);
    expect(readFileSync(path.join(lane, '.guard', 'feedback.md'), 'utf8')).toMatch(/state\.py/);
  });
});
