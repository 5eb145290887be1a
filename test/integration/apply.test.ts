import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GuardError } from '../../src/core/errors.js';
import { makeDeadline } from '../../src/git/deadline.js';
import { openRepo } from '../../src/git/repo.js';
import { apply } from '../../src/flows/apply.js';
import { cleanupRepos, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

const checkpoints = (_dir: string, git: (a: string[]) => string) => git(['for-each-ref', '--format=%(refname)', 'refs/guard/checkpoints/']).split('\n').filter(Boolean);

describe('apply: the one way past the point of no return', () => {
  it('keeps the records first, then checkpoints, then writes, then reports', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = await openRepo(repo.dir);
    const order: string[] = [];
    const warnings: string[] = [];
    const out = await apply({
      deadline: makeDeadline(60),
      keep: async () => void order.push('keep'),
      target: {
        repo: r,
        lock: { holder: 'test', warnings },
        checkpoint: { reason: 'test', command: 'check', lane: null },
        write: async (cp) => {
          // the checkpoint exists before anything is written, and the tree is locked
          order.push(`write ${repo.git(['cat-file', '-t', cp.commit]).trim()}`);
          expect(readFileSync(path.join(r.gitDir, 'guard.lock'), 'utf8').split('\n')[0]).toBe(String(process.pid));
        },
      },
      after: async (cp) => {
        order.push('after');
        return cp?.id;
      },
    });
    expect(order).toEqual(['keep', 'write commit', 'after']);
    expect(existsSync(path.join(r.gitDir, 'guard.lock'))).toBe(false);
    expect(out).toMatch(/./);
    expect(checkpoints(repo.dir, (a) => repo.git(a))).toHaveLength(1);
  });

  it('a deadline already passed stops before anything: no records, no checkpoint', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = await openRepo(repo.dir);
    const deadline = makeDeadline(0.001);
    await new Promise((res) => setTimeout(res, 20));
    const order: string[] = [];
    const run = apply({
      deadline,
      keep: async () => void order.push('keep'),
      target: { repo: r, checkpoint: { reason: 'test', command: 'check', lane: null }, write: async () => void order.push('write') },
      after: async () => order.push('after'),
    });
    await expect(run).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    expect(order).toEqual([]);
    expect(checkpoints(repo.dir, (a) => repo.git(a))).toHaveLength(0);
  });

  it('a target that fails its verification under the lock records nothing and writes nothing; the lock is released', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = await openRepo(repo.dir);
    const order: string[] = [];
    const attempt = () =>
      apply({
        keep: async () => void order.push('keep'),
        target: {
          repo: r,
          lock: { holder: 'test', warnings: [] },
          verify: async () => {
            throw new GuardError('E_CHANGED', 'changed', 'again');
          },
          checkpoint: { reason: 'test', command: 'write', lane: null },
          write: async () => void order.push('write'),
        },
        after: async () => order.push('after'),
      });
    await expect(attempt()).rejects.toMatchObject({ code: 'E_CHANGED' });
    // released: a second attempt gets the lock at once (no wait) and fails the same way
    await expect(attempt()).rejects.toMatchObject({ code: 'E_CHANGED' });
    expect(order).toEqual([]);
    expect(checkpoints(repo.dir, (a) => repo.git(a))).toHaveLength(0);
    expect(existsSync(path.join(r.gitDir, 'guard.lock'))).toBe(false);
  });
});
