import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, installGuard, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

describe('guard check', () => {
  it('allows a new file', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('new.txt', lines(500));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(0);
    expect(json.files).toHaveLength(1);
    expect(json.files[0]).toMatchObject({
      path: 'new.txt',
      status: 'new',
      linesAdded: 500,
      decision: 'allowed',
      needsApproval: false,
    });
    expect(json.blocked).toBe(0);
  });

  it('allows a 5% change to a 200-line file with exact counts', () => {
    const repo = makeRepo({ 'big_module.py': fixture('big_module.py') });
    repo.write('big_module.py', fixture('big_module_modified.py'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({
      path: 'big_module.py',
      status: 'modify',
      existingLines: 200,
      linesAdded: 10,
      linesDeleted: 10,
      changeRatio: 0.05,
      decision: 'allowed',
    });
  });

  it('blocks an 80% rewrite of the 270-line fixture and keeps the proposal whole in a ref', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const indexBefore = repo.git(['ls-files', '-s']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    const f = json.files[0];
    expect(f).toMatchObject({
      path: 'state.py',
      status: 'replace',
      existingLines: 270,
      decision: 'blocked',
      needsApproval: true,
    });
    expect(f.changeRatio).toBeGreaterThanOrEqual(0.8);
    expect(json.blocked).toBe(1);
    // the ref: parent is HEAD, tree is HEAD plus the proposal
    expect(repo.git(['rev-parse', `${f.ref}^`]).trim()).toBe(head);
    expect(repo.git(['show', `${f.ref}:state.py`])).toBe(fixture('state_replacement.py'));
    const numstat = repo.git(['diff', '--numstat', `${f.ref}^`, f.ref]).trim();
    expect(numstat).toBe(`${f.linesAdded}\t${f.linesDeleted}\tstate.py`);
    expect(repo.git(['diff', `${f.ref}^`, f.ref])).toContain('-class ');
    // nothing changed in the index or work tree
    expect(repo.git(['ls-files', '-s'])).toBe(indexBefore);
    expect(repo.read('state.py')).toBe(fixture('state_replacement.py'));
  });

  it('explains a block to a person in one paragraph per file', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const r = repo.guard(['check']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('guard: blocked 1 change that needs a person');
    expect(r.stdout).toMatch(/state\.py\s+replace\s+270 lines, \d+ deleted \(\d+%\), \d+ added/);
    expect(r.stdout).toMatch(/kept as refs\/guard\/rejected\/\S+/);
    expect(r.stdout).toContain('guard review');
    expect(r.stdout).toContain('--no-verify');
    expect(r.stdout).not.toMatch(/\u001b\[/); // not a terminal: no colour
  });

  it('allows a 100% rewrite of a 50-line file (replace, below the line threshold)', () => {
    const repo = makeRepo({ 'small.txt': lines(50) });
    repo.write('small.txt', lines(50, 'other'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({
      status: 'replace',
      existingLines: 50,
      linesDeleted: 50,
      changeRatio: 1,
      needsApproval: false,
      decision: 'allowed',
    });
  });

  it('blocks deleting a 200-line file', () => {
    const repo = makeRepo({ 'big.txt': lines(200) });
    repo.git(['rm', '-q', 'big.txt']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files[0]).toMatchObject({
      path: 'big.txt',
      status: 'delete',
      existingLines: 200,
      linesDeleted: 200,
      decision: 'blocked',
    });
    const ref = json.files[0].ref;
    expect(repo.git(['ls-tree', '--name-only', ref])).not.toContain('big.txt');
    expect(repo.git(['ls-tree', '--name-only', `${ref}^`])).toContain('big.txt');
  });

  it('blocks an elision placeholder where code stood', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_truncated.py'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files[0].reasons.join(' ')).toMatch(/elision placeholder/);
  });

  it('handles the first commit of an empty repository', () => {
    const repo = makeRepo();
    repo.write('a.txt', lines(300));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(0);
    expect(json.base).toBeNull();
    expect(json.files[0]).toMatchObject({ path: 'a.txt', status: 'new', linesAdded: 300 });
  });

  it('keeps odd file names intact: spaces, unicode, quotes, a leading dash, a tab', () => {
    const names = [
      'with space.txt',
      'ünïcødé-日本.txt',
      'quote"d\'.txt',
      '-leading-dash.txt',
      'tab\there.txt',
    ];
    const files = Object.fromEntries(names.map((n) => [n, lines(150)]));
    const repo = makeRepo(files);
    for (const n of names) repo.write(n, lines(150, 'rewritten'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files.map((f: any) => f.path).sort()).toEqual([...names].sort());
    for (const f of json.files) {
      expect(f.decision).toBe('blocked');
      expect(repo.git(['show', `${f.ref}:${f.path}`])).toBe(lines(150, 'rewritten'));
    }
  });

  it('does not count a CRLF-only change as a change', () => {
    const repo = makeRepo({ 'crlf.txt': lines(200).replace(/\n/g, '\r\n') });
    repo.write('crlf.txt', lines(200));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(0);
    expect(json.files[0]).toMatchObject({
      status: 'modify',
      linesAdded: 0,
      linesDeleted: 0,
      needsApproval: false,
    });
  });

  it('detects a binary file and never prints it', () => {
    const bin = Buffer.concat([Buffer.from('PNGSECRET\0\x01\x02'), Buffer.alloc(4000, 7)]);
    const repo = makeRepo({ 'img.bin': bin });
    repo.write('img.bin', Buffer.concat([Buffer.from('OTHERSECRET\0'), Buffer.alloc(10, 1)]));
    repo.git(['add', '-A']);
    const r = repo.guard(['check']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('SECRET');
    const { json } = repo.guardJson(['check']);
    expect(json.files[0]).toMatchObject({ binary: true, decision: 'blocked' });
    expect(json.files[0].reasons).toContain('replaces a binary file');
  });

  it("a binary replaced by text stays binary when the agent's .gitattributes says `diff` (git then counts it as text)", () => {
    // a few lines with NUL bytes: under every threshold if it were counted as text
    const bin = Buffer.concat([
      Buffer.from('head\n'),
      Buffer.from([0, 1, 2]),
      Buffer.from('\ntail\n'),
    ]);
    const repo = makeRepo({ 'img.dat': bin });
    repo.write('.gitattributes', '*.dat diff\n');
    repo.write('img.dat', 'head\nnew\ntail\n');
    repo.git(['add', '-A']);
    // git itself now counts the old side's lines
    expect(repo.git(['diff', '--cached', '--numstat', '--', 'img.dat'])).toMatch(
      /^\d+\t\d+\timg\.dat/,
    );
    const r = repo.guardJson(['check']);
    expect(r.code).toBe(1);
    const f = r.json.files.find((x: { path: string }) => x.path === 'img.dat');
    expect(f).toMatchObject({ binary: true, decision: 'blocked' });
    expect(f.reasons).toContain('replaces a binary file');
  });

  it('reads the policy from HEAD: a config loosened in the same change does not apply', () => {
    const repo = makeRepo({ 'guard.config.json': '{}\n', 'state.py': fixture('state.py') });
    repo.write('guard.config.json', JSON.stringify({ lineThreshold: 100000 }));
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    const byPath = Object.fromEntries(json.files.map((f: any) => [f.path, f]));
    expect(byPath['state.py'].decision).toBe('blocked');
    expect(byPath['guard.config.json']).toMatchObject({ protected: true, decision: 'blocked' });
  });

  it('allows the commit that installs guard (config and hook are new), and protects them after', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('guard.config.json', '{}\n');
    repo.write('.husky/pre-commit', 'guard check\n');
    repo.git(['add', '-A']);
    expect(repo.guardJson(['check']).code).toBe(0);
    repo.commitAll('install guard');
    repo.write('.husky/pre-commit', 'true\n');
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files[0]).toMatchObject({
      path: '.husky/pre-commit',
      protected: true,
      decision: 'blocked',
    });
  });

  it('before guard is installed, a loosened config or a new workflow still needs a person', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('guard.config.json', JSON.stringify({ lineThreshold: 100000, protect: [] }));
    repo.write('.github/workflows/exfil.yml', 'on: push\n');
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files.map((f: any) => [f.path, f.decision])).toEqual([
      ['.github/workflows/exfil.yml', 'blocked'],
      ['guard.config.json', 'blocked'],
    ]);
  });

  it('refuses to let a broken config be committed (it would become the policy)', () => {
    const repo = makeRepo({ 'guard.config.json': '{}\n' });
    repo.write('guard.config.json', '{"lineTreshold": 50}\n');
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(2);
    expect(json.error.code).toBe('E_CONFIG');
    expect(json.error.message).toContain(
      'guard.config.json (staged): "lineTreshold" is not a known key',
    );
    expect(json.error.hint).toMatch(/before committing/);
  });

  it('gives the documented error for a bad config at HEAD', () => {
    const repo = makeRepo({ 'guard.config.json': '{"lineThreshold": "many"}' });
    repo.write('x.txt', 'x\n');
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(2);
    expect(json.ok).toBe(false);
    expect(json.error.code).toBe('E_CONFIG');
    expect(json.error.message).toContain('lineThreshold');
    expect(json.error.hint).toMatch(/--no-verify/);
    const human = repo.guard(['check']);
    expect(human.code).toBe(2);
    expect(human.stderr.trim().split('\n')).toHaveLength(2);
    expect(human.stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
  });

  it('gives the documented error outside a repository', () => {
    const repo = makeRepo();
    const outside = path.join(repo.dir, 'not-a-repo');
    mkdirSync(outside);
    rmSync(path.join(repo.dir, '.git'), { recursive: true, force: true });
    const { code, json } = repo.guardJson(['check', '--cwd', outside]);
    expect(code).toBe(2);
    expect(json).toEqual({
      ok: false,
      error: { code: 'E_NOT_A_REPO', message: expect.any(String), hint: expect.any(String) },
    });
  });

  it('fails closed when the rejected ref cannot be written', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    // refs/guard is a file: no ref can be created below it
    writeFileSync(path.join(repo.dir, '.git', 'refs', 'guard'), 'not a folder\n');
    const r = repo.guard(['check']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/could not record/);
    expect(repo.git(['diff', '--cached', '--name-only']).trim()).toBe('state.py');
  });

  it('--timeout fails closed with E_TIMEOUT and writes nothing', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const index = repo.git(['ls-files', '-s']);
    const { code, json } = repo.guardJson(['check', '--timeout', '0.001']);
    expect(code).toBe(1);
    expect(json.error.code).toBe('E_TIMEOUT');
    expect(repo.refs()).toEqual([]);
    expect(repo.git(['ls-files', '-s'])).toBe(index);
    const bad = repo.guardJson(['check', '--timeout', '-3']);
    expect(bad.code).toBe(2);
  });

  it('prints exactly one JSON document on stdout with --json', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'b.txt': 'b\n' });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('b.txt', 'bb\n');
    repo.git(['add', '-A']);
    const r = repo.guard(['check', '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(doc).toMatchObject({ ok: true, command: 'check', blocked: 1 });
    for (const f of doc.files) {
      for (const key of [
        'path',
        'status',
        'existingLines',
        'linesAdded',
        'linesDeleted',
        'changeRatio',
        'binary',
        'needsApproval',
        'reasons',
        'decision',
      ]) {
        expect(f).toHaveProperty(key);
      }
    }
  });

  it('bounds the report: --limit lists what needs attention first and says what was cut', () => {
    const files: Record<string, string> = { 'big.txt': lines(200) };
    for (let i = 0; i < 30; i++) files[`f${i}.txt`] = 'a\n';
    const repo = makeRepo(files);
    for (let i = 0; i < 30; i++) repo.write(`f${i}.txt`, 'b\n');
    repo.write('big.txt', lines(200, 'other'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check', '--limit', '5']);
    expect(code).toBe(1);
    expect(json.files).toHaveLength(5);
    expect(json.files[0]).toMatchObject({ path: 'big.txt', decision: 'blocked' });
    expect(json.truncated).toBe(true);
    expect(json.truncatedReason).toMatch(/26 of 31 files not listed/);
    expect(json.blocked).toBe(1);
  });

  it('records every decision, allowed ones too', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('a.txt', 'b\n');
    repo.git(['add', '-A']);
    repo.guardJson(['check']);
    const [record] = repo.refs('refs/guard/decisions/');
    const message = repo.git(['log', '-1', '--format=%B', record!]);
    const body = JSON.parse(message.slice(message.indexOf('\n\n') + 2));
    expect(body.decisions).toEqual([
      expect.objectContaining({ path: 'a.txt', decision: 'allowed', decider: 'policy' }),
    ]);
  });

  it('flags a symlink that points outside the repository', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    symlinkSync('../../../etc/passwd', path.join(repo.dir, 'link'));
    symlinkSync('a.txt', path.join(repo.dir, 'inside'));
    repo.git(['add', '-A']);
    const { json } = repo.guardJson(['check']);
    const byPath = Object.fromEntries(json.files.map((f: any) => [f.path, f]));
    expect(byPath.link).toMatchObject({ decision: 'blocked' });
    expect(byPath.link.reasons.join()).toMatch(/outside the repository/);
    expect(byPath.inside).toMatchObject({ decision: 'allowed' });
  });
});

describe('the installed hook', () => {
  it('blocks a destructive commit under CI=true and lets a small one through', () => {
    // `guard` resolvable from the hook the way an npm install does; the install commit passes the hook
    const repo = installGuard({ 'state.py': fixture('state.py'), 'small.py': fixture('small.py') });
    expect(repo.git(['log', '-1', '--format=%s']).trim()).toBe('install guard');

    repo.write('state.py', fixture('state_replacement.py'));
    const blocked = repo.gitRun(['commit', '-q', '-am', 'agent: simplify state'], { CI: 'true' });
    expect(blocked.code).not.toBe(0);
    expect(blocked.stdout + blocked.stderr).toContain('guard: blocked 1 change');
    expect(repo.git(['log', '--format=%s'])).not.toContain('agent: simplify state');
    expect(repo.refs('refs/guard/rejected/')).toHaveLength(1);

    repo.git(['checkout', '--', 'state.py']);
    repo.write('small.py', fixture('small.py') + '# one more line\n');
    const ok = repo.gitRun(['commit', '-q', '-am', 'small change'], { CI: 'true' });
    expect(ok.code).toBe(0);
    expect(repo.git(['log', '-1', '--format=%s']).trim()).toBe('small change');

    // --no-verify skips pre-commit, not the branch gate (reference-transaction)
    repo.write('state.py', fixture('state_replacement.py'));
    expect(
      repo.gitRun(['commit', '-q', '--no-verify', '-am', 'skip the gate'], { CI: 'true' }).code,
    ).not.toBe(0);
    expect(repo.git(['log', '-1', '--format=%s']).trim()).toBe('small change');
    // every hook off: the next check says so
    const past = repo.gitRun(
      ['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--no-verify', '-am', 'skip the gate'],
      { CI: 'true' },
    );
    expect(past.code).toBe(0);
    repo.write('small.py', fixture('small.py'));
    repo.git(['add', '-A']);
    const next = repo.guard(['check']);
    expect(next.code).toBe(0);
    expect(next.stderr).toMatch(
      /moved to [0-9a-f]{10} past this gate .* state\.py; .* guard ci will block them/,
    );
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    expect(repo.guardJson(['check']).json.bypassed).toEqual({
      commit: head,
      base: repo.git(['rev-parse', 'HEAD^']).trim(),
      branch: 'refs/heads/main',
      paths: ['state.py'],
    });
  });
});
