import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

/**
 * guard-cli/plugin keeps, across the calls of a harness's process, each
 * folder's repository and one `git cat-file` per work tree (git/resident.ts).
 * Driven here through the built plugin with real git: whatever the agent's
 * own git did between two calls (commits, gc, repack, prune, refs packed,
 * moved or deleted, a branch switch, the repository re-inited, deleted or
 * moved, a worktree added) the next call judges what is there now, as a
 * fresh git would; a cat-file killed or hung is started again without the
 * plugin throwing; several repositories share the harness; and no process
 * outlives the harness or keeps it alive.
 *
 * The policy is what tells: a stricter guard.config.json (a.txt protected)
 * committed by the agent's git between two calls must refuse the second
 * write, and a resident cat-file that answered from what it read before
 * would let it through (or, missing the config, fall back to the defaults).
 */

type Plugin = typeof import('../../src/plugin/index.js');
type Resident = typeof import('../../src/git/resident.js');
let plugin: Plugin;
let resident: Resident;
const saved = { ...process.env };
let trace: string;

beforeAll(async () => {
  // the plugin's git runs in this process's environment, as in a harness
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, cleanEnv({ CI: 'true' }));
  plugin = await import(pathToFileURL(path.join(ROOT, 'dist', 'plugin', 'index.js')).href);
  resident = await import(pathToFileURL(path.join(ROOT, 'dist', 'git', 'resident.js')).href);
  trace = path.join(mkdtempSync(path.join(tmpdir(), 'guard-resident-')), 'trace');
  process.env.GUARD_TRACE_GIT = trace;
});
afterEach(() => {
  resident.closeResident();
  writeFileSync(trace, '');
});
afterAll(() => {
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, saved);
  cleanupRepos();
});

const STRICT = '{"protect": ["a.txt"]}\n';
let n = 0;

/** A write of one line of a.txt (a small edit: allowed unless a.txt is protected). */
function write(dir: string, session: string, content = `a ${++n}\n${lines(20)}`) {
  return plugin.guardToolCall({
    harness: 'opencode',
    phase: 'before',
    sessionId: session,
    toolCallId: `c${++n}`,
    cwd: dir,
    tool: 'write',
    kind: 'write',
    path: 'a.txt',
    content,
  });
}

/** The git processes started since the last look, by subcommand. */
function started(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of readFileSync(trace, 'utf8').split('\n').filter(Boolean)) {
    const sub = l.split(' ').find((w, i, all) => all[i - 1] !== '-c' && w !== '-c')!;
    out[sub] = (out[sub] ?? 0) + 1;
  }
  writeFileSync(trace, '');
  return out;
}

/** Is process `pid` gone (not running, not a zombie) within two seconds? */
/**
 * The process no longer runs: gone, or a zombie. A process whose parent exited is reaped by the
 * machine's init (or a subreaper), whenever that one waits: on a loaded CI machine a dead git
 * stayed a zombie past two seconds, which is the init's doing, not guard's.
 */
async function goneSoon(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!existsSync(`/proc/${pid}`) || stateOf(pid) === 'Z') return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** The state letter of /proc/PID/stat ("" once gone); the name in brackets may hold anything. */
function stateOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '';
  }
}

function repoWithBranches(): TestRepo {
  const repo = makeRepo({ 'a.txt': lines(20) });
  repo.git(['branch', 'strict']);
  repo.git(['checkout', '-q', 'strict']);
  repo.write('guard.config.json', STRICT);
  repo.commitAll('strict policy');
  repo.git(['checkout', '-q', 'main']);
  return repo;
}

const allowed = (v: { action: string }) =>
  expect(v, JSON.stringify(v)).toEqual({ action: 'allow' });
const denied = (v: { action: string; reason?: string }) => {
  expect(v.action).toBe('deny');
  // refused for the policy, not because guard failed
  expect(v.reason).toMatch(/a\.txt/);
  expect(v.reason).not.toMatch(/fail closed|failed|internal error/);
};

describe('what the agent did between two calls is what the next call sees', () => {
  it('a commit of a stricter policy: no rev-parse, no second cat-file, and the write refused', async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    allowed(await write(repo.dir, 'commit'));
    started();
    allowed(await write(repo.dir, 'commit'));
    const second = started();
    expect(second['rev-parse'] ?? 0).toBe(0);
    expect(second['cat-file'] ?? 0).toBe(0);
    repo.write('guard.config.json', STRICT);
    repo.commitAll('strict');
    denied(await write(repo.dir, 'commit'));
    expect(started()['cat-file'] ?? 0).toBe(0);
  });

  it('a branch switch, a branch moved, refs packed then moved, a ref deleted', async () => {
    const repo = repoWithBranches();
    allowed(await write(repo.dir, 'switch'));
    repo.git(['checkout', '-q', 'strict']);
    denied(await write(repo.dir, 'switch'));

    const moved = repoWithBranches();
    allowed(await write(moved.dir, 'moved'));
    moved.git(['pack-refs', '--all']);
    allowed(await write(moved.dir, 'moved'));
    // main moved to the strict commit, then packed: only packed-refs says so
    moved.git(['update-ref', 'refs/heads/main', 'refs/heads/strict']);
    moved.git(['pack-refs', '--all']);
    expect(existsSync(path.join(moved.dir, '.git', 'refs', 'heads', 'main'))).toBe(false);
    denied(await write(moved.dir, 'moved'));

    // HEAD's branch deleted: HEAD names nothing, as for a fresh git (an unborn branch: no config committed)
    const gone = repoWithBranches();
    gone.git(['checkout', '-q', 'strict']);
    denied(await write(gone.dir, 'gone'));
    gone.git(['update-ref', '-d', 'refs/heads/strict']);
    const v = await write(gone.dir, 'gone');
    // the session saw the strict policy: it still holds (the anchor), whatever HEAD says now
    denied(v);
    expect(started()['cat-file']).toBe(3);
  });

  it('gc, repack -ad, prune: objects moved into new packs, old packs and loose objects deleted', async () => {
    for (const [cmd, processes] of [
      [['gc', '-q', '--prune=now'], 2],
      [['repack', '-q', '-a', '-d'], 2],
      [['repack', '-q', '-d'], 1],
      [['prune', '--expire=now'], 1],
    ] as const) {
      // the policy read from a pack the next command deletes (or keeps)
      const repo = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
      repo.git(['repack', '-q', '-d']);
      denied(await write(repo.dir, 'gc'));
      repo.git([...cmd]);
      denied(await write(repo.dir, 'gc'));
      // a pack it may have read was deleted: started again; else the same process
      expect(started()['cat-file'], cmd.join(' ')).toBe(processes);
      // a policy committed after the process started, then packed or pruned around
      const loose = makeRepo({ 'a.txt': lines(20) });
      allowed(await write(loose.dir, 'gc2'));
      loose.write('guard.config.json', STRICT);
      loose.commitAll('strict');
      loose.git([...cmd]);
      denied(await write(loose.dir, 'gc2'));
      resident.closeResident();
      started();
    }
  });

  it('git init over it, the repository deleted and made again, moved away', async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    allowed(await write(repo.dir, 'init'));
    rmSync(path.join(repo.dir, '.git'), { recursive: true, force: true });
    repo.git(['init', '-q', '-b', 'main']);
    repo.git(['config', 'core.hooksPath', '/dev/null']);
    repo.write('guard.config.json', STRICT);
    repo.commitAll('strict');
    denied(await write(repo.dir, 'init'));
    expect(started()['rev-parse']).toBe(2);

    // the whole folder deleted: no repository there, no cat-file to ask, no throw
    const deleted = makeRepo({ 'a.txt': lines(20) });
    allowed(await write(deleted.dir, 'deleted'));
    const [before] = resident.residentPids().slice(-1);
    rmSync(deleted.dir, { recursive: true, force: true });
    const v = await write(deleted.dir, 'deleted');
    expect(['allow', 'deny']).toContain(v.action);
    // its cat-file ended with its repository
    expect(resident.residentPids()).not.toContain(before);
    expect(await goneSoon(before!)).toBe(true);

    // moved away, and another repository made where it was
    const moved = makeRepo({ 'a.txt': lines(20) });
    allowed(await write(moved.dir, 'moved'));
    renameSync(moved.dir, `${moved.dir}-away`);
    const other = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
    renameSync(other.dir, moved.dir);
    denied(await write(moved.dir, 'moved'));
    rmSync(`${moved.dir}-away`, { recursive: true, force: true });
  });

  it('a worktree added: its own HEAD, its own cat-file; a nested repository made under a folder', async () => {
    const repo = repoWithBranches();
    allowed(await write(repo.dir, 'wt'));
    const wt = `${repo.dir}-wt`;
    repo.git(['worktree', 'add', '-q', wt, 'strict']);
    denied(await write(wt, 'wt'));
    allowed(await write(repo.dir, 'wt'));
    expect(resident.residentPids()).toHaveLength(2);
    repo.git(['worktree', 'remove', '--force', wt]);

    // a folder of the repository becomes a repository of its own, with the strict policy
    const outer = makeRepo({ 'a.txt': lines(20), 'sub/a.txt': lines(20) });
    const sub = path.join(outer.dir, 'sub');
    allowed(await write(sub, 'nested'));
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: sub, env: cleanEnv() });
    writeFileSync(path.join(sub, 'guard.config.json'), STRICT);
    for (const args of [
      ['add', '-A'],
      ['commit', '-q', '--no-verify', '-m', 'nested'],
    ])
      spawnSync('git', args, { cwd: sub, env: cleanEnv() });
    denied(await write(sub, 'nested'));
  });

  it("a GIT_* variable of the harness's process changed: discovered again, a new cat-file", async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    allowed(await write(repo.dir, 'env'));
    started();
    process.env.GIT_CONFIG_COUNT = '1';
    process.env.GIT_CONFIG_KEY_0 = 'core.abbrev';
    process.env.GIT_CONFIG_VALUE_0 = '12';
    try {
      allowed(await write(repo.dir, 'env'));
      const s = started();
      expect(s['rev-parse']).toBe(1);
      expect(s['cat-file']).toBe(1);
    } finally {
      delete process.env.GIT_CONFIG_COUNT;
      delete process.env.GIT_CONFIG_KEY_0;
      delete process.env.GIT_CONFIG_VALUE_0;
    }
  });
});

describe('a resident process that dies, hangs, or outlives its harness', () => {
  it('killed between calls: started again, the call judged; no zombie left', async () => {
    const repo = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
    denied(await write(repo.dir, 'kill'));
    const [pid] = resident.residentPids();
    process.kill(pid!, 'SIGKILL');
    denied(await write(repo.dir, 'kill'));
    const [again] = resident.residentPids();
    expect(again).not.toBe(pid);
    expect(await goneSoon(pid!)).toBe(true);
  });

  it('killed while guard reads: the call retries once on a new process, never throws', async () => {
    const repo = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
    denied(await write(repo.dir, 'kill2'));
    const [pid] = resident.residentPids();
    // stopped, so the next call's read waits on it; then killed under that read: a fresh process answers it
    process.kill(pid!, 'SIGSTOP');
    const p = write(repo.dir, 'kill2');
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(pid!, 'SIGKILL');
    denied(await p);
    expect(resident.residentPids()).toHaveLength(1);
    expect(resident.residentPids()).not.toContain(pid);
  });

  it('hung: refused once the budget is spent, then a new process answers', async () => {
    const repo = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
    denied(await write(repo.dir, 'hang'));
    const [pid] = resident.residentPids();
    process.kill(pid!, 'SIGSTOP');
    const t = Date.now();
    const v = await plugin.guardToolCall(
      {
        harness: 'opencode',
        phase: 'before',
        sessionId: 'hang',
        cwd: repo.dir,
        tool: 'write',
        kind: 'write',
        path: 'b.txt',
        content: 'b\n',
      },
      { budgetMs: 1500 },
    );
    expect(v.action).toBe('deny');
    expect((v as { reason: string }).reason).toMatch(/time/);
    expect(Date.now() - t).toBeLessThan(10_000);
    // the stopped process was killed, not left behind
    expect(await goneSoon(pid!)).toBe(true);
    denied(await write(repo.dir, 'hang'));
  });

  it('several repositories in one harness: each its own answer, one cat-file each, at most 8', async () => {
    const loose = makeRepo({ 'a.txt': lines(20) });
    const strict = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
    for (let i = 0; i < 3; i++) {
      allowed(await write(loose.dir, 'two'));
      denied(await write(strict.dir, 'two'));
    }
    expect(started()['cat-file']).toBe(2);
    expect(resident.residentPids()).toHaveLength(2);
    // past 8 work trees the least recently used one's process ends
    const pids = new Set(resident.residentPids());
    for (let i = 0; i < 7; i++) allowed(await write(makeRepo({ 'a.txt': lines(20) }).dir, 'many'));
    expect(resident.residentPids()).toHaveLength(8);
    const [first] = pids;
    expect(resident.residentPids()).not.toContain(first);
    expect(await goneSoon(first!)).toBe(true);
  });

  it('the harness exits by itself after its calls, and leaves no git behind', async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    const url = pathToFileURL(path.join(ROOT, 'dist', 'plugin', 'index.js')).href;
    const res = pathToFileURL(path.join(ROOT, 'dist', 'git', 'resident.js')).href;
    const script = `
      const p = await import(${JSON.stringify(url)});
      const r = await import(${JSON.stringify(res)});
      const call = { harness: 'opencode', phase: 'before', sessionId: 'exit', cwd: ${JSON.stringify(repo.dir)}, tool: 'write', kind: 'write', path: 'a.txt', content: 'a\\n' + ${JSON.stringify(lines(19))} };
      const v1 = await p.guardToolCall(call);
      const v2 = await p.guardToolCall({ ...call, phase: 'after' });
      console.log(JSON.stringify({ v1, v2, pids: r.residentPids() }));`;
    const t = Date.now();
    const tracedOn = path.join(path.dirname(trace), 'on');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: cleanEnv({ CI: 'true', GUARD_TRACE_GIT: tracedOn }),
      timeout: 30_000,
    });
    expect(r.signal, r.stderr.toString()).toBeNull();
    expect(Date.now() - t).toBeLessThan(20_000);
    const out = JSON.parse(r.stdout.toString().trim().split('\n').pop()!);
    expect(out.v1.action).toBe('allow');
    expect(out.pids).toHaveLength(1);
    // one rev-parse for the two events (the after event's repository is the kept one)
    const count = (file: string, sub: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith(sub)).length;
    expect(count(tracedOn, 'rev-parse')).toBe(1);
    // gone with the harness (no longer running): killed at its exit; reaping it is init's job
    expect(await goneSoon(out.pids[0])).toBe(true);

    // GUARD_PLUGIN_RESIDENT=0: nothing kept, every read its own process (as guard hook)
    const traced = path.join(path.dirname(trace), 'off');
    const off = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: cleanEnv({ CI: 'true', GUARD_PLUGIN_RESIDENT: '0', GUARD_TRACE_GIT: traced }),
      timeout: 30_000,
    });
    const offOut = JSON.parse(off.stdout.toString().trim().split('\n').pop()!);
    expect(offOut.v1.action).toBe('allow');
    expect(offOut.pids).toHaveLength(0);
    // as guard hook: each event finds the repository from the file system (git/discover.ts)
    expect(count(traced, 'rev-parse')).toBe(0);
  });
});
