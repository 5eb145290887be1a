import { PayloadError, type Action, type Answer, type HookEvent, type Outcome, type Phase, type Translator } from './types.js';
import { bool, json, obj, optStr, parseObject, str, type Obj } from './payload.js';

/**
 * Claude Code (HARNESSES.md): PreToolUse / PostToolUse, Claude-shaped
 * payload; `Write`, `Edit`, `MultiEdit`, `Bash`. Answers through
 * hookSpecificOutput.permissionDecision (exit 0).
 */

/** Modes in which Claude Code asks nobody: a hook's `ask` would not reach a person. */
const NO_PERSON = new Set(['bypassPermissions', 'dontAsk']);

/** CLAUDE_CODE_ENTRYPOINT values with a person at the prompt (2.1.330: `cli` is the terminal UI, `sdk-cli` is -p). */
const PERSON_ENTRYPOINTS = new Set(['cli', 'claude-vscode', 'claude-desktop']);

export function claudeAction(tool: string, input: Obj, where: string): Action {
  switch (tool) {
    case 'Write':
      return { kind: 'write', files: [{ path: str(input, 'file_path', where), change: { kind: 'content', content: str(input, 'content', where) } }] };
    case 'Edit':
      return {
        kind: 'write',
        files: [
          {
            path: str(input, 'file_path', where),
            change: { kind: 'edits', edits: [{ oldString: str(input, 'old_string', where), newString: str(input, 'new_string', where), replaceAll: bool(input, 'replace_all') }] },
          },
        ],
      };
    case 'MultiEdit': {
      const edits = input.edits;
      if (!Array.isArray(edits) || edits.length === 0) throw new PayloadError(`${where}.edits is not a list of edits`);
      return {
        kind: 'write',
        files: [
          {
            path: str(input, 'file_path', where),
            change: {
              kind: 'edits',
              edits: edits.map((e, i) => {
                if (typeof e !== 'object' || e === null) throw new PayloadError(`${where}.edits[${i}] is not an object`);
                const o = e as Obj;
                return { oldString: str(o, 'old_string', `${where}.edits[${i}]`), newString: str(o, 'new_string', `${where}.edits[${i}]`), replaceAll: bool(o, 'replace_all') };
              }),
            },
          },
        ],
      };
    }
    case 'Bash':
      return { kind: 'shell', command: str(input, 'command', where), ...(bool(input, 'run_in_background') ? { background: true } : {}) };
    default:
      return { kind: 'other' };
  }
}

/**
 * The envelope Claude Code, Codex and Gemini CLI share: event, tool, session,
 * tool call and folder, with the event checked against the harness's own
 * pre and post names. Each translator adds who can answer and the action.
 */
export function claudeEnvelope(p: Obj, harness: HookEvent['harness'], [pre, post]: readonly [string, string], what: string): Omit<HookEvent, 'canAsk' | 'action'> {
  const event = str(p, 'hook_event_name', 'payload');
  // Claude Code sends PostToolUseFailure instead of PostToolUse after a command that exits non-zero
  if (event !== pre && event !== post && event !== `${post}Failure`) throw new PayloadError(`${what}: hook_event_name "${event}" is neither ${pre} nor ${post}`);
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

export const claude: Translator = {
  translate(text, env) {
    const p = parseObject(text, 'Claude Code');
    const base = claudeEnvelope(p, 'claude', ['PreToolUse', 'PostToolUse'], 'Claude Code');
    const mode = optStr(p, 'permission_mode') ?? 'default';
    // A person is at a prompt only in the interactive entry points; `claude -p` is "sdk-cli", and an
    // entry point guard does not know (or none) counts as nobody: the call is denied, the proposal kept.
    const person = PERSON_ENTRYPOINTS.has(env.CLAUDE_CODE_ENTRYPOINT ?? '');
    return { ...base, canAsk: !NO_PERSON.has(mode) && person, action: claudeAction(base.tool, obj(p, 'tool_input', 'payload'), 'tool_input') };
  },
  // the answer names the event it answers (Claude rejects another name): PostToolUse or PostToolUseFailure
  answer: (o, phase, event) => claudeShaped(o, phase, 'PreToolUse', phase === 'post' && event ? event : 'PostToolUse', true),
};

/**
 * Claude's answer shape, shared by Codex (which copies it): a decision in
 * hookSpecificOutput before the tool, additionalContext (to the model) and
 * systemMessage (to the person) after it.
 */
export function claudeShaped(o: Outcome, phase: Phase, pre: string, post: string, canAsk: boolean): Answer {
  if (o.kind === 'none') return { stdout: '', stderr: '', exitCode: 0 };
  if (o.kind === 'inform' || phase === 'post') {
    const message = o.kind === 'inform' ? o.message : o.reason;
    return {
      stdout: json({ systemMessage: message, hookSpecificOutput: { hookEventName: post, additionalContext: message } }),
      stderr: message + '\n',
      exitCode: 0,
    };
  }
  const decision = o.kind === 'ask' && canAsk ? 'ask' : 'deny';
  return {
    stdout: json({ hookSpecificOutput: { hookEventName: pre, permissionDecision: decision, permissionDecisionReason: o.reason } }),
    stderr: o.reason + '\n',
    exitCode: 0,
  };
}
