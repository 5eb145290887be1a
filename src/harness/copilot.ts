import { parseCodexPatch } from './codex-patch.js';
import { PayloadError, type Action, type HookEvent, type Translator } from './types.js';
import { bool, json, optStr, parseObject, type Obj } from './payload.js';

/**
 * GitHub Copilot CLI (`@github/copilot`; payloads seen in the real binary
 * 1.0.102, HARNESSES.md): `.github/hooks/*.json` preToolUse / postToolUse,
 * payload `{sessionId, timestamp, cwd, toolName, toolArgs}` with toolArgs an
 * object (`create {path, file_text}`, `edit {path, old_str, new_str}`,
 * `bash {command, description, mode?, detach?}`: `mode: "async"` runs it in the background,
 * as Claude's run_in_background), except `apply_patch` (GPT-5 models' only
 * edit tool), where toolArgs is the raw V4A patch text (codex-patch.ts). A
 * `toolResult` marks the post-tool event. With PascalCase events in the
 * config (`PreToolUse`) Copilot sends a snake_case copy (`hook_event_name`,
 * `session_id`, `tool_name` `Write`/`Edit`/`Bash`, `tool_input`,
 * `tool_result`): read too. Older builds sent toolArgs as a JSON string.
 *
 * canAsk is false: nothing in the payload or the hook's environment marks
 * `copilot -p`, where Copilot turns an `ask` into a denial addressed to a
 * person ("unable to ask user for confirmation") and guard would keep no
 * rejected ref; a deny keeps the ref and tells the model what to do instead.
 * Answers `{permissionDecision, permissionDecisionReason}`; after the tool,
 * `additionalContext` reaches the model.
 */
const PATH = ['path', 'file_path', 'filePath'];

/** The one value of a field with several spellings; two that differ are refused (the model writes toolArgs). */
function anyStr(o: Obj, keys: readonly string[], where: string): string {
  const found = keys.filter((k) => o[k] !== undefined);
  if (found.length > 1 && new Set(found.map((k) => o[k])).size > 1)
    throw new PayloadError(
      `${where} has both ${found.join(' and ')} with different values: guard cannot tell which one Copilot uses`,
    );
  for (const k of keys) if (typeof o[k] === 'string') return o[k] as string;
  throw new PayloadError(`${where} has none of ${keys.join(', ')} as a string`);
}

/**
 * What Copilot tells the model when a sync `bash` runs past its initial wait (30 s by default; seen in
 * 1.0.102): the post event comes then, and the command runs on, as a background one. Seen alone (no
 * output yet); with output, 1.0.102 "returns partial output and continues running" (its own words),
 * in an order not seen: so the notice is read at the text's start, or on a line of its own in a text
 * that does not end as a finished command's does (its output, then `<shellId: N completed ...>`),
 * where such a line is the command's own output (adv12). A finished command whose output opens with
 * the notice is still read as running on: a cost (its call kept open), never a loss untold.
 */
const STILL_RUNNING = /^\s*<command with shellId: [^\s>]+ is still running after/;
const STILL_RUNNING_LINE = /\n\s*<command with shellId: [^\s>]+ is still running after/;
const COMPLETED = /\n?<shellId: [^\s>]+ completed with exit code -?\d+>\s*$/;

function action(tool: string, args: Obj | string, result: unknown): Action {
  if (typeof args === 'string') {
    // apply_patch's input is the patch itself; any other tool's a JSON object in a string (older builds)
    if (tool === 'apply_patch' || /^\s*\*\*\* Begin Patch/.test(args))
      return { kind: 'write', files: parseCodexPatch(args) };
    throw new PayloadError(`toolArgs of ${tool} is text, not an object`);
  }
  switch (tool) {
    case 'create':
    case 'write':
    case 'Write':
    case 'Create':
      return {
        kind: 'write',
        files: [
          {
            path: anyStr(args, PATH, 'toolArgs'),
            change: {
              kind: 'content',
              content: anyStr(args, ['file_text', 'content', 'contents'], 'toolArgs'),
            },
          },
        ],
      };
    case 'edit':
    case 'Edit':
    case 'str_replace':
    case 'str_replace_editor':
      return {
        kind: 'write',
        files: [
          {
            path: anyStr(args, PATH, 'toolArgs'),
            change: {
              kind: 'edits',
              edits: [
                {
                  oldString: anyStr(args, ['old_str', 'old_string'], 'toolArgs'),
                  newString: anyStr(args, ['new_str', 'new_string'], 'toolArgs'),
                  replaceAll: false,
                },
              ],
            },
          },
        ],
      };
    case 'apply_patch':
      return {
        kind: 'write',
        files: parseCodexPatch(anyStr(args, ['input', 'patch', 'command'], 'toolArgs')),
      };
    case 'bash':
    case 'Bash':
    case 'shell':
    case 'powershell':
      return {
        kind: 'shell',
        command: anyStr(args, ['command'], 'toolArgs'),
        // `mode: "async"` (and `detach`) runs it in the background: its post event comes at once
        ...(args.mode === 'async' || bool(args, 'detach') ? { background: true } : {}),
        ...(stillRunning(result) ? { stillRunning: true } : {}),
      };
    default:
      return { kind: 'other' };
  }
}

/** Whether the tool's result says the command runs on (a post event's `toolResult` or `tool_result`). */
function stillRunning(result: unknown): boolean {
  if (typeof result !== 'object' || result === null) return false;
  const text = (result as Obj).textResultForLlm ?? (result as Obj).text_result_for_llm;
  if (typeof text !== 'string') return false;
  return STILL_RUNNING.test(text) || (STILL_RUNNING_LINE.test(text) && !COMPLETED.test(text));
}

/** toolArgs as it came: an object, the raw patch text, or (older builds) a JSON object in a string. */
function argsOf(raw: unknown, tool: string): Obj | string {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) return raw as Obj;
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'string') throw new PayloadError('toolArgs is neither an object nor text');
  if (tool === 'apply_patch' || /^\s*\*\*\* Begin Patch/.test(raw)) return raw;
  try {
    const v = JSON.parse(raw) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Obj;
  } catch {
    /* below */
  }
  throw new PayloadError(`toolArgs of ${tool} is text, not an object`);
}

export const copilot: Translator = {
  translate(text) {
    const p = parseObject(text, 'Copilot');
    const snake = typeof p.hook_event_name === 'string';
    const tool = anyStr(
      p,
      snake ? ['tool_name', 'toolName'] : ['toolName', 'tool_name'],
      'payload',
    );
    const args = argsOf(snake ? (p.tool_input ?? p.toolArgs) : (p.toolArgs ?? p.tool_input), tool);
    const cwd = optStr(p, 'cwd');
    if (!cwd) throw new PayloadError('payload.cwd is missing');
    const post = snake
      ? /^post/i.test(p.hook_event_name as string)
      : p.toolResult !== undefined || p.tool_result !== undefined;
    const ts =
      typeof p.timestamp === 'number'
        ? new Date(p.timestamp)
        : typeof p.timestamp === 'string'
          ? new Date(p.timestamp)
          : new Date();
    const day = Number.isNaN(ts.getTime()) ? 'unknown' : ts.toISOString().slice(0, 10);
    const e: HookEvent = {
      harness: 'copilot',
      phase: post ? 'post' : 'pre',
      event: snake ? (p.hook_event_name as string) : post ? 'postToolUse' : 'preToolUse',
      tool,
      // 1.0.x sends sessionId; a stand-in per day for builds that send none
      sessionId: optStr(p, 'sessionId') ?? optStr(p, 'session_id') ?? `copilot-${day}`,
      toolCallId: optStr(p, 'toolCallId') ?? optStr(p, 'tool_use_id'),
      cwd,
      canAsk: false,
      action: action(tool, args, post ? (p.toolResult ?? p.tool_result) : undefined),
    };
    return e;
  },
  answer(o, phase) {
    if (o.kind === 'none') return { stdout: json({}), stderr: '', exitCode: 0 };
    if (o.kind === 'inform' || phase === 'post') {
      const message = o.kind === 'inform' ? o.message : o.reason;
      return { stdout: json({ additionalContext: message }), stderr: message + '\n', exitCode: 0 };
    }
    // never `ask`: see canAsk above
    return {
      stdout: json({ permissionDecision: 'deny', permissionDecisionReason: o.reason }),
      stderr: o.reason + '\n',
      exitCode: 0,
    };
  },
};
