import { parseCodexPatch } from './codex-patch.js';
import { PayloadError, type Action } from './types.js';
import { str, type Obj } from './payload.js';

/**
 * opencode (`opencode-ai`, seen in the binary 1.18.33) and its fork Kilo
 * Code CLI (`@kilocode/cli` 7.7.7), which share its plugin API: a plugin's
 * `tool.execute.before(input {tool, sessionID, callID}, output {args})` runs
 * before every tool, and an Error thrown there refuses the call (the model
 * reads the message); `tool.execute.after(input {..., args}, output {title,
 * output, metadata})` runs after it, and what it appends to output.output
 * is what the model reads. The tools guard gates (argument names from the
 * binary's tool schemas):
 *
 *   write        {filePath, content}
 *   edit         {filePath, oldString, newString, replaceAll?}: an empty
 *                oldString creates a file (an existing one fails the call)
 *   apply_patch  {patchText}: the Codex patch grammar (GPT models)
 *   bash         {command, workdir?, timeout?, description}
 *
 * A relative filePath is taken from the session's folder, as the tools do.
 */
export function opencodeAction(tool: string, args: Obj): Action {
  switch (tool) {
    case 'write':
      return {
        kind: 'write',
        files: [
          {
            path: str(args, 'filePath', 'args'),
            change: { kind: 'content', content: str(args, 'content', 'args') },
          },
        ],
      };
    case 'edit': {
      const replaceAll = args.replaceAll === true;
      return {
        kind: 'write',
        files: [
          {
            path: str(args, 'filePath', 'args'),
            change: {
              kind: 'edits',
              edits: [
                {
                  oldString: str(args, 'oldString', 'args'),
                  newString: str(args, 'newString', 'args'),
                  replaceAll,
                },
              ],
            },
          },
        ],
      };
    }
    case 'apply_patch':
      return { kind: 'write', files: parseCodexPatch(str(args, 'patchText', 'args')) };
    case 'bash': {
      const command = str(args, 'command', 'args');
      const workdir = args.workdir;
      if (workdir !== undefined && typeof workdir !== 'string')
        throw new PayloadError('args.workdir is not a string');
      return { kind: 'shell', command };
    }
    default:
      // an MCP server's tool (`<server>_<tool>`: opencode runs the plugin's hooks for it) or a
      // custom one: guard cannot know what it does, so it is judged as a shell call, a checkpoint
      // before and a report after, as Claude's mcp__* (adv3)
      return READS.has(tool) ? { kind: 'other' } : opaqueAction(tool, args);
  }
}

/** A tool guard cannot see into, as a shell call: its name and the start of its input (table.ts does the same for Claude's). */
function opaqueAction(tool: string, args: Obj): Action {
  const a = JSON.stringify(args);
  return { kind: 'shell', command: `${tool} ${a.length > 300 ? a.slice(0, 297) + '...' : a}` };
}

/**
 * opencode's own tools that change no file (1.18.33's binary: its tool ids, its agents' default
 * list): a subagent's `task` runs its own tool calls through the same hooks. The plugin file
 * (flows/setup/plugins.ts) hands guard every other tool.
 */
export const OPENCODE_READS: readonly string[] = [
  'read',
  'glob',
  'grep',
  'list',
  'lsp',
  'webfetch',
  'websearch',
  'codesearch',
  'todowrite',
  'todoread',
  'task',
  'skill',
  'question',
  'plan_enter',
  'plan_exit',
  'invalid',
];
const READS = new Set(OPENCODE_READS);

/** The folder a bash call runs in: its workdir (relative to the session's folder), else that folder. */
export function opencodeCwd(tool: string, args: Obj, directory: string): string {
  const w =
    tool === 'bash' && typeof args.workdir === 'string' && args.workdir !== ''
      ? args.workdir
      : null;
  if (w === null) return directory;
  return w.startsWith('/') ? w : `${directory.replace(/\/+$/, '')}/${w}`;
}
