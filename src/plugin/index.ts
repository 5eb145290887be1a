import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { judgeEvent, reasonFor } from '../flows/hook/hook-call.js';
import { PLUGIN_FILES } from '../flows/setup/plugins.js';
import { clineAction } from '../harness/cline.js';
import { parseCodexPatch } from '../harness/codex-patch.js';
import { failReason } from '../harness/decide.js';
import { opencodeAction, opencodeCwd } from '../harness/opencode.js';
import type { Obj } from '../harness/payload.js';
import {
  PayloadError,
  isPluginHarness,
  type Action,
  type HookEvent,
  type Outcome,
  type PluginHarnessName,
} from '../harness/types.js';
import { activateResident } from '../git/resident.js';
import { withBudget } from '../runtime/deadline.js';

/**
 * `guard-cli/plugin`: guard's hook inside the harness's own process, for
 * the harnesses whose extension point is a JS plugin (Cline CLI, opencode,
 * Kilo Code). A tool call goes through the very path of `guard hook`
 * (flows/hook/hook-call.ts judgeEvent, then flows/hook/hook.ts), without starting a
 * process per call. Whatever goes wrong inside guard (a payload it cannot
 * read, a bad config, git failing, running out of time) refuses the call
 * with a reason: the plugin fails closed.
 *
 * The plugin files `guard init --agent cline|opencode|kilo` writes import
 * this module lazily and refuse the gated tools when it cannot be loaded.
 *
 * Living as long as the harness, it keeps what can safely outlive a call
 * (git/resident.ts): each folder's repository, looked at again with a few
 * stats instead of a rev-parse, and one `git cat-file` per work tree,
 * started again whenever what it read once no longer holds.
 */
activateResident();

/** One tool call, normalised: what any plugin host can hand guard. */
export interface ToolCall {
  harness: PluginHarnessName;
  /** Before the tool runs (may be refused) or after it ran (may be reported). */
  phase: 'before' | 'after';
  sessionId: string;
  toolCallId?: string | null;
  /** The folder the tool runs in (absolute). */
  cwd: string;
  /** The harness's own tool name, for the records. */
  tool: string;
  /**
   * write: `path` gets `content`. edit: `oldText` replaced by `newText` in
   * `path` (once, or everywhere with replaceAll). patch: a Codex/V4A patch
   * in `patch`. shell: `command`. read: anything guard does not gate.
   */
  kind: 'write' | 'edit' | 'patch' | 'shell' | 'read';
  path?: string;
  content?: string;
  oldText?: string;
  newText?: string;
  replaceAll?: boolean;
  patch?: string;
  command?: string;
}

/** guard's answer: let it run, refuse it (before) with a reason for the model, or tell the model what it destroyed (after). */
export type PluginVerdict =
  | { action: 'allow' }
  | { action: 'deny'; reason: string }
  | { action: 'report'; text: string };

export interface Options {
  /** Answer (refusing) after this many ms at the latest; default GUARD_HOOK_TIMEOUT seconds, else 20 s. */
  budgetMs?: number;
}

const ALLOW: PluginVerdict = { action: 'allow' };

/** The plugin reads a target file only when it is a regular file of sane size: a FIFO would hang the harness's own process, /dev/zero fill its memory. */
const READ_MAX = 64 << 20;
async function readRegular(file: string): Promise<string | null> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile() || st.size > READ_MAX) return null;
  return readFile(file, 'utf8').catch(() => null);
}

function need(v: string | undefined, what: string): string {
  if (typeof v !== 'string') throw new PayloadError(`${what} is missing`);
  return v;
}

/** The action of a normalised call (pure). */
export function actionOf(call: ToolCall): Action {
  switch (call.kind) {
    case 'write':
      return {
        kind: 'write',
        files: [
          {
            path: need(call.path, 'path'),
            change: { kind: 'content', content: need(call.content, 'content') },
          },
        ],
      };
    case 'edit':
      return {
        kind: 'write',
        files: [
          {
            path: need(call.path, 'path'),
            change: {
              kind: 'edits',
              edits: [
                {
                  oldString: need(call.oldText, 'oldText'),
                  newString: need(call.newText, 'newText'),
                  replaceAll: call.replaceAll === true,
                },
              ],
            },
          },
        ],
      };
    case 'patch':
      return { kind: 'write', files: parseCodexPatch(need(call.patch, 'patch')) };
    case 'shell':
      return { kind: 'shell', command: need(call.command, 'command') };
    case 'read':
      return { kind: 'other' };
    default:
      throw new PayloadError(
        `kind ${JSON.stringify((call as { kind: unknown }).kind)} is not write, edit, patch, shell or read`,
      );
  }
}

interface Meta {
  harness: PluginHarnessName;
  phase: 'before' | 'after';
  sessionId: string;
  toolCallId: string | null;
  cwd: string;
  tool: string;
  /** The folder the harness's session is for (its workspace): judged too when the call's cwd is elsewhere (a bash workdir of /tmp). */
  project?: string;
}

function budgetOf(o: Options): number {
  if (typeof o.budgetMs === 'number' && o.budgetMs > 0) return o.budgetMs;
  return (Number(process.env.GUARD_HOOK_TIMEOUT) || 20) * 1000;
}

function verdictOf(o: Outcome, phase: 'before' | 'after'): PluginVerdict {
  if (o.kind === 'none') return ALLOW;
  if (o.kind === 'inform') return { action: 'report', text: o.message };
  // a plugin host has no person to ask: what would be put to one is refused (deny and ask carry the reason)
  return phase === 'before'
    ? { action: 'deny', reason: o.reason }
    : { action: 'report', text: o.reason };
}

/** The one path every plugin takes: the action (built inside the guard, so a bad payload refuses), judged like `guard hook`, within the budget. */
async function judge(m: Meta, action: () => Action, opts: Options): Promise<PluginVerdict> {
  const fail = (reason: string): PluginVerdict =>
    m.phase === 'before' ? { action: 'deny', reason } : { action: 'report', text: reason };
  let timer: NodeJS.Timeout | undefined;
  try {
    if (!isPluginHarness(m.harness))
      throw new PayloadError(
        `harness ${JSON.stringify(m.harness)} is not one of cline, opencode, kilo`,
      );
    if (typeof m.sessionId !== 'string' || m.sessionId === '')
      throw new PayloadError('the session id is missing');
    const budget = budgetOf(opts);
    // in the harness's own process: a loop that never checked the clock would hang the harness itself
    const a = withBudget(budget / 1000, action);
    if (a.kind === 'other') return ALLOW;
    // after a write: guard records there only a person's yes to a write it asked about, and in
    // process nobody is asked (canAsk below), so the call costs nothing (issue 22; what a
    // background command or the net has to say waits for the next call: docs/harnesses/README.md)
    if (m.phase === 'after' && a.kind === 'write') return ALLOW;
    const event: HookEvent = {
      harness: m.harness,
      phase: m.phase === 'before' ? 'pre' : 'post',
      event: m.phase,
      tool: m.tool,
      sessionId: m.sessionId,
      toolCallId: m.toolCallId,
      cwd: m.cwd,
      canAsk: false,
      action: a,
    };
    const late = new Promise<PluginVerdict>((resolve) => {
      timer = setTimeout(
        () =>
          resolve(
            fail(
              failReason(
                `it ran out of time (${budget / 1000} s)`,
                'a very large file or a slow disk? GUARD_HOOK_TIMEOUT sets the budget',
              ),
            ),
          ),
        budget,
      );
      timer.unref?.();
    });
    // nobody to ask inside a plugin: auto mode (what needs a person is refused and kept)
    const project =
      typeof m.project === 'string' && m.project.startsWith('/') ? m.project : undefined;
    const judged = withBudget(budget / 1000, () => judgeEvent(event, true, project)).then((r) =>
      verdictOf(r.outcome, m.phase),
    );
    return await Promise.race([judged, late]);
  } catch (err) {
    return fail(reasonFor(err, m.harness));
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * After a shell call: is the plugin file that runs guard still there and
 * guard's? The running harness keeps the plugin it loaded, so nothing is
 * lost now, but its next session would run unguarded: say so, loudly.
 */
async function netCheck(
  h: PluginHarnessName,
  root: string | undefined,
  v: PluginVerdict,
): Promise<PluginVerdict> {
  if (!root) return v;
  const rel = PLUGIN_FILES[h];
  const text = await readFile(path.join(root, rel), 'utf8').catch(() => null);
  if (text !== null && text.includes('guard init --agent')) return v;
  const warning = `guard: this command ${text === null ? 'removed' : 'changed'} ${rel}, the plugin that runs guard: from the next session ${h} runs without guard. Do not change it; tell the user, who can put it back with \`guard init --agent ${h}\`.`;
  return v.action === 'report'
    ? { action: 'report', text: `${v.text}\n\n${warning}` }
    : { action: 'report', text: warning };
}

/** A normalised tool call judged by guard. Never throws: a failure inside guard is a deny (before) or a report (after). */
export function guardToolCall(call: ToolCall, opts: Options = {}): Promise<PluginVerdict> {
  const c = (call ?? {}) as Partial<ToolCall>;
  // (a tool-call id of another kind would pair one call's after-event with another's before: holes3)
  const odd =
    c.toolCallId != null && typeof c.toolCallId !== 'string'
      ? 'toolCallId is not a string'
      : c.tool !== undefined && typeof c.tool !== 'string'
        ? 'tool is not a string'
        : c.replaceAll !== undefined && typeof c.replaceAll !== 'boolean'
          ? 'replaceAll is not true or false'
          : null;
  return judge(
    {
      harness: c.harness as PluginHarnessName,
      phase: c.phase === 'after' ? 'after' : 'before',
      sessionId: c.sessionId as string,
      toolCallId: typeof c.toolCallId === 'string' ? c.toolCallId : null,
      cwd: c.cwd as string,
      tool: typeof c.tool === 'string' ? c.tool : String(c.kind),
    },
    () => {
      if (odd) throw new PayloadError(odd);
      return actionOf(call);
    },
    opts,
  );
}

/* ----------------------------------------------------------------- Cline */

/**
 * Cline CLI 3.x plugin hooks (@cline/shared AgentRuntimeHooks): beforeTool
 * and afterTool get `{tool, toolCall: {toolCallId, toolName, input}, input,
 * snapshot: {conversationId, agentId, ...}}`; the workspace and the session
 * come from setup(api, ctx) (`ctx.workspaceInfo.rootPath`,
 * `ctx.session.sessionId`), the plugin file keeps them.
 */
export interface ClineHookContext {
  toolCall?: { toolCallId?: string; toolName?: string; input?: unknown };
  tool?: { name?: string };
  input?: unknown;
  snapshot?: { conversationId?: string; agentId?: string };
}

export interface ClineSetupContext {
  session?: { sessionId?: string };
  workspaceInfo?: { rootPath?: string };
  cwd?: string;
}

/** Cline's plugin hook timeout is 3 s (a hook that takes longer fails); guard answers before it. */
export const CLINE_BUDGET_MS = 2500;

function clineMeta(
  phase: 'before' | 'after',
  c: ClineHookContext,
  setup: ClineSetupContext,
): Meta & { input: Obj } {
  const tool = c?.toolCall?.toolName ?? c?.tool?.name ?? '';
  const raw = c?.input ?? c?.toolCall?.input;
  const input = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Obj) : {};
  const sessionId =
    setup?.session?.sessionId || c?.snapshot?.conversationId || c?.snapshot?.agentId || '';
  const cwd = setup?.workspaceInfo?.rootPath || setup?.cwd || process.cwd();
  const project = setup?.workspaceInfo?.rootPath || setup?.cwd;
  return {
    harness: 'cline',
    phase,
    sessionId,
    toolCallId: c?.toolCall?.toolCallId ?? null,
    cwd,
    tool,
    input,
    ...(typeof project === 'string' ? { project } : {}),
  };
}

/** The line end of the file a Cline editor call replaces text in (Cline matches in the file's own line ends). */
async function eolOf(m: Meta & { input: Obj }): Promise<'\n' | '\r\n'> {
  if (
    m.tool !== 'editor' ||
    typeof m.input.path !== 'string' ||
    typeof m.input.old_text !== 'string'
  )
    return '\n';
  const text = (await readRegular(path.resolve(m.cwd, m.input.path))) ?? '';
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** Cline beforeTool: `{skip: true, reason}` refuses this one call (the model reads the reason); undefined lets it run. */
export async function clineBeforeTool(
  c: ClineHookContext,
  setup: ClineSetupContext,
  opts: Options = { budgetMs: CLINE_BUDGET_MS },
): Promise<{ skip: true; reason: string } | undefined> {
  const m = clineMeta('before', c, setup);
  const eol = await eolOf(m);
  const v = await judge(m, () => clineAction(m.tool, m.input, eol), opts);
  return v.action === 'deny' ? { skip: true, reason: v.reason } : undefined;
}

/** Cline afterTool: `appendContext` is put after the call's result for the model (a `<hook_context>` message). */
export async function clineAfterTool(
  c: ClineHookContext,
  setup: ClineSetupContext,
  opts: Options = { budgetMs: CLINE_BUDGET_MS },
): Promise<{ appendContext: string } | undefined> {
  const m = clineMeta('after', c, setup);
  let v = await judge(m, () => clineAction(m.tool, m.input), opts);
  if (m.tool === 'run_commands') v = await netCheck('cline', setup?.workspaceInfo?.rootPath, v);
  return v.action === 'report' ? { appendContext: v.text } : undefined;
}

/* ------------------------------------------------------- opencode, Kilo */

export interface OpencodeInput {
  tool?: string;
  sessionID?: string;
  callID?: string;
  args?: unknown;
}

/** opencode's plugin input (`{directory, worktree, ...}`): the session's folder. */
export interface OpencodeContext {
  directory?: string;
  worktree?: string;
}

/** One opencode (or Kilo) hook call: which harness, the tool call, the session's folder. */
export interface OpencodeCall {
  harness: 'opencode' | 'kilo';
  input: OpencodeInput;
  ctx: OpencodeContext;
}

function opencodeMeta(
  phase: 'before' | 'after',
  { harness, input, ctx }: OpencodeCall,
  args: unknown,
): Meta & { args: Obj } {
  const tool = input?.tool ?? '';
  const a = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Obj) : {};
  const directory = ctx?.directory || ctx?.worktree || process.cwd();
  // the session's folder is judged too: a bash workdir of /tmp running `git -C PROJECT checkout -- .` is still seen
  return {
    harness,
    phase,
    sessionId: input?.sessionID ?? '',
    toolCallId: input?.callID ?? null,
    cwd: opencodeCwd(tool, a, directory),
    tool,
    args: a,
    ...(typeof directory === 'string' ? { project: directory } : {}),
  };
}

/** The message opencode shows the model for a refused call: guard's reason. */
export class GuardRefusal extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'GuardRefusal';
  }
}

/**
 * opencode's edit finds oldString loosely when it is not in the file as
 * given (trimmed lines, normalised whitespace and indentation, and a block
 * matched by its first and last lines only, which can replace hundreds of
 * lines the model never quoted). guard cannot tell what such an edit will
 * do, so it refuses it, saying how to send one it can (the file is
 * untouched: nothing to keep).
 */
async function looseEdit(m: Meta & { args: Obj }): Promise<string | null> {
  if (
    m.tool !== 'edit' ||
    typeof m.args.filePath !== 'string' ||
    typeof m.args.oldString !== 'string' ||
    m.args.oldString === ''
  )
    return null;
  const text = await readRegular(path.resolve(m.cwd, m.args.filePath));
  if (text === null || text.includes(m.args.oldString)) return null;
  return `guard refused this edit: oldString is not in ${m.args.filePath} exactly as given, and ${m.harness} would then match it loosely (by trimmed lines, or by its first and last lines alone), so guard cannot tell what the edit would replace. Read the file and send oldString exactly as it is there, or write the whole file.`;
}

/**
 * tool.execute.before: throws a GuardRefusal (the call is refused, the model
 * reads the reason) or returns. The plugin file guard setup writes calls it
 * with these four arguments: older plugin files do too, so they stay.
 */
export async function opencodeBefore(
  harness: 'opencode' | 'kilo',
  input: OpencodeInput,
  output: { args?: unknown },
  ctx: OpencodeContext,
): Promise<void> {
  return opencodeJudgeBefore({ harness, input, ctx, output });
}

/** opencodeBefore, with guard's own options (a time budget). */
export async function opencodeJudgeBefore(
  call: OpencodeCall & { output: { args?: unknown } },
  opts: Options = {},
): Promise<void> {
  const m = opencodeMeta('before', call, call.output?.args);
  const loose = await looseEdit(m);
  if (loose) throw new GuardRefusal(loose);
  const v = await judge(m, () => opencodeAction(m.tool, m.args), opts);
  if (v.action === 'deny') throw new GuardRefusal(v.reason);
}

/** tool.execute.after: a loss report is appended to the tool's output, which is what the model reads. Four arguments, as opencodeBefore. */
export async function opencodeAfter(
  harness: 'opencode' | 'kilo',
  input: OpencodeInput & { args?: unknown },
  output: { output?: unknown },
  ctx: OpencodeContext,
): Promise<void> {
  return opencodeJudgeAfter({ harness, input, ctx, output });
}

/** opencodeAfter, with guard's own options (a time budget). */
export async function opencodeJudgeAfter(
  call: OpencodeCall & { input: { args?: unknown }; output: { output?: unknown } },
  opts: Options = {},
): Promise<void> {
  const { harness, input, ctx, output } = call;
  const m = opencodeMeta('after', call, input?.args);
  let v = await judge(m, () => opencodeAction(m.tool, m.args), opts);
  if (m.tool === 'bash') v = await netCheck(harness, ctx?.worktree || ctx?.directory, v);
  if (v.action !== 'report' || !output) return;
  const before = typeof output.output === 'string' ? output.output : '';
  output.output = before ? `${before}\n\n${v.text}` : v.text;
}
