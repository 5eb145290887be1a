import { readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';
import { codexPayload, copilotPayload } from './codex-payload.js';

/**
 * What the real binaries showed about commands run in the background
 * (test/clients/background-real.test.ts), sent here as payloads through `guard hook`.
 *
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
    expect(why).toContain('`sleep 3; rm keep.py` (run in the background) deleted');
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

describe('copilot: a sync bash past its initial wait runs on after its post event', () => {
  // seen in the real 1.0.102: past 30 s (initial_wait) the post event comes with "<command with
  // shellId: 0 is still running after 30 seconds ...>" and the command goes on
  const still =
    "<command with shellId: 0 is still running after 30 seconds. The command is still running but hasn't produced output yet.>";
  const run = (repo: TestRepo, text: string) => {
    const bash = { command: 'sleep 36; rm keep.py', description: 'x', mode: 'sync' };
    copilot(repo, 'bash', bash);
    const post = copilotPayload(repo, 'bash', bash, true);
    post.toolResult = { resultType: 'success', textResultForLlm: text };
    repo.guard(['hook', 'copilot'], { input: JSON.stringify(post) });
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const edit = { path: path.join(repo.dir, 'small.py'), old_str: 'a', new_str: 'b' };
    return copilot(repo, 'edit', edit);
  };

  it('what it deletes after is told at the next call, and guard rewind puts it back', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'small.py': 'a\n' });
    const next = run(repo, still);
    expect(next.json?.permissionDecision).toBe('deny');
    const why: string = next.json?.permissionDecisionReason ?? '';
    expect(why).toContain('guard stopped this call to tell you first');
    expect(why).toContain('keep.py was deleted (300 lines)');
    expect(repo.guardJson(['rewind', 'cp1']).code).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'keep.py'), 'utf8')).toBe(lines(300));
  });

  it('one that completed is closed by its post event', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'small.py': 'a\n' });
    expect(run(repo, '\n<shellId: 0 completed with exit code 0>').json?.permissionDecision).toBe(
      undefined,
    );
  });
});

describe('codex: two background commands of the session open, one takes a file', () => {
  const codex = (repo: TestRepo, event: string, tool: string, input: object, id: string) => {
    const r = repo.guard(['hook', 'codex'], {
      input: JSON.stringify(codexPayload(repo, event, tool, input, id)),
    });
    return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
  };
  const bash = (repo: TestRepo, command: string, id: string) => {
    codex(repo, 'PreToolUse', 'Bash', { command }, id);
    codex(repo, 'PostToolUse', 'Bash', { command }, id);
  };

  // seen in the real Codex 0.169.0: the report came twice, once under the command that did not
  // run on (Codex ends a plain &'s process group with the call; setsid escapes)
  it('the loss is told once, under the newest command, naming the other: guard cannot tell which', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'state.py': lines(50) });
    const plain = '(sleep 3; rm state.py) > /dev/null 2>&1 &';
    const setsid = "setsid sh -c 'sleep 3; rm keep.py' > /dev/null 2>&1 &";
    bash(repo, plain, 'b1');
    bash(repo, setsid, 'b2');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };
    const r = codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1');
    const why: string = r.json?.hookSpecificOutput?.permissionDecisionReason ?? '';
    expect(r.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
    expect(why.match(/keep\.py was deleted/g), why).toHaveLength(1);
    expect(why).toContain(
      "the command `setsid sh -c 'sleep 3; rm keep.py' > /dev/null 2>&1 &` (run in the background) deleted",
    );
    expect(why).toContain(
      `Another command of this session may still run in the background (\`${plain}\`)`,
    );
    // the restore it names brings it back; the next call runs
    const restore = /to bring it back run: guard restore (\S+) -- keep\.py/.exec(why);
    expect(repo.guard(['restore', restore![1]!, '--', 'keep.py']).code).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'keep.py'), 'utf8')).toBe(lines(300));
    const again = codex(repo, 'PreToolUse', 'apply_patch', patch, 'p2');
    expect(again.json?.hookSpecificOutput?.permissionDecision).toBeUndefined();
  });
});
