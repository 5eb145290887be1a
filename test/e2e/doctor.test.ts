import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, type TestRepo, installGuard } from '../helpers.js';
import { scale } from '../scale.js';

/** Refused commits before doctor counts its git processes again: 3 in npm test, 10 in npm run soak. */
const STOPS = scale(3, 10);

afterAll(cleanupRepos);

/** A repository with guard installed the way a user does it: npm (node_modules/.bin), guard init, commit. */
function installed(): TestRepo {
  return installGuard({ 'a.txt': 'a\n' });
}

type Check = { id: string; ok: boolean; severity: string; message: string; hint?: string };

function doctor(repo: TestRepo, env: Record<string, string | undefined> = {}) {
  const { code, json, stderr } = repo.guardJson(['doctor'], { env });
  expect(stderr).toBe('');
  expect(json).toMatchObject({ ok: true, command: 'doctor' });
  const checks = json.checks as Check[];
  const byId = (id: string) => checks.find((c) => c.id === id);
  const errors = checks.filter((c) => c.severity === 'error');
  const warnings = checks.filter((c) => c.severity === 'warning');
  return { code, json, checks, byId, errors, warnings };
}

let bigFiles = 0;
/** The gate as git sees it: does a commit of a destructive change get stopped? (Leaves HEAD where it was.) */
function gateStops(repo: TestRepo): boolean {
  const file = `big${++bigFiles}.txt`;
  repo.write(file, Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join(''));
  repo.git(['add', file]);
  repo.git(['commit', '-q', '--no-verify', '-m', 'big file']);
  repo.write(file, 'short\n');
  // only this file is staged: other edits in the work tree stay out of the commit
  repo.git(['add', file]);
  const r = repo.gitRun(['commit', '-q', '-m', 'agent: rewrite'], { CI: 'true' });
  const stopped = r.code !== 0;
  repo.git(['reset', '-q', stopped ? 'HEAD' : 'HEAD~1', '--', file]);
  repo.git(['checkout', stopped ? 'HEAD' : 'HEAD~1', '--', file]);
  if (!stopped) repo.git(['reset', '-q', '--soft', 'HEAD~1']);
  return stopped;
}

describe('guard doctor', () => {
  it('a fresh install is active: exit 0, every check ok, and the gate really stops a rewrite', () => {
    const repo = installed();
    const d = doctor(repo);
    expect(d.code).toBe(0);
    expect(d.json.active).toBe(true);
    expect(d.errors).toEqual([]);
    expect(d.warnings).toEqual([]);
    expect(d.byId('hooks-path')!.message).toContain('core.hooksPath=.husky/_');
    expect(d.byId('hook')).toMatchObject({ ok: true });
    expect(d.byId('guard-command')!.message).toContain('node_modules/.bin/guard');
    expect(d.byId('config')).toMatchObject({
      ok: true,
      message: 'HEAD:guard.config.json is valid',
    });
    expect(d.byId('refs')!.message).toMatch(
      /0 checkpoints, 1 decision record, 0 rejected, 0 lanes/,
    );
    expect(gateStops(repo)).toBe(true);

    const human = repo.guard(['doctor']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ok {4}core\.hooksPath=\.husky\/_ \(local config\)$/m);
    expect(human.stdout.trim().split('\n').at(-1)).toBe('guard: the gate is active');
  });

  it('core.hooksPath=/dev/null: exit 1, naming it, and git indeed skips the gate', () => {
    const repo = installed();
    repo.git(['config', 'core.hooksPath', '/dev/null']);
    const d = doctor(repo);
    expect(d.code).toBe(1);
    expect(d.json.active).toBe(false);
    expect(d.errors.map((e) => e.id)).toEqual(['hooks-path']);
    expect(d.errors[0]!.message).toContain('core.hooksPath=/dev/null (local config)');
    expect(d.errors[0]!.hint).toContain('git config --local --unset core.hooksPath');
    expect(gateStops(repo)).toBe(false);

    const human = repo.guard(['doctor']);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^FAIL {2}core\.hooksPath=\/dev\/null/m);
    expect(human.stdout.trim().split('\n').at(-1)).toMatch(
      /^guard: the gate would NOT run: core\.hooksPath=\/dev\/null/,
    );
  });

  it('core.hooksPath at a folder without pre-commit, set globally: exit 1', () => {
    const repo = installed();
    repo.git(['config', '--unset', 'core.hooksPath']);
    mkdirSync(path.join(repo.dir, 'elsewhere'));
    const global = path.join(repo.dir, '.git', 'test-global-config');
    writeFileSync(global, `[core]\n\thooksPath = ${path.join(repo.dir, 'elsewhere')}\n`);
    const { code, json } = repo.guardJson(['doctor'], { env: { GIT_CONFIG_GLOBAL: global } });
    expect(code).toBe(1);
    const err = (json.checks as Check[]).find((c) => c.severity === 'error')!;
    expect(err.id).toBe('hooks-path');
    expect(err.message).toMatch(/elsewhere \(global config\) has no pre-commit hook/);
  });

  it('no hooksPath and no .git/hooks/pre-commit: exit 1', () => {
    const repo = installed();
    repo.git(['config', '--unset', 'core.hooksPath']);
    const d = doctor(repo);
    expect(d.code).toBe(1);
    expect(d.errors).toHaveLength(1);
    expect(d.errors[0]).toMatchObject({
      id: 'hook',
      message: '.git/hooks/pre-commit does not exist: git runs no pre-commit hook',
    });
  });

  it('a plain .git/hooks/pre-commit that runs guard check is active', () => {
    const repo = installed();
    repo.git(['config', '--unset', 'core.hooksPath']);
    writeFileSync(
      path.join(repo.dir, '.git', 'hooks', 'pre-commit'),
      '#!/bin/sh\nexport PATH="node_modules/.bin:$PATH"\nguard check\n',
      { mode: 0o755 },
    );
    const d = doctor(repo);
    expect(d.code).toBe(0);
    expect(d.byId('hook')!.message).toBe(
      '.git/hooks/pre-commit is executable, which runs guard check',
    );
    expect(gateStops(repo)).toBe(true);
  });

  it('the hook file is not executable: exit 1, and git indeed skips it', () => {
    const repo = installed();
    chmodSync(path.join(repo.dir, '.husky', '_', 'pre-commit'), 0o644);
    const d = doctor(repo);
    expect(d.code).toBe(1);
    expect(d.errors).toHaveLength(1);
    expect(d.errors[0]).toMatchObject({
      id: 'hook',
      message: '.husky/_/pre-commit is not executable: git skips it',
      hint: 'chmod +x .husky/_/pre-commit',
    });
    // git skips the pre-commit hook, but the branch gate (reference-transaction) still refuses the move
    expect(gateStops(repo)).toBe(true);
  });

  it('.husky/pre-commit without guard check (a comment does not count): exit 1', () => {
    const repo = installed();
    writeFileSync(
      path.join(repo.dir, '.husky', 'pre-commit'),
      '# guard check used to be here\necho lint ok\n',
    );
    const d = doctor(repo);
    expect(d.code).toBe(1);
    expect(d.errors).toHaveLength(1);
    expect(d.errors[0]).toMatchObject({
      id: 'hook',
      message: '.husky/pre-commit does not run guard check',
    });
    expect(gateStops(repo)).toBe(true); // the branch gate still refuses
  });

  it("husky's runner .husky/_/h or the script .husky/pre-commit missing: exit 1", () => {
    const repo = installed();
    rmSync(path.join(repo.dir, '.husky', 'pre-commit'));
    expect(doctor(repo).errors[0]!.message).toBe(
      '.husky/pre-commit does not exist: husky skips the hook silently',
    );
    rmSync(path.join(repo.dir, '.husky', '_', 'h'));
    const d = doctor(repo);
    expect(d.code).toBe(1);
    expect(d.errors[0]!.message).toMatch(/husky's runner \.husky\/_\/h is missing/);
  });

  it('guard not resolvable from the hook: exit 1', () => {
    const repo = installed();
    rmSync(path.join(repo.dir, 'node_modules'), { recursive: true });
    const d = doctor(repo, {
      PATH: path.dirname(process.execPath) + path.delimiter + '/usr/bin:/bin',
    });
    expect(d.code).toBe(1);
    expect(d.errors.map((e) => e.id)).toEqual(['guard-command']);
  });

  it('HUSKY=0 in the environment: a warning, still exit 0', () => {
    const repo = installed();
    const d = doctor(repo, { HUSKY: '0' });
    expect(d.code).toBe(0);
    expect(d.warnings.map((w) => w.id)).toEqual(['husky-env']);
    expect(d.warnings[0]!.message).toMatch(/^HUSKY=0 is set/);
  });

  it('an invalid config at HEAD is reported as an error naming the key; a missing one is info', () => {
    const repo = installed();
    repo.write('guard.config.json', '{ "lineThreshold": "many" }\n');
    // past every hook (--no-verify alone no longer gets past the branch gate)
    repo.git([
      '-c',
      'core.hooksPath=/dev/null',
      'commit',
      '-q',
      '--no-verify',
      '-am',
      'bad config',
    ]);
    const d = doctor(repo);
    expect(d.code).toBe(1);
    expect(d.errors.map((e) => e.id)).toEqual(['config']);
    expect(d.errors[0]!.message).toContain('HEAD:guard.config.json');
    expect(d.errors[0]!.message).toContain('lineThreshold');
    // what check says about it is the same message: check fails closed on it
    repo.write('a.txt', 'b\n');
    repo.git(['add', 'a.txt']);
    const check = repo.guardJson(['check']);
    expect(check.json.error.message).toBe(d.errors[0]!.message);

    repo.git(['rm', '-q', 'guard.config.json']);
    repo.git(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--no-verify', '-m', 'no config']);
    const none = doctor(repo);
    expect(none.code).toBe(0);
    expect(none.byId('config')).toMatchObject({
      ok: true,
      severity: 'info',
      message: 'no guard.config.json at HEAD: defaults in use',
    });
  });

  it('a hand-written rejected ref with a garbage message, a ref at a blob, a tmp ref, a stale lock: warnings, the rest works', () => {
    const repo = installed();
    // one real rejected record, from a blocked commit
    expect(gateStops(repo)).toBe(true);
    const tree = repo.git(['rev-parse', 'HEAD^{tree}']).trim();
    const garbage = repo
      .git(['commit-tree', tree, '-m', 'not a guard record\n\n{oops'], { env: {} })
      .trim();
    repo.git(['update-ref', 'refs/guard/rejected/hand-made', garbage]);
    const blob = repo.git(['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
    repo.git(['update-ref', 'refs/guard/checkpoints/a-blob', blob]);
    repo.git(['update-ref', 'refs/guard/tmp/leftover', garbage]);
    writeFileSync(path.join(repo.dir, '.git', 'guard.lock'), '999999999\nreview merge\n');

    const d = doctor(repo);
    expect(d.code).toBe(0);
    expect(d.json.active).toBe(true);
    const ids = d.warnings.map((w) => w.id).sort();
    expect(ids).toEqual(['lock', 'refs-corrupt', 'refs-tmp', 'refs-type']);
    const corrupt = d.byId('refs-corrupt')!;
    expect(corrupt.message).toContain('refs/guard/rejected/hand-made');
    expect(corrupt.message).not.toContain('a-blob');
    expect(corrupt.hint).toContain('git update-ref -d refs/guard/rejected/hand-made');
    expect(d.byId('refs-type')!.message).toContain('refs/guard/checkpoints/a-blob');
    expect(d.byId('refs-tmp')!.message).toContain('refs/guard/tmp/leftover');
    expect(d.byId('lock')!.message).toMatch(
      /stale lock .*guard\.lock \(pid 999999999 is not running\)/,
    );
    expect(d.json.refs).toMatchObject({ rejected: 2, checkpoints: 1, tmp: 1 });

    // the hint works: after it, the warning is gone
    repo.git(['update-ref', '-d', 'refs/guard/rejected/hand-made']);
    expect(doctor(repo).byId('refs-corrupt')).toBeUndefined();
  });

  it('a lane started with guard start shares the hook; one without the hooks folder is a warning', () => {
    const repo = installed();
    expect(repo.guard(['start', 'agent']).code).toBe(0);
    expect(repo.guard(['start', 'other']).code).toBe(0);
    const d = doctor(repo);
    expect(d.code).toBe(0);
    expect(d.byId('lane:agent')).toMatchObject({
      ok: true,
      message: 'lane agent runs the pre-commit hook',
    });
    expect(d.json.refs.lanes).toBe(2);

    const other = path.join(repo.dir, '.guard', 'lanes', 'other');
    rmSync(path.join(other, '.husky', '_'), { recursive: true });
    const after = doctor(repo);
    expect(after.code).toBe(0);
    expect(after.warnings).toHaveLength(1);
    expect(after.warnings[0]).toMatchObject({
      id: 'lane:other',
      message:
        'lane other would not run the hook: .husky/_/pre-commit does not exist: git runs no pre-commit hook',
    });
    expect(after.warnings[0]!.hint).toBe(
      `cp -R ${path.join(repo.dir, '.husky/_')} ${path.join(other, '.husky', '_')}`,
    );
    // the hint repairs it
    const cp = spawnSync('sh', ['-c', after.warnings[0]!.hint!]);
    expect(cp.status).toBe(0);
    expect(existsSync(path.join(other, '.husky', '_', 'pre-commit'))).toBe(true);
    expect(doctor(repo).warnings).toEqual([]);
  });

  it('runs a constant number of git processes, whatever the number of refs and lanes', () => {
    const repo = installed();
    const count = () => {
      const trace = path.join(repo.dir, '.git', `trace-${Math.random()}`);
      repo.guard(['doctor', '--json'], { env: { GUARD_TRACE_GIT: trace } });
      return readFileSync(trace, 'utf8').trim().split('\n').length;
    };
    const before = count();
    for (let i = 0; i < STOPS; i++) gateStops(repo);
    repo.guard(['start', 'l1']);
    repo.guard(['start', 'l2']);
    expect(repo.refs('refs/guard/rejected/').length).toBe(STOPS);
    expect(count()).toBe(before);
    // 8, plus read-tree for each of the two hooks it runs and the branch's verified tip
    expect(before).toBeLessThanOrEqual(11);
  });

  it('from inside a lane it reports on the main tree', () => {
    const repo = installed();
    repo.guard(['start', 'agent']);
    const r = repo.guardJson(['doctor'], {});
    const inLane = repo.guard([
      'doctor',
      '--json',
      '--cwd',
      path.join(repo.dir, '.guard', 'lanes', 'agent'),
    ]);
    expect(inLane.code).toBe(0);
    expect(JSON.parse(inLane.stdout).root).toBe(r.json.root);
  });
});
