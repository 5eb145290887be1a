import { PayloadError, type Action, type HookEvent, type Translator } from './types.js';
import { anyStr, json, optStr, parseObject, type Obj } from './payload.js';

/**
 * GitHub Copilot CLI and coding agent (HARNESSES.md; tool names and their
 * argument names UNVERIFIED: `bash {command}`, `create {path, file_text}`,
 * `edit`/`str_replace {path, old_str, new_str}`, `write {path, content}`).
 * Payload `{timestamp, cwd, toolName, toolArgs}` with toolArgs a JSON
 * string; a `toolResult` marks the post-tool event. No session id is sent:
 * one stand-in session per day (documented limit).
 * Answers `{permissionDecision, permissionDecisionReason}`.
 */
function action(tool: string, args: Obj): Action {
  const pathKeys = ['path', 'file_path', 'filePath'];
  switch (tool) {
    case 'create':
    case 'write':
      return { kind: 'write', files: [{ path: anyStr(args, pathKeys, 'toolArgs'), change: { kind: 'content', content: anyStr(args, ['file_text', 'content', 'contents'], 'toolArgs') } }] };
    case 'edit':
    case 'str_replace':
    case 'str_replace_editor':
      return {
        kind: 'write',
        files: [{ path: anyStr(args, pathKeys, 'toolArgs'), change: { kind: 'edits', edits: [{ oldString: anyStr(args, ['old_str', 'old_string'], 'toolArgs'), newString: anyStr(args, ['new_str', 'new_string'], 'toolArgs'), replaceAll: false }] } }],
      };
    case 'bash':
    case 'shell':
    case 'powershell':
      return { kind: 'shell', command: anyStr(args, ['command'], 'toolArgs') };
    default:
      return { kind: 'other' };
  }
}

export const copilot: Translator = {
  translate(text) {
    const p = parseObject(text, 'Copilot');
    const tool = anyStr(p, ['toolName'], 'payload');
    let args: Obj = {};
    const raw = p.toolArgs;
    if (typeof raw === 'string') {
      try {
        const v = JSON.parse(raw) as unknown;
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) args = v as Obj;
        else throw new Error('not an object');
      } catch {
        throw new PayloadError('toolArgs is not a JSON object in a string');
      }
    } else if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) args = raw as Obj;
    else if (raw !== undefined) throw new PayloadError('toolArgs is neither a JSON string nor an object');
    const cwd = optStr(p, 'cwd');
    if (!cwd) throw new PayloadError('payload.cwd is missing');
    const ts = typeof p.timestamp === 'number' ? new Date(p.timestamp) : typeof p.timestamp === 'string' ? new Date(p.timestamp) : new Date();
    const day = Number.isNaN(ts.getTime()) ? 'unknown' : ts.toISOString().slice(0, 10);
    const post = p.toolResult !== undefined;
    const e: HookEvent = {
      harness: 'copilot',
      phase: post ? 'post' : 'pre',
      event: post ? 'postToolUse' : 'preToolUse',
      tool,
      sessionId: optStr(p, 'sessionId') ?? optStr(p, 'session_id') ?? `copilot-${day}`,
      toolCallId: optStr(p, 'toolCallId'),
      cwd,
      // nothing in the payload or env marks `copilot -p`, where an ask becomes a denial with no ref kept
      canAsk: false,
      action: action(tool, args),
    };
    return e;
  },
  answer(o, phase) {
    if (o.kind === 'none') return { stdout: json({}), stderr: '', exitCode: 0 };
    if (o.kind === 'inform' || phase === 'post') {
      const message = o.kind === 'inform' ? o.message : o.reason;
      return { stdout: json({ additionalContext: message }), stderr: message + '\n', exitCode: 0 };
    }
    return { stdout: json({ permissionDecision: o.kind === 'ask' ? 'ask' : 'deny', permissionDecisionReason: o.reason }), stderr: o.reason + '\n', exitCode: 0 };
  },
};
