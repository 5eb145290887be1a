import type { TestRepo } from '../helpers.js';

/**
 * The payloads of the harnesses with no background flag, sent through `guard hook` by adv8, holes7
 * and adv10 (checked against the real Codex 0.169.0 and Copilot CLI 1.0.102's, test/clients/background-real). Codex's hook payload (HARNESSES.md) for one event of a tool call of session c1: what adv8, holes7
 * and adv10 send through `guard hook codex`. Codex's payload has no background flag.
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
