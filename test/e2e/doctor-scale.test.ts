/**
 * guard doctor past DOCTOR_READS records: it counts and type-checks every
 * ref under refs/guard/, but reads the messages of the newest records only
 * (reading 100,000 made it 7x slower than without them: docs/performance.md).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, installGuard } from '../helpers.js';

afterAll(cleanupRepos);

type Check = { id: string; message: string };

describe('guard doctor with more records than it reads', () => {
  it('counts all, checks every type, reads the newest 2,000: a new corrupt record is found, an old one is not read', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const good = `guard: checkpoint\n\n${JSON.stringify({ kind: 'checkpoint' })}\n`;
    const stream: string[] = [];
    const record = (ref: string, msg: string, t: number) =>
      stream.push(
        `commit ${ref}\ncommitter g <g@example.com> ${t} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}from ${head}\n`,
      );
    // names start with the time: 2,100 records, the oldest corrupt, one of the newest corrupt
    for (let i = 0; i < 2_100; i++) {
      const stamp = `20260101T${String(Math.floor(i / 60) % 24).padStart(2, '0')}${String(i % 60).padStart(2, '0')}00Z-${i.toString(16).padStart(8, '0')}`;
      const day = i < 1440 ? '20260101' : '20260102';
      const name = `${day}${stamp.slice(8)}`;
      record(
        `refs/guard/checkpoints/${name}`,
        i === 0 ? 'not a record\n' : i === 2_099 ? 'edited by hand\n' : good,
        1_767_225_600 + i,
      );
    }
    const r = spawnSync('git', ['-c', 'core.hooksPath=/dev/null', 'fast-import', '--quiet'], {
      cwd: repo.dir,
      input: stream.join('\n'),
    });
    expect(r.status, r.stderr.toString()).toBe(0);
    // (they stand for 2,100 of guard's own records: journaled as guard journals its refs, or the
    // net reads a journal that knows none of them as one put back in its place: holes4)
    appendFileSync(
      path.join(repo.dir, '.git', 'guard', 'journal'),
      repo.git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/guard/checkpoints/']),
    );
    // a ref at a blob among the old ones: types are checked for every ref
    const blob = repo.git(['hash-object', '-w', 'a.txt']).trim();
    repo.git(['update-ref', 'refs/guard/checkpoints/20250101T000000Z-blob0000', blob]);

    const { code, json } = repo.guardJson(['doctor']);
    expect(code).toBe(0);
    const checks = json.checks as Check[];
    const byId = (id: string) => checks.find((c) => c.id === id);
    expect(json.refs.checkpoints).toBe(2_101);
    expect(byId('refs')!.message).toContain('the newest 2,000 records read in full');
    const corrupt = byId('refs-corrupt')!;
    expect(corrupt.message).toMatch(/^1 record /);
    expect(corrupt.message).toContain('-00000833'); // i = 2,099
    expect(corrupt.message).not.toContain('-00000000');
    expect(byId('refs-type')!.message).toContain('20250101T000000Z-blob0000');
  }, 180_000);
});

describe('guard doctor and guard log past 5,000 refs: names from the ref store files (git/ref-list.ts)', () => {
  it('count every ref, type the loose ones and the newest records, and agree with for-each-ref', () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const checkpoint = `guard: checkpoint\n\n${JSON.stringify({ kind: 'checkpoint', reason: 'r' })}\n`;
    const decision = (i: number) =>
      `guard: 1 allowed\n\n${JSON.stringify({ kind: 'decisions', decisions: [{ path: `f${i}`, decision: 'allowed' }] })}\n`;
    // the commits with one fast-import (marks), their refs written straight into packed-refs,
    // sorted, as pack-refs leaves them (5,100 loose ref files to prune are slow on a busy machine)
    const stream: string[] = [];
    const refs: string[] = [];
    const record = (ref: string, msg: string, t: number) => {
      refs.push(ref);
      stream.push(
        `commit refs/tmp-import\nmark :${refs.length}\ncommitter g <g@example.com> ${t} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}from ${head}\n`,
      );
    };
    // 1,700 calls: a checkpoint, a decision record and a session step each (5,100 refs), one a second
    for (let i = 0; i < 1_700; i++) {
      const t = 1_767_225_600 + i;
      const name = `${new Date(t * 1000)
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z')}-${i.toString(16).padStart(8, '0')}`;
      record(`refs/guard/checkpoints/${name}`, checkpoint, t);
      record(`refs/guard/decisions/${name}`, decision(i), t);
      record(`refs/guard/sessions/claude/s${i % 7}/${name}`, checkpoint, t);
    }
    const marks = path.join(repo.dir, '.git', 'marks');
    const r = spawnSync(
      'git',
      ['-c', 'core.hooksPath=/dev/null', 'fast-import', '--quiet', `--export-marks=${marks}`],
      { cwd: repo.dir, input: stream.join('\n') },
    );
    expect(r.status, r.stderr.toString()).toBe(0);
    const noHooks = ['-c', 'core.hooksPath=/dev/null'];
    repo.git([...noHooks, 'update-ref', '-d', 'refs/tmp-import']);
    repo.git([...noHooks, 'pack-refs', '--all', '--prune']);
    const packedFile = path.join(repo.dir, '.git', 'packed-refs');
    const lines = readFileSync(packedFile, 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('^'));
    for (const m of readFileSync(marks, 'utf8').matchAll(/^:(\d+) ([0-9a-f]+)$/gm))
      lines.push(`${m[2]} ${refs[Number(m[1]) - 1]}`);
    const nameOf = (l: string) => l.slice(l.indexOf(' ') + 1);
    lines.sort((x, y) => (nameOf(x) < nameOf(y) ? -1 : nameOf(x) > nameOf(y) ? 1 : 0));
    writeFileSync(
      packedFile,
      `# pack-refs with: peeled fully-peeled sorted \n${lines.join('\n')}\n`,
    );
    // after packing: a blob by hand among the old ones, packed (not typed at this scale), and
    // one loose (typed: where a hand edit lands until guard packs refs again)
    const blob = repo.git(['hash-object', '-w', 'a.txt']).trim();
    repo.git([...noHooks, 'update-ref', 'refs/guard/checkpoints/20250101T000000Z-blob0000', blob]);
    repo.git([...noHooks, 'pack-refs', '--all', '--prune']);
    repo.git([...noHooks, 'update-ref', 'refs/guard/decisions/20250101T000001Z-blob0001', blob]);
    // a newer loose ref (HEAD: not a record)
    repo.git([...noHooks, 'update-ref', 'refs/guard/checkpoints/20270101T000000Z-00000new', head]);
    const count = (prefix: string) =>
      repo.git(['for-each-ref', '--format=%(refname)', prefix]).split('\n').filter(Boolean).length;
    // (guard's own records stand for these: journaled as guard journals its refs, holes4)
    appendFileSync(
      path.join(repo.dir, '.git', 'guard', 'journal'),
      repo.git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/guard/']),
    );

    const { code, json } = repo.guardJson(['doctor']);
    expect(
      code,
      JSON.stringify(json.checks.filter((c: Check & { ok?: boolean }) => c.ok === false)),
    ).toBe(0);
    const byId = (id: string) => (json.checks as Check[]).find((c) => c.id === id);
    expect(json.refs.checkpoints).toBe(count('refs/guard/checkpoints/'));
    expect(json.refs.decisions).toBe(count('refs/guard/decisions/'));
    expect(json.refs.other).toBe(
      count('refs/guard/') -
        count('refs/guard/checkpoints/') -
        count('refs/guard/decisions/') -
        count('refs/guard/lanes/'),
    );
    expect(byId('refs')!.message).toMatch(/the types of [\d,]+ refs/);
    const type = byId('refs-type')!.message;
    expect(type).toContain('20250101T000001Z-blob0001');
    expect(type).not.toContain('20250101T000000Z-blob0000');

    // guard log: the same entries as from git's own listing (an empty reftable folder sends it there)
    const fromStore = repo.guardJson(['log', '--limit', '30']).json;
    mkdirSync(path.join(repo.dir, '.git', 'reftable'));
    const fromGit = repo.guardJson(['log', '--limit', '30']).json;
    // (the newest name points at HEAD, not a record: skipped, and said, by both)
    expect(fromStore.skipped).toContain('refs/guard/checkpoints/20270101T000000Z-00000new');
    expect(fromStore.entries).toHaveLength(30);
    expect([fromStore.entries, fromStore.skipped]).toEqual([fromGit.entries, fromGit.skipped]);
    expect([fromStore.total, fromStore.totalAtLeast]).toEqual([fromGit.total, true]);
  }, 180_000);
});

describe('guard doctor says one thing of the hook', () => {
  it('a broken hook is one error, not an error and an "ok" beside it', async () => {
    const { chmodSync } = await import('node:fs');
    const path = (await import('node:path')).default;
    const repo = installGuard({ 'a.txt': 'a\n' });
    chmodSync(path.join(repo.dir, '.husky', '_', 'pre-commit'), 0o644);
    const { json } = repo.guardJson(['doctor']);
    const hook = (json.checks as (Check & { ok: boolean })[]).filter((c) => c.id === 'hook');
    expect(hook).toHaveLength(1);
    expect(hook[0]!.ok).toBe(false);
  });
});
