import { parseSearchReplace } from './edits.js';
import { PayloadError, type Action, type HookEvent, type Translator } from './types.js';
import { anyStr, json, obj, optStr, parseObject, str, type Obj } from './payload.js';

/**
 * Cline (HARNESSES.md; parameter names from Cline's hooks README and
 * cline/cline's tool definitions, UNVERIFIED against a running Cline):
 * an executable `PreToolUse` / `PostToolUse` in .clinerules/hooks/, payload
 * `{hookName, taskId, workspaceRoots, preToolUse: {toolName, parameters}}`.
 * Answers `{cancel, errorMessage, contextModification}`; no `ask`.
 */
function action(tool: string, params: Obj): Action {
  switch (tool) {
    case 'write_to_file':
      return { kind: 'write', files: [{ path: anyStr(params, ['path', 'absolutePath'], 'parameters'), change: { kind: 'content', content: str(params, 'content', 'parameters') } }] };
    case 'replace_in_file': {
      const blocks = parseSearchReplace(str(params, 'diff', 'parameters'));
      if (!blocks) throw new PayloadError('parameters.diff holds no complete SEARCH/REPLACE block');
      return { kind: 'write', files: [{ path: anyStr(params, ['path', 'absolutePath'], 'parameters'), change: { kind: 'blocks', blocks } }] };
    }
    case 'execute_command':
      return { kind: 'shell', command: str(params, 'command', 'parameters') };
    default:
      return { kind: 'other' };
  }
}

export const cline: Translator = {
  translate(text) {
    const p = parseObject(text, 'Cline');
    const event = str(p, 'hookName', 'payload');
    const phase = event === 'PreToolUse' ? 'pre' : event === 'PostToolUse' ? 'post' : null;
    if (!phase) throw new PayloadError(`Cline: hookName "${event}" is neither PreToolUse nor PostToolUse`);
    const body = obj(p, phase === 'pre' ? 'preToolUse' : 'postToolUse', 'payload');
    const roots = Array.isArray(p.workspaceRoots) ? p.workspaceRoots.filter((r): r is string => typeof r === 'string') : [];
    if (!roots[0]) throw new PayloadError('Cline payload has no workspaceRoots');
    const tool = str(body, 'toolName', phase === 'pre' ? 'preToolUse' : 'postToolUse');
    const params = typeof body.parameters === 'object' && body.parameters !== null ? (body.parameters as Obj) : {};
    const e: HookEvent = {
      harness: 'cline',
      phase,
      event,
      tool,
      sessionId: str(p, 'taskId', 'payload'),
      toolCallId: optStr(p, 'toolUseId'),
      cwd: roots[0],
      canAsk: false,
      action: action(tool, params),
    };
    return e;
  },
  answer(o, phase) {
    if (o.kind === 'none') return { stdout: json({ cancel: false }), stderr: '', exitCode: 0 };
    if (o.kind === 'inform' || phase === 'post') {
      const message = o.kind === 'inform' ? o.message : o.reason;
      return { stdout: json({ cancel: false, contextModification: message }), stderr: message + '\n', exitCode: 0 };
    }
    return { stdout: json({ cancel: true, errorMessage: o.reason, contextModification: o.reason }), stderr: o.reason + '\n', exitCode: 0 };
  },
};
