/**
 * Issue 20, the gaps left open last round and the newest doors, each attack
 * performed through `guard hook claude` with Claude Code's payload shapes and
 * through plain git, in real temporary repositories (the built CLI).
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

function payload(repo: TestRepo, tool: string, input: object, id: string, post = false): string {
  return JSON.stringify({
    session_id: 'holes-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: 'bypassPermissions',
    hook_event_name: post ? 'PostToolUse' : 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
    ...(post ? { tool_response: {} } : {}),
  });
}

function hook(repo: TestRepo, tool: string, input: object, id: string, post = false) {
  const r = repo.guard(['hook', 'claude'], { input: payload(repo, tool, input, id, post) });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

/** A shell command run between its two hook calls, as Claude Code runs it. */
function shell(repo: TestRepo, command: string, id: string, run: () => void) {
  const pre = hook(repo, 'Bash', { command }, id);
  run();
  return { pre, post: hook(repo, 'Bash', { command }, id, true) };
}

describe('refs/guard/* moved (not deleted) through the shell', () => {
  it('a checkpoint ref pointed at another commit: the hook refuses, doctor fails, guard recover points it back', () => {
    const repo = makeRepo({ 'app.py': lines(120) });
    shell(repo, 'ls', 's1', () => undefined);
    const refs = repo.git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/guard/checkpoints/']).trim().split('\n');
    expect(refs.length).toBeGreaterThan(0);
    const [ref, oid] = refs[0]!.split(' ') as [string, string];
    // an agent forges a checkpoint holding a 1-line app.py and moves guard's ref to it
    const forged = repo.git(['commit-tree', '-m', 'forged', repo.git(['mktree'], { input: `100644 blob ${repo.git(['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim()}\tapp.py\n` }).trim()]).trim();
    repo.git(['update-ref', ref, forged]);

    const pre = hook(repo, 'Write', { file_path: path.join(repo.dir, 'app.py'), content: 'y\n' }, 'w1');
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(/moved to another commit outside guard/);
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toContain(ref);
    const doctor = repo.guardJson(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.json.checks).toContainEqual(expect.objectContaining({ id: 'integrity:refs', ok: false }));

    const rec = repo.guardJson(['recover']);
    expect(rec.code).toBe(0);
    expect(rec.json.restored).toContainEqual({ ref, oid });
    expect(repo.git(['rev-parse', ref]).trim()).toBe(oid);
    expect(repo.guardJson(['doctor']).json.checks.some((c: any) => c.id === 'integrity:refs')).toBe(false);
  });

  it('the same ref packed by git gc, then moved: still noticed', () => {
    const repo = makeRepo({ 'app.py': lines(120) });
    shell(repo, 'ls', 's1', () => undefined);
    repo.git(['pack-refs', '--all']);
    const [ref] = repo.git(['for-each-ref', '--format=%(refname)', 'refs/guard/checkpoints/']).trim().split('\n') as [string];
    repo.git(['update-ref', ref, 'HEAD']);
    repo.git(['pack-refs', '--all']);
    const pre = hook(repo, 'Bash', { command: 'ls' }, 's2');
    expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(/moved to another commit/);
  });
});
