import { parseCodexPatch } from './codex-patch.js';
import {
  PayloadError,
  type Action,
  type HookEvent,
  type Outcome,
  type Phase,
  type HookAnswer,
  type Translator,
  type StringEdit,
} from './types.js';
import { json, parseObject, type Obj } from './payload.js';

/**
 * The Claude-style harnesses, one row each: a harness that runs a command
 * with a Claude Code-shaped payload (`hook_event_name`, `tool_name`,
 * `tool_input`, ...) and reads a Claude-shaped answer
 * (`hookSpecificOutput.permissionDecision`) differs from Claude Code only in
 * data: its tool names and their field names, its event names, its session
 * and folder fields, whether a person can answer `ask`, and where its config
 * lives. Adding one is adding a row here (and its config row in
 * flows/setup/agents.ts reads `config` below), never a new module.
 *
 * Every fact in a row says where it was checked (`source`): the real binary
 * run against the scripted model, the harness's shipped package source, or
 * its docs only (unverified).
 */

/** What one tool does, and in which fields (each a list of spellings, first found wins). */
export type ToolSpec =
  /** Whole new content of one file. */
  | { kind: 'write'; path: readonly string[]; content: readonly string[]; addFinalNewline?: string }
  /** One exact-string replacement (or several: `numbered` reads old_str_1/new_str_1, old_str_2, ...). */
  | {
      kind: 'edit';
      path: readonly string[];
      old: readonly string[];
      new: readonly string[];
      all?: readonly string[];
      numbered?: boolean;
    }
  /** A list of exact-string edits applied in order. */
  | {
      kind: 'multiedit';
      path: readonly string[];
      edits: string;
      old: readonly string[];
      new: readonly string[];
      all?: readonly string[];
    }
  /** A V4A / Codex patch (codex-patch.ts) in one field. */
  | { kind: 'patch'; patch: readonly string[] }
  /** Files removed (a list field, or one path). */
  | { kind: 'delete'; paths: readonly string[] }
  /** One cell of a Jupyter notebook (Claude NotebookEdit: notebook.ts). */
  | { kind: 'notebook'; path: readonly string[] }
  /**
   * `background`: flags that run it detached (its post event comes while it still runs, flows/hook/hook.ts);
   * `detached`: it always runs so (Claude's Monitor); `orNone`: a call without the command field is not a
   * command at all (Monitor's `ws`, a WebSocket to watch), any other kind in it is still refused.
   */
  | {
      kind: 'shell';
      command: readonly string[];
      background?: readonly string[];
      detached?: true;
      orNone?: readonly string[];
    };

export interface ClaudeStyleRow {
  /** `guard hook NAME`. */
  name: string;
  label: string;
  /** Where the facts of this row were checked, and which version. */
  source: string;
  /** Pre and post event names (aliases allowed: a harness's failure event is a post event). */
  events: { pre: readonly string[]; post: readonly string[] };
  /** Payload fields: session id, folder (a string, or the first of a list), tool-call id, event name (default hook_event_name). */
  fields: {
    session: readonly string[];
    cwd: readonly string[];
    toolCall: readonly string[];
    event?: readonly string[];
  };
  tools: Readonly<Record<string, ToolSpec>>;
  /**
   * Tools whose names start with `prefix` (Claude Code's MCP tools,
   * `mcp__SERVER__TOOL`): guard cannot know what each does, so each call is
   * judged as a shell command is: a whole-tree checkpoint before it, a
   * report of what it destroyed after it.
   */
  opaque?: { prefix: string };
  /**
   * Who can answer an `ask`: `claude` reads Claude Code's permission_mode
   * and headless marker; `never` is deny whenever a person would be needed
   * (the harness has no ask, or nothing says whether anyone is there).
   */
  ask: 'claude' | 'never';
  /** hookSpecificOutput.hookEventName of the answers. */
  answerEvents: { pre: string; post: string };
  /** Where `guard init --agent NAME` writes the hook and how (flows/setup/agents.ts). */
  config: {
    /** Project file with a Claude-shaped `hooks` object. */
    file: string;
    /** Event keys the hook is installed under (pre first). */
    events: readonly string[];
    /** Variable the harness sets to the project folder for the hook command, if any. */
    projectVar: string | null;
    /** The file's timeout unit. */
    timeoutUnit: 's' | 'ms';
    /**
     * The harness reads `onFailure` on a command hook (Claude Code 2.1.295 and later, its settings
     * schema in the 2.1.330 binary): its default, "continue", runs the tool when the hook cannot
     * start, times out or exits other than 0 or 2; guard writes "block". Older builds ignore it.
     */
    onFailureBlock?: true;
  };
}

const PATH = ['file_path'] as const;
const CLAUDE_EDIT = { old: ['old_string'], new: ['new_string'], all: ['replace_all'] } as const;

/** Claude Code itself (real binary 2.1.330, HARNESSES.md). Continue CLI reads the same file: its Write says `filepath`. */
export const CLAUDE: ClaudeStyleRow = {
  name: 'claude',
  label: 'Claude Code',
  source:
    'real binary @anthropic-ai/claude-code 2.1.330; Continue CLI @continuedev/cli 1.5.47 package source (Write {filepath})',
  // PostToolUseFailure: what 2.1.330 sends instead of PostToolUse after a command that exits non-zero
  events: { pre: ['PreToolUse'], post: ['PostToolUse', 'PostToolUseFailure'] },
  fields: { session: ['session_id'], cwd: ['cwd'], toolCall: ['tool_use_id'] },
  tools: {
    Write: { kind: 'write', path: ['file_path', 'filepath'], content: ['content'] },
    Edit: { kind: 'edit', path: ['file_path', 'filepath'], ...CLAUDE_EDIT },
    MultiEdit: {
      kind: 'multiedit',
      path: ['file_path', 'filepath'],
      edits: 'edits',
      ...CLAUDE_EDIT,
    },
    NotebookEdit: { kind: 'notebook', path: ['notebook_path'] },
    Bash: { kind: 'shell', command: ['command'], background: ['run_in_background'] },
    // Windows' shell, the same fields as Bash (2.1.330's tool list, read from the binary)
    PowerShell: { kind: 'shell', command: ['command'], background: ['run_in_background'] },
    // a command whose output lines come back as events, always in the background; or `ws`, a WebSocket
    // to watch, which runs nothing (its schema in the 2.1.330 binary; docs/reliability/adv2.md)
    Monitor: { kind: 'shell', command: ['command'], detached: true, orNone: ['ws'] },
  },
  opaque: { prefix: 'mcp__' },
  ask: 'claude',
  answerEvents: { pre: 'PreToolUse', post: 'PostToolUse' },
  config: {
    file: '.claude/settings.json',
    events: ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'],
    projectVar: 'CLAUDE_PROJECT_DIR',
    timeoutUnit: 's',
    onFailureBlock: true,
  },
};

/**
 * Continue CLI (`cn`): its hook engine reads ~/.claude/settings.json,
 * .claude/settings.json, .continue/settings.json and their .local
 * variants; tools Write {filepath, content}, Edit and MultiEdit
 * {file_path, ...}, Bash {command}; exit 2, `decision: block` or
 * permissionDecision deny block; any other exit lets the tool run.
 */
export const CONTINUE: ClaudeStyleRow = {
  ...CLAUDE,
  // no notebook tool, and its MCP tools are not named mcp__ (package source)
  tools: {
    Write: CLAUDE.tools.Write!,
    Edit: CLAUDE.tools.Edit!,
    MultiEdit: CLAUDE.tools.MultiEdit!,
    Bash: CLAUDE.tools.Bash!,
  },
  opaque: undefined,
  name: 'continue',
  label: 'Continue CLI',
  source: 'package source @continuedev/cli 1.5.47 (hook engine, tool schemas)',
  ask: 'never',
  config: {
    file: '.continue/settings.json',
    events: ['PreToolUse', 'PostToolUse'],
    projectVar: 'CONTINUE_PROJECT_DIR',
    timeoutUnit: 's',
  },
};

/**
 * Qwen Code: Claude-shaped payload (session_id, cwd, permission_mode,
 * tool_use_id) with Gemini's tool names; `replace` is the legacy name of
 * `edit`. In a non-interactive run Qwen turns `ask` into a deny itself,
 * but without guard's kept ref: guard denies.
 */
export const QWEN: ClaudeStyleRow = {
  name: 'qwen',
  label: 'Qwen Code',
  source: 'package source @qwen-code/qwen-code 0.24.4 (hookSystem, tool-names, tool schemas)',
  events: { pre: ['PreToolUse'], post: ['PostToolUse', 'PostToolUseFailure'] },
  fields: { session: ['session_id'], cwd: ['cwd'], toolCall: ['tool_use_id'] },
  tools: {
    write_file: { kind: 'write', path: PATH, content: ['content'] },
    edit: { kind: 'edit', path: PATH, ...CLAUDE_EDIT },
    replace: { kind: 'edit', path: PATH, ...CLAUDE_EDIT },
    run_shell_command: { kind: 'shell', command: ['command'] },
  },
  ask: 'never',
  answerEvents: { pre: 'PreToolUse', post: 'PostToolUse' },
  config: {
    file: '.qwen/settings.json',
    events: ['PreToolUse', 'PostToolUse'],
    projectVar: 'QWEN_PROJECT_DIR',
    timeoutUnit: 'ms',
  },
};

/**
 * Auggie (Augment CLI): payload {hook_event_name, conversation_id,
 * workspace_roots, tool_name, tool_input, tool_output?, tool_error?}; no
 * cwd, no tool-call id. save-file {path, file_content,
 * add_last_line_newline (default true)}; str-replace-editor {command:
 * "str_replace", path, old_str_1, new_str_1, old_str_2, ...} (an `insert`
 * command removes nothing and is left alone); apply_patch {input: V4A};
 * remove-files {file_paths}; launch-process {command, cwd}.
 */
export const AUGGIE: ClaudeStyleRow = {
  name: 'auggie',
  label: 'Auggie',
  source:
    'package source @augmentcode/auggie 0.36.0 (hook payload builder, tool schemas); not run: needs an Augment login',
  events: { pre: ['PreToolUse'], post: ['PostToolUse'] },
  fields: {
    session: ['conversation_id', 'session_id'],
    cwd: ['cwd', 'workspace_roots'],
    toolCall: ['tool_use_id'],
  },
  tools: {
    'save-file': {
      kind: 'write',
      path: ['path'],
      content: ['file_content'],
      addFinalNewline: 'add_last_line_newline',
    },
    'str-replace-editor': {
      kind: 'edit',
      path: ['path'],
      old: ['old_str'],
      new: ['new_str'],
      numbered: true,
    },
    apply_patch: { kind: 'patch', patch: ['input'] },
    'remove-files': { kind: 'delete', paths: ['file_paths'] },
    'launch-process': { kind: 'shell', command: ['command'] },
  },
  ask: 'never',
  answerEvents: { pre: 'PreToolUse', post: 'PostToolUse' },
  config: {
    file: '.augment/settings.json',
    events: ['PreToolUse', 'PostToolUse'],
    projectVar: null,
    timeoutUnit: 's',
  },
};

/**
 * Factory Droid (real binary @factory/cli-linux-x64 0.225.2, with a custom
 * Chat Completions model): Claude-shaped payload (session_id, cwd,
 * permission_mode, no tool_use_id) from the `hooks` of .factory/settings.json;
 * tools Create {file_path, content}, Edit {file_path, old_str, new_str,
 * change_all}, Execute {command, summary, timeout, fireAndForget}.
 * ApplyPatch and MultiEdit are from its docs (not offered to the model here).
 */
export const DROID: ClaudeStyleRow = {
  name: 'droid',
  label: 'Factory Droid',
  source:
    'real binary @factory/cli-linux-x64 0.225.2 (Create, Edit, Execute); ApplyPatch and MultiEdit from its docs',
  events: { pre: ['PreToolUse'], post: ['PostToolUse'] },
  fields: { session: ['session_id'], cwd: ['cwd'], toolCall: ['tool_use_id'] },
  tools: {
    Create: { kind: 'write', path: ['file_path'], content: ['content'] },
    Edit: {
      kind: 'edit',
      path: ['file_path'],
      old: ['old_str', 'old_string'],
      new: ['new_str', 'new_string'],
      all: ['change_all', 'replace_all'],
    },
    MultiEdit: {
      kind: 'multiedit',
      path: ['file_path'],
      edits: 'edits',
      old: ['old_str', 'old_string'],
      new: ['new_str', 'new_string'],
      all: ['change_all', 'replace_all'],
    },
    ApplyPatch: { kind: 'patch', patch: ['input', 'patch'] },
    Execute: { kind: 'shell', command: ['command'] },
  },
  ask: 'never',
  answerEvents: { pre: 'PreToolUse', post: 'PostToolUse' },
  config: {
    file: '.factory/settings.json',
    events: ['PreToolUse', 'PostToolUse'],
    projectVar: 'FACTORY_PROJECT_DIR',
    timeoutUnit: 's',
  },
};

/**
 * Crush: UNVERIFIED, its npm package downloads the binary from GitHub at
 * install. Its hooks changed shape across versions (charmbracelet/crush
 * internal/hooks: scripts in .crush/hooks; a payload with `event_type` and
 * `working_dir`; one with `event`, `session_id`, `cwd`, `tool_name`,
 * `tool_input` whose answer may be Claude's hookSpecificOutput): all three
 * payload spellings are read. Tools from its source: write, edit,
 * multiedit, bash, with Claude's field names.
 */
export const CRUSH: ClaudeStyleRow = {
  name: 'crush',
  label: 'Crush',
  source:
    "Crush's source tree (charmbracelet/crush internal/hooks, several shapes) and docs; not run: @charmland/crush downloads its binary from GitHub at install",
  events: { pre: ['PreToolUse', 'pre_tool_use'], post: ['PostToolUse', 'post_tool_use'] },
  fields: {
    session: ['session_id'],
    cwd: ['cwd', 'working_dir'],
    toolCall: ['tool_use_id'],
    event: ['hook_event_name', 'event', 'event_type'],
  },
  tools: {
    write: { kind: 'write', path: PATH, content: ['content'] },
    edit: { kind: 'edit', path: PATH, ...CLAUDE_EDIT },
    multiedit: { kind: 'multiedit', path: PATH, edits: 'edits', ...CLAUDE_EDIT },
    bash: { kind: 'shell', command: ['command'] },
  },
  ask: 'never',
  answerEvents: { pre: 'PreToolUse', post: 'PostToolUse' },
  config: {
    file: 'crush.json',
    events: ['PreToolUse', 'PostToolUse'],
    projectVar: 'CRUSH_PROJECT_DIR',
    timeoutUnit: 's',
  },
};

/** The rows, by `guard hook` name. */
export const ROWS = {
  claude: CLAUDE,
  continue: CONTINUE,
  qwen: QWEN,
  auggie: AUGGIE,
  droid: DROID,
  crush: CRUSH,
} as const satisfies Record<string, ClaudeStyleRow>;
export type RowName = keyof typeof ROWS;

/** Tools of a row that write or run commands: what its matcher must cover. */
export function gatedTools(row: ClaudeStyleRow): string[] {
  return Object.keys(row.tools);
}

/**
 * The matcher guard installs: every gated tool. A list of names is matched
 * name by name; with a prefix it is a regex, which Claude Code and Continue
 * test unanchored (`new RegExp(m).test(tool)`, both binaries), so it is
 * anchored here: `Write` must not match `TodoWrite`.
 */
export function matcherOf(row: ClaudeStyleRow, tools = gatedTools(row)): string {
  const names = tools.join('|');
  return row.opaque ? `^(${names}|${row.opaque.prefix}.*)$` : names;
}

/**
 * The tools whose after event guard installs (issue 22: a process only where the event carries
 * something). After a shell command (and an opaque tool, judged as one) the event is the loss
 * report. After a write it records one thing: that the person said yes to a write guard put to
 * them (`ask`); where nobody can be asked (`ask: 'never'`) a write's after event has nothing to
 * record, so it is not installed for the write tools (docs/harnesses/README.md).
 */
export function afterTools(row: ClaudeStyleRow): string[] {
  return row.ask === 'never'
    ? gatedTools(row).filter((t) => row.tools[t]!.kind === 'shell')
    : gatedTools(row);
}

/** The gated tools as people read them (doctor): `mcp__*` for the prefix. */
export function toolsLabel(row: ClaudeStyleRow, tools = gatedTools(row)): string {
  return [...tools, ...(row.opaque ? [`${row.opaque.prefix}* (MCP tools)`] : [])].join(', ');
}

/** A call of an opaque tool (MCP) as guard's shell action: its name and the start of its input. */
function opaqueAction(tool: string, input: Obj): Action {
  const args = JSON.stringify(input);
  return {
    kind: 'shell',
    command: `${tool} ${args.length > 300 ? args.slice(0, 297) + '...' : args}`,
  };
}

/* ------------------------------------------------------------ reading */

/**
 * The one value of a field that has several spellings. Two spellings with
 * different values are refused (fail closed): the model writes the tool's
 * arguments, and could otherwise show guard one path in `file_path` while
 * the harness writes the one in `filepath`.
 */
function pick(o: Obj, keys: readonly string[], where: string): string {
  const found = keys.filter((k) => o[k] !== undefined);
  const strings = [...new Set(found.map((k) => o[k]))];
  if (found.length > 1 && strings.length > 1)
    throw new PayloadError(
      `${where} has both ${found.join(' and ')} with different values: guard cannot tell which one the harness uses`,
    );
  for (const k of keys) if (typeof o[k] === 'string') return o[k] as string;
  throw new PayloadError(`${where}.${keys[0]} is ${found.length ? 'not a string' : 'missing'}`);
}

function pickOpt(o: Obj, keys: readonly string[]): string | null {
  for (const k of keys) if (typeof o[k] === 'string') return o[k] as string;
  return null;
}

function flag(o: Obj, keys: readonly string[] | undefined): boolean {
  return (keys ?? []).some((k) => o[k] === true || o[k] === 'true');
}

/** The folder: a string field, or the first string of a list field (workspace_roots). */
function folder(p: Obj, keys: readonly string[]): string | null {
  for (const k of keys) {
    const v = p[k];
    if (typeof v === 'string' && v) return v;
    if (Array.isArray(v) && typeof v[0] === 'string' && v[0]) return v[0];
  }
  return null;
}

/** One tool's input as a guard action, read through its spec. */
export function toolAction(spec: ToolSpec | undefined, input: Obj, where: string): Action {
  if (!spec) return { kind: 'other' };
  switch (spec.kind) {
    case 'write': {
      let content = pick(input, spec.content, where);
      // Auggie adds a final newline unless told not to
      if (spec.addFinalNewline && input[spec.addFinalNewline] !== false && !content.endsWith('\n'))
        content += '\n';
      return {
        kind: 'write',
        files: [{ path: pick(input, spec.path, where), change: { kind: 'content', content } }],
      };
    }
    case 'edit':
      return editAction(spec, input, where);
    case 'multiedit':
      return multiEditAction(spec, input, where);
    case 'patch':
      return { kind: 'write', files: parseCodexPatch(pick(input, spec.patch, where)) };
    case 'delete': {
      for (const k of spec.paths) {
        const v = input[k];
        if (typeof v === 'string')
          return { kind: 'write', files: [{ path: v, change: { kind: 'delete' } }] };
        if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string'))
          return {
            kind: 'write',
            files: (v as string[]).map((p) => ({ path: p, change: { kind: 'delete' as const } })),
          };
      }
      throw new PayloadError(`${where}.${spec.paths[0]} is not a list of paths`);
    }
    case 'notebook':
      return notebookAction(spec, input, where);
    case 'shell':
      if (spec.orNone && spec.command.every((k) => input[k] === undefined)) {
        if (spec.orNone.some((k) => typeof input[k] === 'string')) return { kind: 'other' };
        throw new PayloadError(
          `${where} has neither ${[...spec.command, ...spec.orNone].join(' nor ')}`,
        );
      }
      return {
        kind: 'shell',
        command: pick(input, spec.command, where),
        ...(spec.detached || flag(input, spec.background) ? { background: true } : {}),
      };
  }
}

/** NotebookEdit: every field checked as Claude Code's own schema checks it (a wrong kind is refused). */
function notebookAction(
  spec: Extract<ToolSpec, { kind: 'notebook' }>,
  input: Obj,
  where: string,
): Action {
  const mode = input.edit_mode ?? 'replace';
  if (mode !== 'replace' && mode !== 'insert' && mode !== 'delete')
    throw new PayloadError(`${where}.edit_mode is not replace, insert or delete`);
  const cellType = input.cell_type ?? null;
  if (cellType !== null && cellType !== 'code' && cellType !== 'markdown')
    throw new PayloadError(`${where}.cell_type is not code or markdown`);
  const cellId = input.cell_id ?? null;
  if (cellId !== null && typeof cellId !== 'string')
    throw new PayloadError(`${where}.cell_id is not a string`);
  const source = pick(input, ['new_source'], where);
  return {
    kind: 'write',
    files: [
      {
        path: pick(input, spec.path, where),
        change: { kind: 'notebook', cellId, source, cellType, mode },
      },
    ],
  };
}

/** An exact-string edit; Auggie's numbered pairs (`old_str_1`, `new_str_1`, ...) read in number order, gaps refused. */
function editAction(spec: Extract<ToolSpec, { kind: 'edit' }>, input: Obj, where: string): Action {
  const path = pick(input, spec.path, where);
  if (
    spec.numbered &&
    pickOpt(input, spec.old) !== null &&
    input[`${spec.old[0]}_1`] !== undefined
  ) {
    throw new PayloadError(
      `${where} has both ${spec.old[0]} and ${spec.old[0]}_1: guard cannot tell which the harness applies`,
    );
  }
  // insert, view: nothing removed
  if (spec.numbered && typeof input.command === 'string' && input.command !== 'str_replace')
    return { kind: 'other' };
  const edits =
    spec.numbered && pickOpt(input, spec.old) === null
      ? numberedEdits(spec, input, where)
      : [
          {
            oldString: pick(input, spec.old, where),
            newString: pick(input, spec.new, where),
            replaceAll: flag(input, spec.all),
          },
        ];
  return { kind: 'write', files: [{ path, change: { kind: 'edits', edits } }] };
}

/** every numbered pair, in number order; a gap or a lone new_str_N could hide an edit from guard: refused */
function numberedEdits(
  spec: Extract<ToolSpec, { kind: 'edit' }>,
  input: Obj,
  where: string,
): StringEdit[] {
  const nums = (prefix: string) =>
    Object.keys(input)
      .flatMap((k) =>
        k.startsWith(`${prefix}_`) && /^\d+$/.test(k.slice(prefix.length + 1))
          ? [Number(k.slice(prefix.length + 1))]
          : [],
      )
      .sort((a, b) => a - b);
  const olds = nums(spec.old[0]!);
  const news = nums(spec.new[0]!);
  if (olds.length === 0)
    throw new PayloadError(`${where} has neither ${spec.old[0]} nor ${spec.old[0]}_1`);
  if (
    olds.some((n, i) => n !== i + 1) ||
    news.length !== olds.length ||
    news.some((n, i) => n !== olds[i])
  ) {
    throw new PayloadError(
      `${where}: the numbered ${spec.old[0]}_N / ${spec.new[0]}_N are not pairs 1..${olds.length}: guard cannot tell which edits the harness applies`,
    );
  }
  return olds.map((i) => ({
    oldString: pick(input, [`${spec.old[0]}_${i}`], where),
    newString: pick(
      input,
      spec.new.map((n) => `${n}_${i}`),
      where,
    ),
    replaceAll: false,
  }));
}

function multiEditAction(
  spec: Extract<ToolSpec, { kind: 'multiedit' }>,
  input: Obj,
  where: string,
): Action {
  const list = input[spec.edits];
  if (!Array.isArray(list) || list.length === 0)
    throw new PayloadError(`${where}.${spec.edits} is not a list of edits`);
  const edits = list.map((e, i) => {
    if (typeof e !== 'object' || e === null)
      throw new PayloadError(`${where}.${spec.edits}[${i}] is not an object`);
    const o = e as Obj;
    const at = `${where}.${spec.edits}[${i}]`;
    return {
      oldString: pick(o, spec.old, at),
      newString: pick(o, spec.new, at),
      replaceAll: flag(o, spec.all),
    };
  });
  return {
    kind: 'write',
    files: [{ path: pick(input, spec.path, where), change: { kind: 'edits', edits } }],
  };
}

/** Claude Code's modes in which nobody is asked. */
const NO_PERSON = new Set(['bypassPermissions', 'dontAsk']);

/** CLAUDE_CODE_ENTRYPOINT values with a person at the prompt (2.1.330: `cli` is the terminal UI, `sdk-cli` is -p). */
const PERSON_ENTRYPOINTS = new Set(['cli', 'claude-vscode', 'claude-desktop']);

/** A row's payload as guard's event. */
export function translateRow(
  row: ClaudeStyleRow,
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): HookEvent {
  const p = parseObject(text, row.label);
  const event =
    pickOpt(p, row.fields.event ?? ['hook_event_name']) ??
    pick(p, (row.fields.event ?? ['hook_event_name']).slice(0, 1), 'payload');
  const phase: Phase | null = row.events.pre.includes(event)
    ? 'pre'
    : row.events.post.includes(event)
      ? 'post'
      : null;
  if (!phase)
    throw new PayloadError(
      `${row.label}: hook_event_name "${event}" is neither ${[...row.events.pre, ...row.events.post].join(' nor ')}`,
    );
  const cwd = folder(p, row.fields.cwd);
  if (!cwd) throw new PayloadError(`payload.${row.fields.cwd[0]} is missing`);
  const tool = pick(p, ['tool_name'], 'payload');
  const input = p.tool_input;
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new PayloadError(
      `payload.tool_input is ${input === undefined ? 'missing' : 'not an object'}`,
    );
  let canAsk = false;
  if (row.ask === 'claude') {
    const mode = pickOpt(p, ['permission_mode']) ?? 'default';
    // A person is at a prompt only in the interactive entry points; `claude -p` is "sdk-cli", and an
    // entry point guard does not know (or none) counts as nobody: the call is denied, the proposal kept.
    canAsk = !NO_PERSON.has(mode) && PERSON_ENTRYPOINTS.has(env.CLAUDE_CODE_ENTRYPOINT ?? '');
  }
  return {
    harness: row.name as HookEvent['harness'],
    phase,
    event,
    tool,
    // the envelope is the harness's, not the model's: the first spelling present wins
    sessionId: pickOpt(p, row.fields.session) ?? pick(p, row.fields.session.slice(0, 1), 'payload'),
    toolCallId: pickOpt(p, row.fields.toolCall),
    cwd,
    canAsk,
    action:
      !Object.hasOwn(row.tools, tool) && row.opaque && tool.startsWith(row.opaque.prefix)
        ? opaqueAction(tool, input as Obj)
        : toolAction(
            Object.hasOwn(row.tools, tool) ? row.tools[tool] : undefined,
            input as Obj,
            'tool_input',
          ),
  };
}

export interface ClaudeAnswerShape {
  pre: string;
  post: string;
  canAsk: boolean;
}

/**
 * Claude's answer shape: a decision in hookSpecificOutput before the tool,
 * additionalContext (to the model) and systemMessage (to the person) after
 * it. `canAsk` false turns an ask into a deny.
 */
export function claudeShaped(
  o: Outcome,
  phase: Phase,
  { pre, post, canAsk }: ClaudeAnswerShape,
): HookAnswer {
  if (o.kind === 'none') return { stdout: '', stderr: '', exitCode: 0 };
  if (o.kind === 'inform' || phase === 'post') {
    const message = o.kind === 'inform' ? o.message : o.reason;
    return {
      stdout: json({
        systemMessage: message,
        hookSpecificOutput: { hookEventName: post, additionalContext: message },
      }),
      stderr: message + '\n',
      exitCode: 0,
    };
  }
  const decision = o.kind === 'ask' && canAsk ? 'ask' : 'deny';
  return {
    stdout: json({
      hookSpecificOutput: {
        hookEventName: pre,
        permissionDecision: decision,
        permissionDecisionReason: o.reason,
      },
    }),
    stderr: o.reason + '\n',
    exitCode: 0,
  };
}

/** The translator of one row. */
export function rowTranslator(row: ClaudeStyleRow): Translator {
  return {
    translate: (text, env) => translateRow(row, text, env),
    // a failure event is answered under its own name (Claude Code rejects an answer naming another event)
    answer: (o, phase, event) =>
      claudeShaped(o, phase, {
        pre: row.answerEvents.pre,
        post:
          phase === 'post' &&
          event !== undefined &&
          /Failure$/.test(event) &&
          row.events.post.includes(event)
            ? event
            : row.answerEvents.post,
        canAsk: row.ask !== 'never',
      }),
  };
}
