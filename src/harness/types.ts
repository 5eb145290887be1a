/**
 * The one shape every harness's hook payload is translated into, and the
 * outcomes guard answers with. Pure data: this folder imports nothing from
 * the rest of guard (DESIGN.md "Layout"), so each translator is tested on
 * payload text alone.
 */
export const HARNESSES = [
  'claude',
  'gemini',
  'codex',
  'cursor',
  'cline',
  'copilot',
  'continue',
  'qwen',
  'auggie',
  'droid',
  'crush',
] as const;
export type HarnessName = (typeof HARNESSES)[number];

export function isHarness(name: string): name is HarnessName {
  return (HARNESSES as readonly string[]).includes(name);
}

/**
 * Harnesses that run guard inside their own process through a JS plugin
 * (src/plugin), not as a hook command; `guard hook` does not take them.
 * (Cline is both: its plugin is the route that works, see cline.ts.)
 */
export const PLUGIN_HARNESSES = ['cline', 'opencode', 'kilo'] as const;
export type PluginHarnessName = (typeof PLUGIN_HARNESSES)[number];

export function isPluginHarness(name: string): name is PluginHarnessName {
  return (PLUGIN_HARNESSES as readonly string[]).includes(name);
}

/** Before the tool runs (may refuse) or after it ran (may only tell). */
export type Phase = 'pre' | 'post';

/** One exact-string replacement (Claude Edit/MultiEdit, Gemini replace, Cursor StrReplace, Copilot edit). */
export interface StringEdit {
  oldString: string;
  newString: string;
  /** Replace every occurrence; otherwise old must occur exactly once. */
  replaceAll: boolean;
}

/** One `@@` chunk of a Codex patch (see codex-patch.ts). */
export interface PatchChunk {
  /** The line after `@@ ` that the chunk is found below, if any. */
  context: string | null;
  oldLines: string[];
  newLines: string[];
  /** `*** End of File`: the chunk sits at the end of the file. */
  endOfFile: boolean;
}

/** One Cline SEARCH/REPLACE block. */
export interface SearchReplace {
  search: string;
  replace: string;
}

/** How to compute a file's content after the tool call from what is on disk. */
export type Change =
  | { kind: 'content'; content: string }
  | { kind: 'edits'; edits: StringEdit[] }
  /** Codex Update File; `from` names the file whose content the chunks apply to (a move). */
  | { kind: 'chunks'; chunks: PatchChunk[]; from?: string }
  | { kind: 'blocks'; blocks: SearchReplace[] }
  /** Cline editor insert_line: `text` inserted before line `line` (1-based) of an existing file. */
  | { kind: 'insert'; line: number; text: string }
  /** Claude NotebookEdit: one cell of an `.ipynb` replaced, inserted or deleted (notebook.ts). */
  | ({ kind: 'notebook' } & NotebookEdit)
  | { kind: 'delete' };

/** One NotebookEdit call's input (Claude Code: cell_id, new_source, cell_type, edit_mode). */
export interface NotebookEdit {
  cellId: string | null;
  source: string;
  cellType: string | null;
  mode: 'replace' | 'insert' | 'delete';
}

export interface FileChange {
  /** As the payload names it: absolute, or relative to the event's cwd. */
  path: string;
  change: Change;
}

export type Action =
  | { kind: 'write'; files: FileChange[] }
  /**
   * `background`: the harness runs it detached (Claude's run_in_background); its post event comes while it still runs.
   * `stillRunning` (a post event only): the harness said it runs on past its post event, though it was not
   * started in the background (Copilot: a sync command past its initial wait).
   */
  | { kind: 'shell'; command: string; background?: boolean; stillRunning?: boolean }
  | { kind: 'other' };

export interface HookEvent {
  harness: HarnessName | PluginHarnessName;
  phase: Phase;
  /** The harness's own event name (PreToolUse, BeforeTool, preToolUse, ...). */
  event: string;
  tool: string;
  /** Never empty: harnesses without one get a stable stand-in (see each translator). */
  sessionId: string;
  toolCallId: string | null;
  /** The folder the tool runs in (absolute). */
  cwd: string;
  /** A person can answer an `ask` here (the harness supports it, and it is not headless or in a bypass mode). */
  canAsk: boolean;
  action: Action;
}

/** What guard decided, before it is put into a harness's protocol. */
export type Outcome =
  /** No opinion: the harness's own rules decide. */
  | { kind: 'none' }
  | { kind: 'ask'; reason: string }
  | { kind: 'deny'; reason: string }
  /** After a tool ran: tell the model and the person (nothing can be refused any more). */
  | { kind: 'inform'; message: string };

/** A harness's answer: what guard prints and how it exits. */
export interface HookAnswer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** A payload guard cannot read: answered in the blocking form, naming what was wrong. */
export class PayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadError';
  }
}

export interface Translator {
  /** Environment the harness set for the hook (read-only; e.g. headless markers). */
  translate(payload: string, env: Readonly<Record<string, string | undefined>>): HookEvent;
  /** The answer for an outcome; `phase` is the event's (pre when the payload could not be read). */
  answer(outcome: Outcome, phase: Phase, event?: string): HookAnswer;
}
