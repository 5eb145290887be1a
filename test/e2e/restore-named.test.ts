/**
 * Restore, the printed undo commands and discard's report, attacked as
 * issue 20 found them: a named path nobody has, names with spaces, and
 * husky's generated files burying a real ignored `.env`.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupRepos, installGuard, lanePath, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

describe('guard restore CP -- PATH', () => {
  it('a path neither the checkpoint nor the work tree has: one line naming it, a hint, exit 2, nothing written', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('a.txt', 'changed\n');
    const w = repo.guardJson(['write', 'a.txt'], { input: 'again\n' });
    expect(w.code).toBe(0);
    const cp = w.json.checkpoint as string;
    const refs = repo.refs();
    const r = repo.guard(['restore', cp, '--', 'no/such/path']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `guard: checkpoint ${cp} has no no/such/path, and neither has the work tree\nhint: git ls-tree -r --name-only ${repo.git(['rev-parse', `refs/guard/checkpoints/${cp}`]).trim()} lists what it holds\n`,
    );
    expect(r.stdout).toBe('');
    expect(repo.refs()).toEqual(refs); // not even an undo checkpoint
    expect(repo.read('a.txt')).toBe('again\n');
    const j = repo.guard(['restore', cp, '--json', '--', 'no/such/path']); // guardJson puts --json after the paths
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'E_USAGE' } });
  });

  it("a hook call's checkpoint (held by its session chain, no ref of its own): the hint's command works", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['hook', 'claude'], {
      input: JSON.stringify({
        session_id: 's',
        transcript_path: '/tmp/t.jsonl',
        cwd: repo.dir,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' },
        tool_use_id: 't1',
      }),
      env: { CI: undefined },
    });
    expect(r.code).toBe(0);
    expect(repo.refs('refs/guard/checkpoints/')).toEqual([]);
    const logged = JSON.parse(repo.guard(['log', '--json']).stdout);
    const id = logged.entries.find((e: { kind: string }) => e.kind === 'checkpoint').id;
    const x = repo.guard(['restore', id, '--', 'no/such/path']);
    expect(x.code).toBe(2);
    const hint = /hint: (git ls-tree .*) lists what it holds/.exec(x.stderr)![1]!;
    const listed = spawnSync('sh', ['-c', hint], { cwd: repo.dir, encoding: 'utf8' });
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain('a.txt');
  });

  it('a path only the work tree has (new since the checkpoint) is still restored: removed', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const w = repo.guardJson(['write', 'a.txt'], { input: 'b\n' });
    // a whole-tree checkpoint without new.txt: the undo checkpoint of a restore
    const u = JSON.parse(
      repo.guard(['restore', w.json.checkpoint, '--json', '--', 'a.txt']).stdout,
    );
    repo.write('new.txt', 'new\n');
    const r = repo.guard(['restore', u.undo, '--', 'new.txt']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('removed    new.txt');
  });
});

describe('printed undo commands', () => {
  it("guard write's undo quotes a name with spaces, and pasting it into a shell restores that file", () => {
    const repo = makeRepo({ 'my notes.txt': lines(5) });
    const r = repo.guard(['write', 'my notes.txt'], { input: lines(6) });
    expect(r.code).toBe(0);
    const undo = /undo: (guard restore .*)$/m.exec(r.stdout)?.[1];
    expect(undo).toMatch(/^guard restore \S+ -- 'my notes\.txt'$/);
    const cli = path.join(
      path.dirname(new URL(import.meta.url).pathname),
      '..',
      '..',
      'dist',
      'cli',
      'main.js',
    );
    const sh = spawnSync(
      'sh',
      ['-c', undo!.replace(/^guard /, `"${process.execPath}" "${cli}" `)],
      { cwd: repo.dir, env: cleanEnv({ CI: 'true' }) },
    );
    expect(sh.stderr.toString()).toBe('');
    expect(repo.read('my notes.txt')).toBe(lines(5));
  });
});

describe('guard discard', () => {
  it("names a real ignored .env first and leaves out husky's generated .husky/_/", () => {
    const repo = installGuard({ 'a.txt': 'a\n' });
    repo.write('.gitignore', 'node_modules/\n.env\n');
    repo.commitAll('ignore .env');
    expect(repo.guard(['start', 'agent']).code).toBe(0);
    const lane = lanePath(repo, 'agent');
    writeFileSync(path.join(lane, '.env'), 'SECRET=1\n');
    const r = repo.guard(['discard', 'agent']);
    expect(r.code).toBe(0);
    const line = (r.stdout + r.stderr).split('\n').find((l) => l.startsWith('not kept'));
    expect(line).toBe('not kept (ignored by git, never in a checkpoint): .env');
  });
});
