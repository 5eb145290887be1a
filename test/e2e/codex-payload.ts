import type { TestRepo } from '../helpers.js';

/**
 * Codex's hook payload (HARNESSES.md) for one event of a tool call of session c1: what adv8, holes7
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
    ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
  };
}
