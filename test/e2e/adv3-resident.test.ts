/**
 * Issue 20, the fourth adversary round (docs/reliability/adv3.md): the
 * plugin's resident reads (git/resident.ts) driven as a harness runs them,
 * through the built guard-cli/plugin in this process, with the agent's own
 * git and file system moves between two calls.
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, cleanupRepos, lines, makeRepo } from '../helpers.js';

const STRICT = '{"protect": ["a.txt"]}\n';

type Plugin = typeof import('../../src/plugin/index.js');
type Resident = typeof import('../../src/git/resident.js');
let plugin: Plugin;
let resident: Resident;
const saved = { ...process.env };

beforeAll(async () => {
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, cleanEnv({ CI: 'true' }));
  plugin = await import(pathToFileURL(path.join(ROOT, 'dist', 'plugin', 'index.js')).href);
  resident = await import(pathToFileURL(path.join(ROOT, 'dist', 'git', 'resident.js')).href);
});
afterEach(() => resident.closeResident());
afterAll(() => {
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, saved);
  cleanupRepos();
});

let n = 0;
function call(dir: string, kind: 'write' | 'shell', arg: string) {
  return plugin.guardToolCall({
    harness: 'opencode',
    phase: 'before',
    sessionId: 'adv3',
    toolCallId: `c${++n}`,
    cwd: dir,
    tool: kind === 'write' ? 'write' : 'bash',
    kind,
    ...(kind === 'write' ? { path: 'a.txt', content: arg } : { command: arg }),
  });
}
const outside = (name: string) =>
  path.join(realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-adv3-'))), name);

describe('a kept repository made stale between two calls', () => {
  it('.git/config a symlink whose target gains core.worktree: the next call sees what a fresh git sees', async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    const cfg = outside('config');
    renameSync(path.join(repo.dir, '.git', 'config'), cfg);
    symlinkSync(cfg, path.join(repo.dir, '.git', 'config'));
    expect(await call(repo.dir, 'write', `b\n${lines(20)}`)).toEqual({ action: 'allow' });
    // the agent's `git config core.worktree X` writes through the link: the link itself is untouched
    appendFileSync(cfg, `[core]\n\tworktree = ${path.dirname(outside('x'))}\n`);
    const kept = await call(repo.dir, 'shell', 'rm a.txt');
    resident.closeResident();
    const fresh = await call(repo.dir, 'shell', 'rm a.txt');
    expect(fresh.action).toBe('deny');
    expect(kept).toEqual(fresh);
  });

  it("a linked worktree's commondir a symlink whose target is rewritten to a decoy with a strict policy: seen", async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    const wt = `${repo.dir}-wt`;
    repo.git(['worktree', 'add', '-q', wt]);
    const wtGit = path.join(repo.dir, '.git', 'worktrees', path.basename(wt));
    const target = outside('commondir');
    writeFileSync(target, `${path.join(repo.dir, '.git')}\n`);
    renameSync(path.join(wtGit, 'commondir'), `${target}.old`);
    symlinkSync(target, path.join(wtGit, 'commondir'));
    expect(await call(wt, 'write', `b\n${lines(20)}`)).toEqual({ action: 'allow' });
    // a decoy common dir whose HEAD (the worktree's branch) holds a policy protecting a.txt
    const decoy = makeRepo({ 'a.txt': lines(20), 'guard.config.json': STRICT });
    decoy.git(['branch', '-f', path.basename(wt)]);
    decoy.git(['update-ref', `refs/heads/${path.basename(wt)}`, 'HEAD']);
    writeFileSync(target, `${path.join(decoy.dir, '.git')}\n`);
    const kept = await call(wt, 'write', `c\n${lines(20)}`);
    resident.closeResident();
    const fresh = await call(wt, 'write', `c\n${lines(20)}`);
    expect(fresh.action).toBe('deny');
    // (kept from before, the call failed closed on git's refusing the kept common dir's commits)
    expect(kept).toMatchObject({ action: 'deny', reason: expect.stringMatching(/protected path/) });
  });

  it('held: .git/config rewritten in place (same inode, same size) with its times put back', async () => {
    const repo = makeRepo({ 'a.txt': lines(20) });
    const cfg = path.join(repo.dir, '.git', 'config');
    const away = path.dirname(outside('x'));
    const line = `[core]\n\tworktree = ${away}\n`;
    // a line of the same length now, to be overwritten byte for byte
    appendFileSync(cfg, `[user]\n\tname = ${'x'.repeat(line.length - 16)}\n`);
    expect(await call(repo.dir, 'write', `b\n${lines(20)}`)).toEqual({ action: 'allow' });
    const st = statSync(cfg, { bigint: true });
    const times = outside('times');
    spawnSync('touch', ['-r', cfg, times]);
    const size = readFileSync(cfg).length;
    const fd = openSync(cfg, 'r+');
    writeSync(fd, line, size - line.length);
    closeSync(fd);
    spawnSync('touch', ['-r', times, cfg]);
    const now = statSync(cfg, { bigint: true });
    expect([now.ino, now.size, now.mtimeNs]).toEqual([st.ino, st.size, st.mtimeNs]);
    // the change time cannot be put back: the next call asks git again, which names another tree
    const v = await call(repo.dir, 'shell', 'rm a.txt');
    expect(v.action).toBe('deny');
    expect((v as { reason: string }).reason).toMatch(/holds a repository/);
  });
});

describe('the plugin file guard init writes for opencode and Kilo', () => {
  for (const h of ['opencode', 'kilo'] as const) {
    it(`${h}: an MCP server's tool (fs_write_file) over 150 lines of uncommitted work reaches guard: kept and reported`, async () => {
      const repo = makeRepo({ 'big.py': lines(200) });
      repo.git(['config', '--unset', 'core.hooksPath']);
      const init = repo.guard(['init', '--agent', h]);
      expect(init.code, init.stderr).toBe(0);
      const file = path.join(repo.dir, h === 'kilo' ? '.kilo' : '.opencode', 'plugins', 'guard.js');
      const mod = await import(pathToFileURL(file).href);
      const hooks = await mod.GuardPlugin({ directory: repo.dir, worktree: repo.dir });
      writeFileSync(path.join(repo.dir, 'big.py'), lines(200) + lines(150, 'work'));
      const input = { tool: 'fs_write_file', sessionID: `ses-${h}`, callID: 'm1' };
      const args = { path: 'big.py', content: 'x\n' };
      await hooks['tool.execute.before'](input, { args });
      writeFileSync(path.join(repo.dir, 'big.py'), 'x\n');
      const out = { output: 'written' };
      await hooks['tool.execute.after']({ ...input, args }, out);
      // on 263759b the file passed only write, edit, apply_patch and bash to guard
      expect(out.output).toMatch(/big\.py lost/);
      const id = /guard restore (\S+) -- big\.py/.exec(out.output)?.[1];
      expect(id, out.output).toBeDefined();
      expect(repo.guard(['restore', id!, '--', 'big.py']).code).toBe(0);
      expect(repo.read('big.py')).toBe(lines(200) + lines(150, 'work'));
      // opencode's own read-only tools still pass without guard
      const before = repo.refs('refs/guard/');
      await hooks['tool.execute.before'](
        { tool: 'todowrite', sessionID: `ses-${h}`, callID: 't' },
        { args: {} },
      );
      expect(repo.refs('refs/guard/')).toEqual(before);
    });
  }
});
