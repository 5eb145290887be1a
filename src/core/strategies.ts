/**
 * How an approved whole-file `replace` or `delete` is written (DESIGN.md,
 * "strategy"). Pure: old and new text in, the content to write out.
 *
 * Line endings: where a strategy must add a line break between old and new
 * content it uses the old file's ("\r\n" if the old text has any, else "\n");
 * it never adds blank lines and never touches the bytes of either side.
 */
import { GuardError } from './errors.js';

export type StrategyName = 'replace' | 'append' | 'insert' | 'extend';

/** In the order a prompt should offer them, each with its one-line help. */
export const STRATEGIES: ReadonlyArray<{ name: StrategyName; description: string }> = [
  { name: 'replace', description: 'take the new content as it is' },
  { name: 'append', description: 'keep the old content and add the new content after it' },
  {
    name: 'insert',
    description: 'keep the old content and insert the new content at a line you pick',
  },
  {
    name: 'extend',
    description:
      'keep the old code and add only the new declarations and class members (Python, TS/JS; else append)',
  },
];

export const STRATEGY_NAMES: readonly StrategyName[] = STRATEGIES.map((s) => s.name);

export function isStrategyName(s: string): s is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(s);
}

export interface StrategyOptions {
  /** The path (its extension picks the parser for `extend`). */
  path?: string;
  /** For `insert`: lines of the old file before the new content, 0..lineCount. */
  insertAt?: number;
}

export interface StrategyResult {
  content: string;
  /** The strategy actually used: `extend` falls back to `append`. */
  strategy: StrategyName;
  /** Set when `extend` fell back to `append`, saying why. */
  warning?: string;
  /** For `extend`: what it added ("foo", "Cls.method", "import x"). */
  added?: string[];
}

/**
 * An `insertAt` outside 0..lineCount (or not an integer). Expected: the
 * prompt asks again; from --decisions it is a usage error.
 */
export class InvalidInsertionPoint extends GuardError {
  readonly lineCount: number;
  constructor(insertAt: unknown, lineCount: number) {
    super(
      'E_USAGE',
      `cannot insert at line ${String(insertAt)}: the file has ${lineCount} lines`,
      `pick a line from 0 to ${lineCount}`,
    );
    this.name = 'InvalidInsertionPoint';
    this.lineCount = lineCount;
  }
}

/** Lines as git counts them: a last line without "\n" counts. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

function eolOf(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** Old, then new; a line break between them only if old lacks a final one. */
export function appendText(oldText: string, newText: string): string {
  if (oldText === '' || newText === '' || oldText.endsWith('\n')) return oldText + newText;
  return oldText + eolOf(oldText) + newText;
}

/**
 * New content placed after the first `insertAt` lines of old (0 = before the
 * first line, lineCount = at the end). A line break is added after the new
 * content if it lacks one and old lines follow, and before it if it goes
 * after an old last line that lacks one.
 */
export function insertText(oldText: string, newText: string, insertAt: number): string {
  const count = lineCount(oldText);
  if (!Number.isInteger(insertAt) || insertAt < 0 || insertAt > count) {
    throw new InvalidInsertionPoint(insertAt, count);
  }
  let cut = 0;
  for (let i = 0; i < insertAt; i++) {
    const nl = oldText.indexOf('\n', cut);
    cut = nl === -1 ? oldText.length : nl + 1;
  }
  const head = oldText.slice(0, cut);
  const tail = oldText.slice(cut);
  if (newText === '') return oldText;
  const eol = eolOf(oldText);
  const before = head !== '' && !head.endsWith('\n') ? eol : '';
  const after = tail !== '' && !newText.endsWith('\n') ? eol : '';
  return head + before + newText + after + tail;
}

/**
 * The content to write for an approved change by `strategy`. Async because
 * `extend` loads its parser on first use; the others do no waiting.
 * Throws InvalidInsertionPoint for `insert` without a valid `insertAt`.
 */
export async function applyStrategy(
  strategy: StrategyName,
  oldText: string,
  newText: string,
  opts: StrategyOptions = {},
): Promise<StrategyResult> {
  switch (strategy) {
    case 'replace':
      return { content: newText, strategy };
    case 'append':
      return { content: appendText(oldText, newText), strategy };
    case 'insert':
      return { content: insertText(oldText, newText, opts.insertAt ?? Number.NaN), strategy };
    case 'extend': {
      const { extend } = await import('./extend.js');
      const r = await extend(opts.path ?? '', oldText, newText);
      if (r.ok) return { content: r.content, strategy, added: r.added };
      return {
        content: appendText(oldText, newText),
        strategy: 'append',
        warning: `extend fell back to append: ${r.reason}`,
      };
    }
  }
}
