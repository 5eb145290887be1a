import { PayloadError, type Action, type HookEvent, type Translator } from './types.js';
import { anyStr, bool, json, optStr, parseObject, type Obj } from './payload.js';

/**
 * Cursor (HARNESSES.md; field names of tool_input are UNVERIFIED: taken from
 * Cursor's hook docs and the community `cursor-hooks` types, several
 * spellings accepted). Events: `preToolUse` / `postToolUse` with tool_name
 * `Write`, `StrReplace`/`Edit`, `Shell`; older builds'
 * `beforeShellExecution {command, cwd}` and `afterShellExecution`.
 * Answers `{permission, user_message, agent_message}`.
 */
const PRE = new Set(['preToolUse', 'beforeShellExecution']);
// postToolUseFailure: seen in another project's Cursor fixtures (unverified here): a failed tool is still an after-event
const POST = new Set(['postToolUse', 'postToolUseFailure', 'afterShellExecution', 'afterFileEdit']);

function action(tool: string, input: Obj): Action {
  const pathKeys = ['file_path', 'path', 'target_file', 'filePath'];
  switch (tool) {
    case 'Write':
    case 'write':
      return {
        kind: 'write',
        files: [
          {
            path: anyStr(input, pathKeys, 'tool_input'),
            change: {
              kind: 'content',
              content: anyStr(input, ['contents', 'content', 'file_text'], 'tool_input'),
            },
          },
        ],
      };
    case 'StrReplace':
    case 'Edit':
    case 'search_replace':
      return {
        kind: 'write',
        files: [
          {
            path: anyStr(input, pathKeys, 'tool_input'),
            change: {
              kind: 'edits',
              edits: [
                {
                  oldString: anyStr(input, ['old_string', 'old_str'], 'tool_input'),
                  newString: anyStr(input, ['new_string', 'new_str'], 'tool_input'),
                  replaceAll: bool(input, 'replace_all'),
                },
              ],
            },
          },
        ],
      };
    case 'Delete':
    case 'delete_file':
      return {
        kind: 'write',
        files: [{ path: anyStr(input, pathKeys, 'tool_input'), change: { kind: 'delete' } }],
      };
    case 'Shell':
    case 'run_terminal_cmd':
      return { kind: 'shell', command: anyStr(input, ['command'], 'tool_input') };
    default:
      return { kind: 'other' };
  }
}

export const cursor: Translator = {
  translate(text) {
    const p = parseObject(text, 'Cursor');
    const event =
      optStr(p, 'hook_event_name') ??
      (typeof p.tool_name === 'string'
        ? 'preToolUse'
        : typeof p.command === 'string'
          ? 'beforeShellExecution'
          : '');
    const phase = PRE.has(event) ? 'pre' : POST.has(event) ? 'post' : null;
    if (!phase)
      throw new PayloadError(
        `Cursor: hook_event_name "${event}" is not a tool event guard handles`,
      );
    const roots = Array.isArray(p.workspace_roots)
      ? p.workspace_roots.filter((r): r is string => typeof r === 'string')
      : [];
    const cwd = optStr(p, 'cwd') ?? roots[0];
    if (!cwd) throw new PayloadError('Cursor payload has neither cwd nor workspace_roots');
    const shellEvent = event === 'beforeShellExecution' || event === 'afterShellExecution';
    const tool = shellEvent ? 'Shell' : (optStr(p, 'tool_name') ?? '');
    const input =
      typeof p.tool_input === 'object' && p.tool_input !== null ? (p.tool_input as Obj) : {};
    const e: HookEvent = {
      harness: 'cursor',
      phase,
      event,
      tool,
      sessionId: optStr(p, 'conversation_id') ?? optStr(p, 'session_id') ?? 'cursor',
      toolCallId: optStr(p, 'tool_use_id') ?? optStr(p, 'generation_id'),
      cwd,
      // nothing marks the headless cursor-agent -p: what needs a person is denied, the proposal kept
      canAsk: false,
      action: shellEvent
        ? { kind: 'shell', command: anyStr(p, ['command'], 'payload') }
        : event === 'afterFileEdit'
          ? { kind: 'other' }
          : action(tool, input),
    };
    return e;
  },
  answer(o, phase) {
    if (o.kind === 'none') return { stdout: json({}), stderr: '', exitCode: 0 };
    if (o.kind === 'inform' || phase === 'post') {
      const message = o.kind === 'inform' ? o.message : o.reason;
      return {
        stdout: json({
          user_message: message,
          agent_message: message,
          additional_context: message,
        }),
        stderr: message + '\n',
        exitCode: 0,
      };
    }
    return {
      stdout: json({
        permission: o.kind === 'ask' ? 'ask' : 'deny',
        user_message: o.reason,
        agent_message: o.reason,
      }),
      stderr: o.reason + '\n',
      exitCode: 0,
    };
  },
};
