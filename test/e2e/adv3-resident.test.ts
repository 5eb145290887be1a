/**
 * Issue 20, the fourth adversary round (docs/reliability/adv3.md): the
 * plugin's resident reads (git/resident.ts) driven as a harness runs them,
 * through the built guard-cli/plugin in this process, with the agent's own
 * git and file system moves between two calls.
 */
import { appendFileSync, mkdtempSync, realpathSync, renameSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, cleanupRepos, lines, makeRepo } from '../helpers.js';

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
});
