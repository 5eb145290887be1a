import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, cleanupRepos, fixture, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

function checkpointRef(json: any): string {
  return `refs/guard/checkpoints/${json.checkpoint}`;
}

/** Temp files guard may leave after a kill, anywhere in the work tree. */
function temps(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      if (e.name.includes('.guard-tmp-')) out.push(path.join(d, e.name));
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(dir);
  return out;
}

describe('guard write', () => {
  it('writes a new file, checkpointed and recorded as allowed', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { code, json } = repo.guardJson(['write', 'src/new.ts'], { input: lines(40) });
    expect(code).toBe(0);
    expect(json.files).toHaveLength(1);
    expect(json.files[0]).toMatchObject({
      path: 'src/new.ts',
      status: 'new',
      linesAdded: 40,
      linesDeleted: 0,
      existingLines: 0,
      decision: 'allowed',
      written: true,
    });
    expect(json.checkpoint).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{8}$/);
    expect(repo.read('src/new.ts')).toBe(lines(40));
    // the checkpoint is of the state before: no such file yet
    expect(repo.gitRun(['cat-file', '-e', `${checkpointRef(json)}:src/new.ts`]).code).not.toBe(0);
    expect(repo.git(['log', '-1', '--format=%B', json.record])).toContain('"decision":"allowed"');
    expect(temps(repo.dir)).toEqual([]);
    // the index is untouched: the new file is untracked
    expect(repo.git(['status', '--porcelain'])).toBe('?? src/\n');
  });

  it('writes a small edit; the checkpoint holds the old content; metrics match git diff --numstat', () => {
    const repo = makeRepo({ 'big_module.py': fixture('big_module.py') });
    const { code, json } = repo.guardJson(['write', 'big_module.py'], {
      input: fixture('big_module_modified.py'),
    });
    expect(code).toBe(0);
    expect(repo.read('big_module.py')).toBe(fixture('big_module_modified.py'));
    expect(repo.git(['show', `${checkpointRef(json)}:big_module.py`])).toBe(
      fixture('big_module.py'),
    );
    const [added, deleted] = repo.git(['diff', '--numstat', '--', 'big_module.py']).split('\t');
    expect(json.files[0]).toMatchObject({
      status: 'modify',
      existingLines: 200,
      linesAdded: Number(added),
      linesDeleted: Number(deleted),
      decision: 'allowed',
    });
  });

  it('blocks a destructive rewrite in auto mode: file untouched, exit 1, the ref holds the proposal', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const refsBefore = repo.refs('refs/guard/checkpoints/');
    const { code, json } = repo.guardJson(['write', 'state.py', '--auto'], {
      input: fixture('state_replacement.py'),
      env: { CI: undefined },
    });
    expect(code).toBe(1);
    const f = json.files[0];
    expect(f).toMatchObject({
      path: 'state.py',
      status: 'replace',
      existingLines: 270,
      decision: 'blocked',
      needsApproval: true,
      written: false,
    });
    expect(json.blocked).toBe(1);
    expect(json.checkpoint).toBeNull();
    expect(repo.read('state.py')).toBe(fixture('state.py'));
    expect(repo.git(['status', '--porcelain'])).toBe('');
    expect(repo.git(['rev-parse', `${f.ref}^`]).trim()).toBe(head);
    expect(repo.git(['show', `${f.ref}:state.py`])).toBe(fixture('state_replacement.py'));
    expect(repo.git(['diff', '--numstat', `${f.ref}^`, f.ref]).trim()).toBe(
      `${f.linesAdded}\t${f.linesDeleted}\tstate.py`,
    );
    expect(repo.refs('refs/guard/checkpoints/')).toEqual(refsBefore);
    expect(temps(repo.dir)).toEqual([]);
  });

  it('says why in words when it blocks, and names the ref', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const r = repo.guard(['write', 'state.py'], { input: fixture('state_truncated.py') });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('guard: blocked the write to state.py');
    expect(r.stdout).toMatch(/kept as refs\/guard\/rejected\/\S+/);
    expect(r.stdout).toContain('The file was not changed.');
  });

  it('blocks a proposal before the first commit too, as a root commit', () => {
    const repo = makeRepo({ 'big.txt': lines(300) }, { commit: false });
    const { code, json } = repo.guardJson(['write', 'big.txt'], { input: 'gone\n' });
    expect(code).toBe(1);
    const ref = json.files[0].ref;
    expect(repo.git(['rev-list', '--parents', '-n', '1', ref]).trim().split(' ')).toHaveLength(1);
    expect(repo.git(['show', `${ref}:big.txt`])).toBe('gone\n');
    expect(repo.read('big.txt')).toBe(lines(300));
  });

  it('refuses every kind of path escape, and writes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'inner/x.txt': 'x\n' });
    const outside = makeRepo({ 'secret.txt': 'secret\n' });
    symlinkSync(outside.dir, path.join(repo.dir, 'out-link'));
    symlinkSync(path.join(repo.dir, '.git'), path.join(repo.dir, 'git-link'));
    const before = repo.git(['status', '--porcelain', '--ignored', '-uall']);
    const gitConfig = readFileSync(path.join(repo.dir, '.git', 'config'), 'utf8');
    const cases = [
      '../escaped.txt',
      'inner/../../escaped.txt',
      path.join(outside.dir, 'secret.txt'),
      '/tmp/guard-escape-test.txt',
      '.git/config',
      '.git/hooks/pre-commit',
      'inner/.git/x',
      '.GIT/config',
      'out-link/secret.txt',
      'out-link/new-dir/new.txt',
      'git-link/config',
      '.',
    ];
    for (const p of cases) {
      const { code, json } = repo.guardJson(['write', p], { input: 'pwned\n' });
      expect({ p, code, err: json.error?.code }).toEqual({ p, code: 2, err: 'E_PATH_ESCAPE' });
    }
    expect(outside.read('secret.txt')).toBe('secret\n');
    expect(existsSync(path.join(outside.dir, 'new-dir'))).toBe(false);
    expect(existsSync(path.join(path.dirname(repo.dir), 'escaped.txt'))).toBe(false);
    expect(existsSync('/tmp/guard-escape-test.txt')).toBe(false);
    expect(readFileSync(path.join(repo.dir, '.git', 'config'), 'utf8')).toBe(gitConfig);
    expect(repo.git(['status', '--porcelain', '--ignored', '-uall'])).toBe(before);
    expect(repo.refs()).toEqual([]);
    const human = repo.guard(['write', '../escaped.txt'], { input: 'x' });
    expect(human.stderr).toBe(
      'guard: "../escaped.txt" is outside the work tree\nhint: guard only writes files inside the work tree, outside .git/\n',
    );
  });

  it('writes through a symlinked folder that stays inside the work tree, and from a subfolder', () => {
    const repo = makeRepo({ 'real/a.txt': 'a\n' });
    symlinkSync('real', path.join(repo.dir, 'alias'));
    expect(repo.guard(['write', 'alias/b.txt'], { input: 'b\n' }).code).toBe(0);
    expect(repo.read('real/b.txt')).toBe('b\n');
    const sub = repo.guard(['write', 'c.txt'], { input: 'c\n', cwd: path.join(repo.dir, 'real') });
    expect(sub.code).toBe(0);
    expect(repo.read('real/c.txt')).toBe('c\n');
  });

  it('keeps the executable bit and the permission bits', () => {
    const repo = makeRepo({ 'run.sh': '#!/bin/sh\necho 1\n' });
    chmodSync(path.join(repo.dir, 'run.sh'), 0o750);
    repo.git(['add', 'run.sh']);
    const { code } = repo.guardJson(['write', 'run.sh'], { input: '#!/bin/sh\necho 2\n' });
    expect(code).toBe(0);
    expect(statSync(path.join(repo.dir, 'run.sh')).mode & 0o777).toBe(0o750);
    expect(repo.git(['diff', '--summary'])).not.toContain('mode change');
    expect(repo.read('run.sh')).toBe('#!/bin/sh\necho 2\n');
  });

  it('replaces a symlink as a symlink (new target), never writing through it', () => {
    const repo = makeRepo({ 'target.txt': 'target\n', 'other.txt': 'other\n' });
    symlinkSync('target.txt', path.join(repo.dir, 'link'));
    repo.commitAll('link');
    const { code, json } = repo.guardJson(['write', 'link'], { input: 'other.txt' });
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({ symlink: true, decision: 'allowed' });
    expect(lstatSync(path.join(repo.dir, 'link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(repo.dir, 'link'))).toBe('other.txt');
    expect(repo.read('target.txt')).toBe('target\n');
    // a link pointing out of the repository needs a person
    const out = repo.guardJson(['write', 'link'], { input: '/etc/passwd' });
    expect(out.code).toBe(1);
    expect(out.json.files[0].reasons.join()).toContain('symlink points outside');
    expect(readlinkSync(path.join(repo.dir, 'link'))).toBe('other.txt');
  });

  it('writes binary content byte for byte', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const bin = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0, 7]);
    const { code, json } = repo.guardJson(['write', 'img.bin'], { input: bin });
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({ binary: true, status: 'new' });
    expect(readFileSync(path.join(repo.dir, 'img.bin')).equals(bin)).toBe(true);
  });

  it('measures a large rewrite exactly as git diff --numstat does', () => {
    const old = Array.from({ length: 20_000 }, (_, i) => `row ${i} ${i % 7}`).join('\n') + '\n';
    const repo = makeRepo({
      'data.txt': old,
      'guard.config.json': JSON.stringify({ lineThreshold: 1_000_000 }),
    });
    const next =
      Array.from({ length: 21_000 }, (_, i) =>
        i % 3 === 0 ? `changed ${i}` : `row ${i} ${i % 7}`,
      ).join('\n') + '\n';
    const { code, json } = repo.guardJson(['write', 'data.txt'], { input: next });
    expect(code).toBe(0);
    const [added, deleted] = repo.git(['diff', '--numstat', '--', 'data.txt']).split('\t');
    expect(json.files[0]).toMatchObject({
      existingLines: 20_000,
      linesAdded: Number(added),
      linesDeleted: Number(deleted),
    });
  });

  it('leaves a file either old or new when killed (SIGKILL) in the middle of a write', async () => {
    const oldContent = Buffer.from(lines(50_000, 'old'));
    const newContent = Buffer.from(lines(60_000, 'new'));
    const repo = makeRepo({
      'big.txt': oldContent,
      'guard.config.json': JSON.stringify({
        lineThreshold: 1_000_000,
        byteThreshold: 1_000_000_000,
      }),
    });
    const file = path.join(repo.dir, 'big.txt');
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      // half the runs pause right before the rename (the widest window), half are killed at a random moment
      const pause = i % 2 === 0;
      await new Promise<void>((resolve) => {
        const child = spawn(process.execPath, [CLI, 'write', 'big.txt'], {
          cwd: repo.dir,
          env: cleanEnv({
            CI: 'true',
            GUARD_FAULT_PAUSE: pause ? 'atomic:before-rename' : undefined,
            GUARD_FAULT_PAUSE_MS: '200',
          }),
          stdio: ['pipe', 'ignore', 'ignore'],
        });
        child.stdin.on('error', () => {});
        child.stdin.end(newContent);
        setTimeout(
          () => child.kill('SIGKILL'),
          pause ? 150 + i * 10 : 20 + Math.floor(Math.random() * 250),
        );
        child.on('close', () => resolve());
      });
      const now = readFileSync(file);
      const which = now.equals(oldContent) ? 'old' : now.equals(newContent) ? 'new' : 'partial';
      expect(which).not.toBe('partial');
      seen.add(which);
      if (which === 'new') writeFileSync(file, oldContent); // start over from the old content
    }
    expect(seen.has('old')).toBe(true);
    // the next command works and cleans what the killed ones left
    const next = repo.guardJson(['write', 'big.txt'], { input: newContent });
    expect(next.code).toBe(0);
    expect(readFileSync(file).equals(newContent)).toBe(true);
    expect(temps(repo.dir)).toEqual([]);
  });
});

describe('guard write usage', () => {
  it('takes the path after -- (a name starting with a dash), and exactly one path', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expect(repo.guard(['write', '--auto', '--', '-dash.txt'], { input: 'd\n' }).code).toBe(0);
    expect(repo.read('-dash.txt')).toBe('d\n');
    const none = repo.guardJson(['write'], { input: 'x' });
    expect([none.code, none.json.error.code]).toEqual([2, 'E_USAGE']);
  });

  it('a folder is not a file', () => {
    const repo = makeRepo({ 'd/a.txt': 'a\n' });
    const { code, json } = repo.guardJson(['write', 'd'], { input: 'x' });
    expect(code).toBe(2);
    expect(json.error.code).toBe('E_USAGE');
  });

  it('outside a repository: E_NOT_A_REPO', () => {
    const dir = path.join(tmpdir(), `guard-norepo-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['write', 'x.txt', '--json', '--cwd', dir], { input: 'x' });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('E_NOT_A_REPO');
  });
});

describe('guard write at a terminal', () => {
  it('asks a person; "y" writes (checkpoint first) and records "approved", "n" keeps the proposal as a ref', async () => {
    const pty = await import('node-pty');
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const proposal = path.join(repo.dir, '.git', 'proposal'); // outside the work tree, removed with the repo
    writeFileSync(proposal, fixture('state_replacement.py'));
    const drive = (answer: string) =>
      new Promise<{ code: number; screen: string }>((resolve) => {
        // content on a pipe, the person on the terminal (/dev/tty), as a harness run by hand would be
        const p = pty.spawn(
          '/bin/sh',
          ['-c', `"${process.execPath}" "${CLI}" write --json state.py < "${proposal}"`],
          {
            cwd: repo.dir,
            env: cleanEnv({ CI: undefined, TERM: 'dumb' }) as Record<string, string>,
            cols: 120,
            rows: 40,
          },
        );
        let screen = '';
        let answered = false;
        p.onData((d) => {
          screen += d;
          if (!answered && /Take this hunk \[y,n,q,a,d,s,e,v,r,b,i,x,\?\]\?/.test(screen)) {
            answered = true;
            p.write(`${answer}\r`);
          }
        });
        p.onExit(({ exitCode }) => resolve({ code: exitCode, screen }));
      });

    const no = await drive('n');
    expect(no.screen).toContain('guard: state.py needs approval');
    expect(no.code).toBe(1);
    expect(repo.read('state.py')).toBe(fixture('state.py'));
    const rejected = repo.refs('refs/guard/rejected/');
    expect(rejected).toHaveLength(1);
    expect(repo.git(['show', `${rejected[0]}:state.py`])).toBe(fixture('state_replacement.py'));

    const yes = await drive('y');
    expect(yes.code).toBe(0);
    expect(repo.read('state.py')).toBe(fixture('state_replacement.py'));
    const json = JSON.parse(yes.screen.slice(yes.screen.lastIndexOf('{"ok"')).trim());
    expect(json.files[0]).toMatchObject({ decision: 'approved', decider: 'person', written: true });
    expect(repo.git(['show', `refs/guard/checkpoints/${json.checkpoint}:state.py`])).toBe(
      fixture('state.py'),
    );

    // "b" (both): append the proposal to what is there; the proposal itself is kept whole as a ref
    repo.write('state.py', fixture('state.py'));
    const refsBefore = repo.refs('refs/guard/rejected/').length;
    const append = await drive('b');
    expect(append.code).toBe(0);
    expect(repo.read('state.py')).toBe(fixture('state.py') + fixture('state_replacement.py'));
    const appended = JSON.parse(append.screen.slice(append.screen.lastIndexOf('{"ok"')).trim());
    expect(appended.files[0]).toMatchObject({
      decision: 'approved',
      strategy: 'append',
      written: true,
    });
    expect(repo.refs('refs/guard/rejected/')).toHaveLength(refsBefore + 1);
  });
});
