import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  claudePayload,
  cleanEnv,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
} from '../helpers.js';

afterAll(cleanupRepos);

/**
 * A hook process runs `guard hook`'s own build (dist/cli/guard-hook.cjs) with a V8 code cache
 * that main.js takes at the end of the first process of each kind of event, in node's compile
 * cache folder (scripts/bundle.mjs hookBuild; docs/performance.md). The processes are spawned:
 * main.js, the fds and the cache are what is under test. The answers are the same with the cache
 * cold, warm and off; a cache file someone else could write is not read.
 */
const hasCacheDir = typeof (module as { getCompileCacheDir?: unknown }).getCompileCacheDir;

describe("guard hook's own build and its code cache", () => {
  const repo = makeRepo({ 'app.py': lines(10) });
  const cacheDir = outsideDir();
  const hook = (payload: string, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [CLI, 'hook', 'claude'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true', NODE_COMPILE_CACHE: cacheDir, ...env }),
      input: payload,
      encoding: 'utf8',
    });
  const write = (id: string, post = false) =>
    claudePayload(
      repo,
      'cache-1',
      'Write',
      { file_path: path.join(repo.dir, 'app.py'), content: lines(10) + `more ${id}\n` },
      id,
      post,
    );
  const caches = (): string[] => {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory()) walk(path.join(dir, e.name));
        else if (/^guard-hook-[0-9a-f]+\.v8$/.test(e.name)) out.push(path.join(dir, e.name));
    };
    walk(cacheDir);
    return out;
  };
  const kinds = (file: string) =>
    readFileSync(file).subarray(0, readFileSync(file).indexOf(10)).toString().split(' ').slice(2);

  it('answers the same cold, warm and with the cache off, and each kind of event adds to the cache once', () => {
    const answers = [1, 2, 3].map(() => hook('{}'));
    const off = hook('{}', { NODE_DISABLE_COMPILE_CACHE: '1' });
    for (const r of [...answers, off]) {
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(answers[0]!.stdout);
      expect(r.stderr).toBe(answers[0]!.stderr);
    }
    expect(JSON.parse(answers[0]!.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    const pre = hook(write('toolu_1'));
    expect([pre.status, pre.stdout, pre.stderr]).toEqual([0, '', '']);
    const post = hook(write('toolu_1', true));
    expect([post.status, post.stdout, post.stderr]).toEqual([0, '', '']);
    if (hasCacheDir !== 'function') return; // node 20: no compile cache, no hook cache
    const [file, ...more] = caches();
    expect(more).toEqual([]);
    expect(kinds(file!)).toEqual(['none', 'pre-write', 'post-write']);
    // another write: a kind already held, the cache stays as it was
    const before = statSync(file!).mtimeMs;
    expect(hook(write('toolu_2')).stdout).toBe('');
    expect(statSync(file!).mtimeMs).toBe(before);
  });

  it.skipIf(hasCacheDir !== 'function')(
    'a cache file others could write is not read: a new one replaces it',
    () => {
      expect(hook(write('toolu_3')).status).toBe(0);
      const [file] = caches();
      expect(kinds(file!)).toContain('pre-write');
      chmodSync(file!, 0o666);
      const r = hook(write('toolu_3', true));
      expect([r.status, r.stdout]).toEqual([0, '']);
      expect(kinds(file!)).toEqual(['post-write']);
      expect(statSync(file!).mode & 0o022).toBe(0);
    },
  );

  it.skipIf(hasCacheDir !== 'function')(
    "writing its cache removes other builds' caches unused for a week and temp files an hour old, and only those",
    () => {
      const own = new Set(caches());
      expect(own.size).toBe(1);
      const dir = path.dirname([...own][0]!);
      const plant = (name: string, hoursAgo: number) => {
        const f = path.join(dir, name);
        writeFileSync(f, 'v1 0-0-0-0 none\n');
        const t = (Date.now() - hoursAgo * 3600e3) / 1000;
        utimesSync(f, t, t);
        return f;
      };
      const stale = plant('guard-hook-0badc0de.v8', 8 * 24);
      const used = plant('guard-hook-0c0ffee0.v8', 6 * 24);
      const deadTmp = plant('guard-hook-0badc0de.v8.4242', 2);
      const liveTmp = plant('guard-hook-0c0ffee0.v8.4343', 0.1);
      const other = plant('not-guard.v8', 30 * 24);
      // the identity links beside caches (holes8): the stale cache's goes with it, the used one's stays
      const link = (of: string) => (symlinkSync('v1-0-0-0-0', `${of}.id`), `${of}.id`);
      const [staleId, usedId] = [link(stale), link(used)];
      // a process that only reads this build's cache writes nothing and sweeps nothing
      expect(hook(write('toolu_4', true)).status).toBe(0);
      expect([stale, used, deadTmp, liveTmp, other].every((f) => existsSync(f))).toBe(true);
      // a kind of event the cache does not hold yet: it is written, and the stale ones go
      const shell = claudePayload(repo, 'cache-1', 'Bash', { command: 'true' }, 'toolu_5');
      expect(hook(shell).status).toBe(0);
      expect(kinds([...own][0]!)).toContain('pre-shell');
      expect([stale, deadTmp].map((f) => existsSync(f))).toEqual([false, false]);
      expect([used, liveTmp, other].map((f) => existsSync(f))).toEqual([true, true, true]);
      // (the stale cache's link may go at this sweep or the next, once its cache is gone)
      expect(lstatSync(usedId).isSymbolicLink()).toBe(true);
      expect(lstatSync(`${[...own][0]!}.id`).isSymbolicLink()).toBe(true);
      rmSync(`${[...own][0]!}`);
      expect(hook(shell).status).toBe(0);
      expect(() => lstatSync(staleId)).toThrow();
    },
  );
});
