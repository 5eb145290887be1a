import { parseCodexPatch } from './codex-patch.js';
import { PayloadError, type Action, type HookEvent, type Translator } from './types.js';
import { json, obj, optStr, parseObject, str, type Obj } from './payload.js';

/**
 * Cline CLI 3.x (`cline` on npm; seen in the real binary 3.0.65, whose
 * tools are defined in @cline/core). Its tools:
 *
 *   editor       {path, old_text?, new_text, insert_line?}: insert_line set:
 *                new_text inserted at that line of an existing file; the
 *                file absent: created with new_text; otherwise old_text
 *                (required) replaced by new_text, old_text found exactly once
 *                after both are put into the file's line ends
 *   apply_patch  {input}: a V4A patch, the grammar of Codex's apply_patch
 *   run_commands {commands: [...]}: each run in the shell, in order
 *   read_files, search, fetch_web, ...: nothing guard gates
 *
 * guard runs inside Cline as a plugin (.cline/plugins/guard.js, written by
 * `guard init --agent cline`; src/plugin): its beforeTool answer
 * `{skip: true, reason}` refuses that one call and the model reads the
 * reason, and afterTool's `appendContext` reaches the model. Cline's shell
 * hooks do not fit a gate (a `cancel` aborts the whole run, its reason
 * shown nowhere; a failing hook lets the tool run): `guard hook cline`
 * still reads their payload (hookName tool_call / tool_result) so that a
 * hook left from an older guard does not refuse every read, but guard no
 * longer installs it.
 */
export function clineAction(tool: string, input: Obj, eol: '\n' | '\r\n' = '\n'): Action {
  switch (tool) {
    case 'editor': {
      const p = str(input, 'path', 'input');
      const next = str(input, 'new_text', 'input');
      const line = input.insert_line;
      if (line !== undefined && line !== null) {
        if (typeof line !== 'number' || !Number.isInteger(line))
          throw new PayloadError('input.insert_line is not a whole number');
        return {
          kind: 'write',
          files: [{ path: p, change: { kind: 'insert', line, text: next } }],
        };
      }
      const old = input.old_text;
      // no old_text: Cline creates the file, or fails the call when it exists (an empty old string does the same in applyStringEdits)
      if (old === undefined || old === null)
        return {
          kind: 'write',
          files: [
            {
              path: p,
              change: {
                kind: 'edits',
                edits: [{ oldString: '', newString: next, replaceAll: false }],
              },
            },
          ],
        };
      if (typeof old !== 'string') throw new PayloadError('input.old_text is not a string');
      // Cline puts both texts into the file's own line ends before it looks (CRLF files: eol), so must guard:
      // an old_text sent with CRLF over an LF file still matches there
      const ends = (t: string) => t.split(/\r\n|\n/).join(eol);
      return {
        kind: 'write',
        files: [
          {
            path: p,
            change: {
              kind: 'edits',
              edits: [{ oldString: ends(old), newString: ends(next), replaceAll: false }],
            },
          },
        ],
      };
    }
    case 'apply_patch':
      return { kind: 'write', files: parseCodexPatch(str(input, 'input', 'input')) };
    case 'run_commands': {
      const c = input.commands;
      const list =
        typeof c === 'string'
          ? [c]
          : Array.isArray(c) && c.every((x) => typeof x === 'string')
            ? (c as string[])
            : null;
      if (!list) throw new PayloadError('input.commands is not a list of strings');
      // one checkpoint before all of them, one report after: they run one after another in the same call
      return { kind: 'shell', command: list.join('\n') };
    }
    default:
      return { kind: 'other' };
  }
}

export const cline: Translator = {
  translate(text) {
    const p = parseObject(text, 'Cline');
    const event = str(p, 'hookName', 'payload');
    const phase = event === 'tool_call' ? 'pre' : event === 'tool_result' ? 'post' : null;
    if (!phase)
      throw new PayloadError(`Cline: hookName "${event}" is neither tool_call nor tool_result`);
    const call = obj(p, phase === 'pre' ? 'tool_call' : 'tool_result', 'payload');
    const roots = Array.isArray(p.workspaceRoots)
      ? p.workspaceRoots.filter((r): r is string => typeof r === 'string')
      : [];
    if (!roots[0]) throw new PayloadError('Cline payload has no workspaceRoots');
    const tool = str(call, 'name', 'tool_call');
    const input =
      typeof call.input === 'object' && call.input !== null && !Array.isArray(call.input)
        ? (call.input as Obj)
        : {};
    const e: HookEvent = {
      harness: 'cline',
      phase,
      event,
      tool,
      sessionId: str(p, 'taskId', 'payload'),
      toolCallId: optStr(call, 'id'),
      cwd: roots[0],
      canAsk: false,
      action: clineAction(tool, input),
    };
    return e;
  },
  answer(o, phase) {
    if (o.kind === 'none') return { stdout: json({ cancel: false }), stderr: '', exitCode: 0 };
    if (o.kind === 'inform' || phase === 'post') {
      const message = o.kind === 'inform' ? o.message : o.reason;
      return {
        stdout: json({ cancel: false, contextModification: message }),
        stderr: message + '\n',
        exitCode: 0,
      };
    }
    // (aborts Cline's whole run: the plugin is the route that refuses one call)
    return {
      stdout: json({ cancel: true, errorMessage: o.reason, contextModification: o.reason }),
      stderr: o.reason + '\n',
      exitCode: 0,
    };
  },
};
