/**
 * guard doctor past DOCTOR_READS records: it counts and type-checks every
 * ref under refs/guard/, but reads the messages of the newest records only
 * (reading 100,000 made it 7x slower than without them: docs/performance.md).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
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
