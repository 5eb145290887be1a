import { parseCodexPatch, patchInShell } from './codex-patch.js';
import { claudeEnvelope, claudeShaped } from './claude.js';
import { PayloadError, type Action, type Translator } from './types.js';
import { obj, parseObject, str, type Obj } from './payload.js';

/**
 * Codex CLI (HARNESSES.md): Claude-shaped PreToolUse / PostToolUse. File
 * edits come as `apply_patch` with the whole patch in tool_input.command,
 * or as `apply_patch <<'EOF'` inside a `Bash` command; both are parsed.
 * Codex has no `ask` (the hook would count as failed and the tool would
 * run): where a person would be asked, Codex gets a deny.
 */
function shellText(input: Obj): string {
  const c = input.command;
  if (typeof c === 'string') return c;
  // older builds: ["bash", "-lc", "SCRIPT"]
  if (Array.isArray(c) && c.every((x) => typeof x === 'string')) {
    const a = c as string[];
    return a.length === 3 && /(^|\/)(ba|z)?sh$/.test(a[0]!) && /^-l?c$/.test(a[1]!)
      ? a[2]!
      : a.join(' ');
  }
  throw new PayloadError(`tool_input.command is ${c === undefined ? 'missing' : 'not a string'}`);
}

function action(tool: string, input: Obj): Action {
  if (tool === 'apply_patch')
    return { kind: 'write', files: parseCodexPatch(str(input, 'command', 'tool_input')) };
  if (tool === 'Bash' || tool === 'shell' || tool === 'exec_command' || tool === 'local_shell') {
    const command = shellText(input);
    const inShell = patchInShell(command);
    if (inShell) {
      const files = parseCodexPatch(inShell.patch);
      return {
        kind: 'write',
        files: inShell.cd
          ? files.map((f) => ({
              ...f,
              path: joinPath(inShell.cd!, f.path),
              change:
                f.change.kind === 'chunks' && f.change.from
                  ? { ...f.change, from: joinPath(inShell.cd!, f.change.from) }
                  : f.change,
            }))
          : files,
      };
    }
    return { kind: 'shell', command };
  }
  return { kind: 'other' };
}

function joinPath(dir: string, p: string): string {
  return p.startsWith('/') ? p : `${dir.replace(/\/+$/, '')}/${p}`;
}

export const codex: Translator = {
  translate(text) {
    const p = parseObject(text, 'Codex');
    const base = claudeEnvelope(p, 'codex', ['PreToolUse', 'PostToolUse'], 'Codex');
    return { ...base, canAsk: false, action: action(base.tool, obj(p, 'tool_input', 'payload')) };
  },
  answer: (o, phase, event) =>
    claudeShaped(o, phase, {
      pre: 'PreToolUse',
      post: phase === 'post' && event ? event : 'PostToolUse',
      canAsk: false,
    }),
};
