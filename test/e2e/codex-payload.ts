import { unlinkSync } from 'node:fs';
import path from 'node:path';
import { lines, makeRepo, type TestRepo } from '../helpers.js';

/**
 * The payloads of the harnesses with no background flag, sent through `guard hook` by adv8, holes7,
 * adv10 and adv11 (checked against the real Codex 0.169.0's and Copilot CLI 1.0.102's:
 * test/clients/background-real.test.ts). Codex's hook payload (HARNESSES.md) for one event of a
 * tool call of session c1.
 */
export function codexPayload(
  repo: TestRepo,
  event: string,
  tool: string,
  input: object,
  id: string,
) {
  return {
    session_id: 'c1',
    turn_id: 't1',
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    hook_event_name: event,
    model: 'gpt-5',
    permission_mode: 'default',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
    // seen in 0.169.0 (test/clients/background-real.test.ts): the command's output as a string
    ...(event === 'PostToolUse' ? { tool_response: '' } : {}),
  };
}

/** Copilot CLI's hook payload (HARNESSES.md) for session cp1: `post` adds the tool's result (its after event). */
export function copilotPayload(repo: TestRepo, tool: string, args: object, post = false) {
  return {
    sessionId: 'cp1',
    timestamp: Date.now(),
    cwd: repo.dir,
    toolName: tool,
    toolArgs: args,
    ...(post ? { toolResult: { resultType: 'success', textResultForLlm: '' } } : {}),
  };
}

/** `guard hook HARNESS` as its own process on `payload`: its exit, output and parsed answer. */
export function hook(repo: TestRepo, harness: string, payload: object) {
  const r = repo.guard(['hook', harness], {
    input: JSON.stringify(payload),
    env: { CLAUDE_PROJECT_DIR: repo.dir },
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

export function codex(repo: TestRepo, event: string, tool: string, input: object, id: string) {
  return hook(repo, 'codex', codexPayload(repo, event, tool, input, id));
}

export const codexWhy = (r: { json: any }): string =>
  r.json?.hookSpecificOutput?.permissionDecisionReason ?? '';

/** An apply_patch that adds a new file: a write the gate allows. */
export const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };

/** Codex runs `command` (both events), the detached process deletes keep.py, then the next call. */
export function codexRun(command: string): string {
  const repo = makeRepo({ 'keep.py': lines(300) });
  codex(repo, 'PreToolUse', 'Bash', { command }, 'b1');
  codex(repo, 'PostToolUse', 'Bash', { command }, 'b1');
  unlinkSync(path.join(repo.dir, 'keep.py'));
  return codexWhy(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'));
}
