import { PayloadError, type HookEvent } from './types.js';
import { optStr, str, type Obj } from './payload.js';
import { CLAUDE, claudeShaped, rowTranslator } from './table.js';

/**
 * Claude Code (HARNESSES.md): PreToolUse / PostToolUse, Claude-shaped
 * payload; `Write`, `Edit`, `MultiEdit`, `Bash`. Answers through
 * hookSpecificOutput.permissionDecision (exit 0). Its tools, fields and
 * events are a row of the Claude-style table (table.ts), like every harness
 * that copies its hooks.
 */
export { claudeShaped };

/**
 * The envelope Claude Code, Codex and Gemini CLI share: event, tool, session,
 * tool call and folder, with the event checked against the harness's own
 * pre and post names. Each translator adds who can answer and the action.
 */
export function claudeEnvelope(
  p: Obj,
  harness: HookEvent['harness'],
  [pre, post]: readonly [string, string],
  what: string,
): Omit<HookEvent, 'canAsk' | 'action'> {
  const event = str(p, 'hook_event_name', 'payload');
  // the failure event Claude Code sends after a command that exits non-zero is a post event too
  if (event !== pre && event !== post && event !== `${post}Failure`)
    throw new PayloadError(`${what}: hook_event_name "${event}" is neither ${pre} nor ${post}`);
  return {
    harness,
    phase: event === pre ? 'pre' : 'post',
    event,
    tool: str(p, 'tool_name', 'payload'),
    sessionId: str(p, 'session_id', 'payload'),
    toolCallId: optStr(p, 'tool_use_id'),
    cwd: str(p, 'cwd', 'payload'),
  };
}

export const claude = rowTranslator(CLAUDE);
