/** What provenance.test and provenance-adversary.test share: a big file's text and a Claude Code hook call. */
import { expect } from 'vitest';
import type { TestRepo } from '../helpers.js';

export const big = (word: string) =>
  Array.from({ length: 150 }, (_, i) => `${word} line ${i + 1}`).join('\n') + '\n';

/** A Claude Code hook call, as the interactive CLI sends it (a person can answer an ask). */
export function claudeCall(
  repo: TestRepo,
  event: 'PreToolUse' | 'PostToolUse',
  tool: string,
  input: object,
  id: string,
  session: string,
  env: Record<string, string> = {},
) {
  const payload = JSON.stringify({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: 'default',
    hook_event_name: event,
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
    ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
  });
  const r = repo.guard(['hook', 'claude'], {
    input: payload,
    env: { CI: undefined, GUARD_AUTO: undefined, CLAUDE_CODE_ENTRYPOINT: 'cli', ...env },
  });
  expect(r.code, r.stderr).toBe(0);
  return r;
}
