import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, readdirSync, statSync } from 'node:fs';
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
});
