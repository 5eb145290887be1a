import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupRepos,
  fixture,
  laneWrite,
  makeRepo,
  startLane,
  type Run,
  type TestRepo,
} from '../helpers.js';
import { guardAsync, guardInProcess, guardSync } from '../inproc.js';

afterAll(cleanupRepos);

/** What differs between two runs of the same command: ids, times, object ids. */
function same(repo: TestRepo, r: Run): Run {
  const clean = (s: string) =>
    s
      .split(repo.dir)
      .join('<repo>')
      .replace(/\d{8}T\d{6}Z-[0-9a-f]+/g, '<id>')
      .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/\b[0-9a-f]{7,40}\b/g, '<oid>');
  return { code: r.code, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}

/**
 * test/inproc.ts runs the CLI in this process: here each command runs both
 * ways, in two identical repositories, and must say the same, exit the
 * same and leave the same refs.
 */
describe('the CLI in process answers as the spawned CLI does', () => {
  const setup = () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'a.txt': 'a\n' });
    const lane = startLane(repo);
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'a.txt', 'a\nb\n');
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', 'state.py']);
    return repo;
  };
  const hook = (repo: TestRepo) =>
    JSON.stringify({
      session_id: 's1',
      cwd: repo.dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: `${repo.dir}/a.txt`, content: 'x\n' },
      tool_use_id: 't1',
    });
  const calls: Array<[string, string[], ((r: TestRepo) => string)?]> = [
    ['check, blocked', ['check']],
    ['check --json', ['check', '--json']],
    ['lanes', ['lanes']],
    ['review --dry-run', ['review', 'agent', '--dry-run']],
    ['write from stdin', ['write', 'new.txt'], () => 'new\n'],
    ['hook claude, a write', ['hook', 'claude'], hook],
    ['hook claude, the same call again', ['hook', 'claude'], hook],
    ['log', ['log']],
    ['doctor', ['doctor']],
    ['an unknown lane', ['review', 'nope']],
    ['a usage error (yargs)', ['check', '--nope']],
  ];
  it('each command, in order, in two repositories', async () => {
    const spawned = setup();
    const inproc = setup();
    for (const [what, args, input] of calls) {
      const a = spawned.guardSpawned(args, { input: input?.(spawned) ?? '' });
      const b = await guardInProcess(args, { cwd: inproc.dir, input: input?.(inproc) ?? '' });
      expect(same(inproc, b), what).toEqual(same(spawned, a));
      expect(inproc.refs().length, what).toBe(spawned.refs().length);
    }
  });

  // TestRepo.guard's runner: dist/ loaded once in a worker thread, every call in it
  it('each command, in order, through guardSync (TestRepo.guard), in two repositories', () => {
    const spawned = setup();
    const inproc = setup();
    for (const [what, args, input] of calls) {
      const a = spawned.guardSpawned(args, { input: input?.(spawned) ?? '' });
      const b = guardSync(args, { cwd: inproc.dir, input: input?.(inproc) ?? '' });
      expect(same(inproc, b), what).toEqual(same(spawned, a));
      expect(inproc.refs().length, what).toBe(spawned.refs().length);
      expect(inproc.git(['status', '--porcelain', '--untracked-files=all']), what).toBe(
        spawned.git(['status', '--porcelain', '--untracked-files=all']),
      );
    }
  });

  it('guardSync: env and cwd reach the command and do not stay, in this thread or the next call', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const before = { ...process.env };
    const cwd = process.cwd();
    const r = guardSync(['check', '--json'], { cwd: '/', env: { GUARD_AUTO: '1' } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('E_NOT_A_REPO');
    expect(process.env).toEqual(before);
    expect(process.cwd()).toBe(cwd);
    // GUARD_DEBUG of the call before is gone: the env is the call's, whole
    const debug = guardSync(['check', '--nope'], { cwd: repo.dir, env: { GUARD_DEBUG: '1' } });
    const plain = guardSync(['check', '--nope'], { cwd: repo.dir });
    expect(plain).toEqual(repo.guardSpawned(['check', '--nope']));
    void debug;
  });

  it('guardAsync (for tests with a server in this process) answers as the spawned CLI does', async () => {
    const spawned = setup();
    const inproc = setup();
    for (const [what, args] of [calls[1]!, calls[2]!, calls[10]!]) {
      const a = spawned.guardSpawned(args);
      const b = await guardAsync(args, { cwd: inproc.dir });
      expect(same(inproc, b), what).toEqual(same(spawned, a));
    }
  });

  it('guardSync refuses what needs a process: GUARD_FAULT', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expect(() => guardSync(['check'], { cwd: repo.dir, env: { GUARD_FAULT: 'x' } })).toThrow(
      /GUARD_FAULT/,
    );
  });

  it('outside a repository; env reaches the command and does not stay', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const before = { ...process.env };
    const r = await guardInProcess(['check', '--json'], { cwd: '/', env: { GUARD_AUTO: '1' } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('E_NOT_A_REPO');
    expect(process.env).toEqual(before);
    expect(process.cwd()).not.toBe('/');
    void repo;
  });
});
