import type { Classification } from '../core/classify.js';
import { deletionSummary, diffPreview, metricsLine, omittedNote, type Bounded, type PreviewHunk } from '../core/preview.js';
import { makeColors } from './color.js';
import type { FileTexts } from './review-prompt.js';
import { openTerminal, type Terminal } from './terminal.js';

/** `approve` takes the change as it is (the replace strategy). */
export type ApprovalAnswer = 'approve' | 'reject' | 'quit' | StrategyAnswer;

/** A whole-file strategy chosen for a replace or delete. */
export interface StrategyAnswer {
  strategy: 'append' | 'insert' | 'extend';
  insertAt?: number;
}

const STRATEGY_HELP = `A - approve by appending: keep the old content and add the new content after it
i - approve by inserting the new content into the old file at a line you choose
x - approve by extending: add the new definitions and class members to the old file
`;

const HELP = `y - approve this change as it is
n - reject it: keep it as a rejected ref and leave it out
q - reject this change and every one after it
? - print this help
`;

/**
 * The prompt of `guard check` and `guard write` for one change that needs a
 * person. Returns null when there is no terminal.
 */
export function openApprovalPrompt(color: boolean) {
  const term = openTerminal(color);
  if (!term) return null;
  return {
    close: () => term.close(),
    /** With `texts`, a replace or delete also offers the strategies append, insert and extend. */
    ask: (c: Classification, hunks: PreviewHunk[], maxLines: number, texts?: () => Promise<FileTexts>) =>
      askOne(term, c, hunks, maxLines, texts),
  };
}

/** A bounded block of preview lines under a title, with a note when it was cut. */
export function writeBlock(term: Terminal, title: string, block: Bounded, what: string): void {
  if (block.lines.length === 0) return;
  const s = makeColors(term.color);
  term.write(`\n  ${title}:\n`);
  for (const l of block.lines) term.write(`  ${l}\n`);
  const note = omittedNote(block, what);
  if (note) term.write(s.dim(`  ${note}\n`));
}

/** The change's name, status, metrics and reasons, then the lines a replace or delete would remove. */
export function describeHeader(term: Terminal, c: Classification, hunks: PreviewHunk[], maxLines: number, title: (name: string) => string): void {
  const s = makeColors(term.color);
  const name = c.oldPath !== undefined ? `${c.oldPath} -> ${c.path}` : c.path;
  term.write(`\n${s.bold(title(name))}\n`);
  term.write(`  ${s.yellow(c.status)}  ${metricsLine(c)}\n`);
  for (const r of c.reasons) term.write(`  - ${r}\n`);
  if (c.binary) term.write(s.dim('  (binary content is not shown)\n'));
  else if (c.status === 'replace' || c.status === 'delete') {
    writeBlock(term, 'Lines that would be deleted', deletionSummary(hunks, maxLines, s), 'deleted lines');
  }
}

export function describeChange(term: Terminal, c: Classification, hunks: PreviewHunk[], maxLines: number): void {
  describeHeader(term, c, hunks, maxLines, (name) => `guard: ${name} needs approval`);
  if (!c.binary && c.status !== 'delete') writeBlock(term, 'Diff', diffPreview(hunks, maxLines, makeColors(term.color)), 'diff lines');
}

async function askOne(
  term: Terminal,
  c: Classification,
  hunks: PreviewHunk[],
  maxLines: number,
  texts?: () => Promise<FileTexts>,
): Promise<ApprovalAnswer> {
  describeChange(term, c, hunks, maxLines);
  const strategies = texts !== undefined && (c.status === 'replace' || c.status === 'delete') && !c.binary && !c.symlink;
  for (;;) {
    const a = await term.ask(`\nApprove ${c.path} [y,n,q${strategies ? ',A,i,x' : ''},?]? `);
    if (a === null) return 'quit';
    if (strategies && texts) {
      if (a === 'A') return { strategy: 'append' };
      if (a === 'x') return { strategy: 'extend' };
      if (a === 'i') {
        const { askInsert } = await import('./review-prompt.js');
        const plan = await askInsert(term, await texts());
        return plan.take === 'strategy' && plan.insertAt !== undefined ? { strategy: 'insert', insertAt: plan.insertAt } : 'reject';
      }
    }
    switch (a.toLowerCase()) {
      case 'y':
        return 'approve';
      case 'n':
        return 'reject';
      case 'q':
        return 'quit';
      default:
        term.write(HELP + (strategies ? STRATEGY_HELP : ''));
    }
  }
}
