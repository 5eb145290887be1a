import { PayloadError, type Action, type Translator } from './types.js';
import { bool, json, obj, parseObject, str, type Obj } from './payload.js';
import { claudeEnvelope } from './claude.js';

/**
 * Gemini CLI (HARNESSES.md): BeforeTool / AfterTool; `write_file`,
 * `replace`, `run_shell_command`. Answers `{decision, reason}`.
 *
 * canAsk is false: the payload does not say whether Gemini runs headless or
 * in yolo mode (where an `ask` could be approved by nobody), so what needs a
 * person is denied with the reason, never put to an unknown prompt.
 */
function action(tool: string, input: Obj): Action {
  switch (tool) {
    case 'write_file':
      return {
        kind: 'write',
        files: [
          {
            path: str(input, 'file_path', 'tool_input'),
            change: { kind: 'content', content: str(input, 'content', 'tool_input') },
          },
        ],
      };
    case 'replace':
      return {
        kind: 'write',
        files: [
          {
            path: str(input, 'file_path', 'tool_input'),
            change: {
              kind: 'edits',
              edits: [
                {
                  oldString: str(input, 'old_string', 'tool_input'),
                  newString: str(input, 'new_string', 'tool_input'),
                  replaceAll:
                    bool(input, 'allow_multiple') || bool(input, 'expected_replacements_all'),
                },
              ],
            },
          },
        ],
      };
    case 'run_shell_command':
      return {
        kind: 'shell',
        command: str(input, 'command', 'tool_input'),
        ...(bool(input, 'is_background') ? { background: true } : {}),
      };
    default:
      return { kind: 'other' };
  }
}

export const gemini: Translator = {
  translate(text) {
    const p = parseObject(text, 'Gemini CLI');
    const base = claudeEnvelope(p, 'gemini', ['BeforeTool', 'AfterTool'], 'Gemini CLI');
    // Gemini's payload names no tool call
    return {
      ...base,
      toolCallId: null,
      canAsk: false,
      action: action(base.tool, obj(p, 'tool_input', 'payload')),
    };
  },
  answer(o, phase) {
    if (o.kind === 'none') return { stdout: '', stderr: '', exitCode: 0 };
    if (o.kind === 'inform' || phase === 'post') {
      const message = o.kind === 'inform' ? o.message : o.reason;
      return {
        stdout: json({
          systemMessage: message,
          hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: message },
        }),
        stderr: message + '\n',
        exitCode: 0,
      };
    }
    if (!o.reason) throw new PayloadError('a deny needs a reason');
    return {
      stdout: json({ decision: o.kind === 'ask' ? 'ask' : 'deny', reason: o.reason }),
      stderr: o.reason + '\n',
      exitCode: 0,
    };
  },
};
