import type { Classification } from '../core/classify.js';
import type { FilePlan } from '../core/decisions.js';
import { reindex, splitHunk, type Hunk } from '../core/hunks.js';
import { diffPreview, omittedNote } from '../core/preview.js';
import { lineCount } from '../core/strategies.js';
import { describeHeader } from './approval.js';
import { makeColors } from './color.js';
import { openTerminal, type Terminal } from './terminal.js';

/** A file's texts as the prompt and strategies need them. */
export interface FileTexts {
  base: string;
  lane: string;
}

/** The person at the terminal, as the review flow sees them. */
export interface ReviewPrompter {
  /**
   * Decide one file; null = quit (this and the rest are not taken); a plan
   * with `quit` = this file's decisions so far stand, nothing more is asked.
   */
  decide(file: Classification, hunks: Hunk[], texts: () => Promise<FileTexts>): Promise<(FilePlan & { quit?: true }) | null>;
  /** `partly`: of the taken files, those taken in part; `conflicts`: taken files the merge will leave conflicted. */
  confirm(summary: { files: number; taken: number; partly: number; left: number; conflicts: number }): Promise<boolean>;
  close(): void;
}

const HUNK_HELP = `y - take this hunk
n - leave this hunk
a - take this hunk and all later hunks in the file
d - leave this hunk and all later hunks in the file
s - split this hunk into smaller ones
j - leave this hunk undecided, see the next one
k - leave this hunk undecided, see the previous one
q - quit: take nothing more (what is decided so far stands)
? - print this help`;

const FILE_HELP = `r - replace: take the lane's version of the whole file
A - append: keep the old content and add the new content after it
i - insert: put the new content into the old file at a line you choose
x - extend: add the new definitions and class members to the old file (Python, TypeScript/JavaScript)`;

/** Lines of the old file shown for `insert`; a longer file is shown in part, with a note. */
const INSERT_LISTING_MAX = 2000;
const INSERT_TRIES = 3;

/**
 * The interactive review: `git add -p` for a lane. Per file a header (path,
 * status, metrics, reasons), the deletion summary of a replace or delete,
 * then each hunk and its prompt; for a whole-file replace or delete also the
 * strategies (r, A, i, x).
 */
export function openReviewPrompter(color: boolean, maxLines: number): ReviewPrompter | null {
  const term = openTerminal(color);
  if (!term) return null;
  return {
    decide: (file, hunks, texts) => decideFile(term, file, hunks, texts, maxLines),
    confirm: async ({ files, taken, partly, left, conflicts }) => {
      const s = makeColors(term.color);
      const part = partly > 0 ? ` (${partly} in part)` : '';
      term.write(`\n${files} file(s): ${taken} to merge into the main tree${part}, ${left} left out (kept as refs).\n`);
      if (conflicts > 0) term.write(s.red(`${conflicts} of them will conflict with changes made in the main tree since the lane started (conflict markers; exit 1).\n`));
      for (let tries = 0; tries < 5; tries++) {
        const a = await term.ask('Merge now [y,n]? ');
        if (a === null || a.toLowerCase() === 'n') return false;
        if (a.toLowerCase() === 'y') return true;
      }
      return false;
    },
    close: () => term.close(),
  };
}

function header(term: Terminal, c: Classification, maxLines: number, hunks: Hunk[]): void {
  describeHeader(term, c, hunks, maxLines, (name) => name);
}

async function decideFile(
  term: Terminal,
  c: Classification,
  original: Hunk[],
  texts: () => Promise<FileTexts>,
  maxLines: number,
): Promise<(FilePlan & { quit?: true }) | null> {
  const s = makeColors(term.color);
  header(term, c, maxLines, original);
  const strategies = c.status === 'replace' || c.status === 'delete';
  if (original.length === 0) {
    // binary, symlink, mode-only, pure rename: the whole change or nothing
    for (;;) {
      const a = await term.ask(`Take this change [y,n,q,?]? `);
      if (a === null || a === 'q') return null;
      if (a === 'y') return { take: 'all' };
      if (a === 'n') return { take: 'none', decision: 'rejected' };
      term.write('y - take it\nn - leave it\nq - quit\n');
    }
  }
  let hunks = original;
  const chosen = new Map<number, boolean>();
  let i = 0;
  const keys = `y,n,a,d${hunks.length > 1 ? ',j,k' : ''},s,q${strategies ? ',r,A,i,x' : ''},?`;
  for (;;) {
    if (i >= hunks.length || i < 0) {
      const undecided = hunks.findIndex((h) => !chosen.has(h.index));
      if (undecided === -1) break;
      i = undecided;
    }
    const h = hunks[i]!;
    const view = diffPreview([h], maxLines, s);
    term.write(`\n${view.lines.join('\n')}\n`);
    const note = omittedNote(view, 'lines of this hunk');
    if (note) term.write(s.dim(`${note}\n`));
    const a = await term.ask(s.cyan(`(${i + 1}/${hunks.length}) Take this hunk [${keys}]? `));
    if (a === null || a === 'q') {
      // like git add -p: the hunks decided so far stand, nothing more is asked
      return { ...planOf(hunks, chosen), quit: true };
    }
    switch (a) {
      case 'y':
      case 'n':
        chosen.set(h.index, a === 'y');
        i++;
        break;
      case 'a':
      case 'd':
        for (const x of hunks.slice(i)) if (!chosen.has(x.index)) chosen.set(x.index, a === 'a');
        chosen.set(h.index, a === 'a');
        i = hunks.length;
        break;
      case 'j':
        i = i + 1 < hunks.length ? i + 1 : i;
        break;
      case 'k':
        i = i > 0 ? i - 1 : i;
        break;
      case 's': {
        const parts = splitHunk(h);
        if (parts.length === 1) {
          term.write('This hunk cannot be split: it has no unchanged lines between its changes.\n');
          break;
        }
        term.write(`Split into ${parts.length} hunks.\n`);
        const before = hunks.slice(0, i);
        const after = hunks.slice(i + 1);
        const oldChoices = new Map([...chosen].map(([k, v]) => [k, v]));
        const next = reindex([...before, ...parts, ...after]);
        chosen.clear();
        before.forEach((x, n) => {
          if (oldChoices.has(x.index)) chosen.set(next[n]!.index, oldChoices.get(x.index)!);
        });
        after.forEach((x, n) => {
          if (oldChoices.has(x.index)) chosen.set(next[before.length + parts.length + n]!.index, oldChoices.get(x.index)!);
        });
        hunks = next;
        break;
      }
      case 'r':
      case 'A':
      case 'i':
      case 'x':
        if (!strategies) {
          term.write(`${HUNK_HELP}\n`);
          break;
        }
        if (a === 'r') return { take: 'strategy', strategy: 'replace' };
        if (a === 'A') return { take: 'strategy', strategy: 'append' };
        if (a === 'x') return { take: 'strategy', strategy: 'extend' };
        return askInsert(term, await texts());
      default:
        term.write(`${HUNK_HELP}\n${strategies ? `${FILE_HELP}\n` : ''}`);
    }
  }
  return planOf(hunks, chosen);
}

function planOf(hunks: Hunk[], chosen: Map<number, boolean>): FilePlan {
  const indices = new Set([...chosen].filter(([, v]) => v).map(([k]) => k));
  if (indices.size === 0) return { take: 'none', decision: 'rejected' };
  if (indices.size === hunks.length) return { take: 'all' };
  return { take: 'hunks', indices, hunks };
}

/** Show the old file with line numbers; ask where the new content goes (3 tries; empty cancels = rejection). */
export async function askInsert(term: Terminal, texts: FileTexts): Promise<FilePlan> {
  const s = makeColors(term.color);
  const oldLines = texts.base.split('\n');
  if (oldLines[oldLines.length - 1] === '') oldLines.pop();
  const n = lineCount(texts.base);
  const shown = oldLines.slice(0, INSERT_LISTING_MAX);
  term.write('\n');
  shown.forEach((l, k) => term.write(`${s.dim(String(k + 1).padStart(6))}  ${l.replace(/\r$/, '')}\n`));
  if (oldLines.length > shown.length) term.write(s.dim(`  ... ${oldLines.length - shown.length} more lines not shown\n`));
  for (let t = 1; t <= INSERT_TRIES; t++) {
    const a = await term.ask(`Insert the new content after which line (0-${n}; empty cancels)? `);
    if (a === null || a === '') {
      term.write('Cancelled: the change is rejected.\n');
      return { take: 'none', decision: 'rejected' };
    }
    const line = /^\d+$/.test(a) ? Number(a) : NaN;
    if (Number.isInteger(line) && line >= 0 && line <= n) return { take: 'strategy', strategy: 'insert', insertAt: line };
    term.write(`"${a}" is not a line between 0 and ${n}${t < INSERT_TRIES ? ', try again' : ''}.\n`);
  }
  term.write(`No valid line after ${INSERT_TRIES} tries: the change is rejected.\n`);
  return { take: 'none', decision: 'rejected' };
}
