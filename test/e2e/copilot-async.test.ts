import { readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';
import { copilotPayload } from './codex-payload.js';

/**
 * Copilot CLI's own background flag (found with the real 1.0.102, test/clients/background-real.test.ts):
 * `bash` with `mode: "async"` starts the command and returns at once ("<command started in background
 * with shellId: 0>"), so its after event comes while it runs, as Claude's run_in_background. guard read
 * only `&` (src/flows/hook/detached.ts) there: what such a command destroyed after its after event was
 * told nowhere. Payloads as the real binary sends them (fixtures/harness-samples/copilot-bash-async-*).
 */
afterAll(cleanupRepos);

const copilot = (repo: TestRepo, tool: string, args: object, post = false) => {
  const r = repo.guard(['hook', 'copilot'], {
    input: JSON.stringify(copilotPayload(repo, tool, args, post)),
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
};

/** The command runs, its after event comes at once, then (while it runs on) it deletes keep.py. */
function asyncThenDelete(repo: TestRepo, mode: 'async' | 'sync') {
  const bash = { command: 'sleep 3; rm keep.py', description: 'Scripted command', mode };
  expect(copilot(repo, 'bash', bash).json?.permissionDecision).toBeUndefined();
  copilot(repo, 'bash', bash, true);
  unlinkSync(path.join(repo.dir, 'keep.py'));
  const edit = { path: path.join(repo.dir, 'small.py'), old_str: 'a', new_str: 'b' };
  return { edit, next: copilot(repo, 'edit', edit) };
}

describe('copilot: bash with mode "async" is a background call', () => {
  it('the next call is refused once to tell what it deleted, and the restore it names brings the file back', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'small.py': 'a\n' });
    const { edit, next } = asyncThenDelete(repo, 'async');
    expect(next.json?.permissionDecision).toBe('deny');
    const why: string = next.json?.permissionDecisionReason ?? '';
    expect(why).toContain('guard stopped this call to tell you first');
    expect(why).toContain('`sleep 3; rm keep.py (run in the background)`');
    expect(why).toContain('keep.py was deleted (300 lines)');
    // told once: the same edit sent again runs
    expect(copilot(repo, 'edit', edit).json?.permissionDecision).toBeUndefined();
    const restore = /to bring it back run: guard restore (\S+) -- keep\.py/.exec(why);
    expect(restore, why).not.toBeNull();
    expect(repo.guard(['restore', restore![1]!, '--', 'keep.py']).code).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'keep.py'), 'utf8')).toBe(lines(300));
  });

  it('mode "sync" (no &) is not: its after event closed it, and the next call runs', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'small.py': 'a\n' });
    expect(asyncThenDelete(repo, 'sync').next.json?.permissionDecision).toBeUndefined();
  });
});
