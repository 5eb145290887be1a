import type { Classification } from '../core/classify.js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  HunkMismatch,
  editedHunk,
  hunkEditText,
  reindex,
  splitHunk,
  withEditedHunk,
  type Hunk,
} from '../core/hunks.js';
import type { Answer } from '../core/plan.js';
import { metricsLine } from '../core/preview.js';
import { displayName, plural } from '../core/quote.js';
import { lineCount, type StrategyName } from '../core/strategies.js';
import { makeColors, type Colors } from './color.js';
import { openTerminal, type Terminal } from './terminal.js';

/**
 * The one prompt of check, write and review: `git add -p` for a change that
 * needs a person. Per file a first screen that fits in 24 rows (name, status
 * and metrics, reasons, what would be lost, the first hunk, bounded), then
 * each hunk with the keys that apply to it. `v` shows the whole diff in the
 * person's pager; `e` edits the hunk in the person's editor, as git add -p
 * does; `?` prints the help and nothing else. Ctrl-C throws
 * E_ABORTED (the command stops, nothing changed); `q` stops asking.
 * docs/prompt.md shows it.
 */

/** A file's texts, for the insert listing. */
export interface FileTexts {
  base: string;
  lane: string;
}

export interface PromptFile {
  c: Classification;
  /** Text hunks; [] for a change taken whole or not at all (binary, symlink, mode only). */
  hunks: readonly Hunk[];
  /** Whole-file strategies besides replace that apply (core/plan mergeStrategies). */
  strategies: readonly StrategyName[];
  texts: () => Promise<FileTexts>;
  /** Who wrote it, when an agent session did (git/provenance describeOrigin): shown under the reasons. */
  writtenBy?: readonly string[];
}

/** The person's answer for one file (none: not decided), and whether they asked to stop. */
export interface Asked {
  answer?: Answer;
  quit: boolean;
}

export interface PromptOptions {
  color: boolean;
  /** The title line of a file: "guard: NAME needs approval" in check and write, the name in review. */
  title: (name: string) => string;
  /** The pager command (core.pager, $PAGER, less -R), resolved when first needed. */
  pager: () => Promise<string>;
  /**
   * The editor command for `e` (git/editor editorCommand: GIT_EDITOR,
   * core.editor, VISUAL, EDITOR, vi), resolved when first needed; null when
   * git names none. Left out, it is asked of git in the current directory.
   */
  editor?: () => Promise<string | null>;
}

export interface Prompt {
  ask(file: PromptFile): Promise<Asked>;
  /** Print `text`, then ask a yes/no question; Ctrl-C aborts, anything but y is no. */
  confirm(text: string, question: string): Promise<boolean>;
  close(): void;
}

/** The key of each whole-file strategy: none collides with a hunk key by case. */
export const STRATEGY_KEYS: Record<StrategyName, string> = {
  replace: 'r',
  append: 'b',
  insert: 'i',
  extend: 'x',
};

const HELP: Record<string, string> = {
  y: 'take this hunk',
  n: 'leave this hunk out',
  q: 'quit: ask nothing more (what is not decided is refused, as without a terminal)',
  a: 'take this hunk and all later hunks in the file',
  d: 'leave out this hunk and all later hunks in the file',
  k: 'leave this hunk undecided, see the previous undecided hunk',
  K: 'leave this hunk undecided, see the previous hunk',
  j: 'leave this hunk undecided, see the next undecided hunk',
  J: 'leave this hunk undecided, see the next hunk',
  g: 'select a hunk to go to',
  '/': 'search for a hunk matching the given regex',
  s: 'split the current hunk into smaller hunks',
  e: 'manually edit the current hunk',
  v: 'view the whole diff of this file in your pager (core.pager, $PAGER or less)',
  r: 'replace: take the new version of the whole file',
  b: 'both: keep the old content and append the new content after it',
  i: 'insert: put the new content into the old file at a line you choose',
  x: 'extend: add the new definitions and class members to the old file',
  '?': 'print help',
};

const WHOLE_HELP: Record<string, string> = {
  y: 'take this change',
  n: 'leave it out',
  q: HELP.q!,
  '?': HELP['?']!,
};

/** Where the person is in a file's hunks. */
export interface HunkState {
  at: number;
  /** Per hunk: taken, left out, or undefined (undecided). */
  decided: ReadonlyArray<boolean | undefined>;
  splittable: boolean;
  /** A text hunk a person can edit (not of a deletion: git asks about that whole too). */
  editable?: boolean;
  strategies: readonly StrategyName[];
}

/** The keys offered on a hunk, in git's order: only those that do something here. */
export function offeredKeys(s: HunkState): string[] {
  const n = s.decided.length;
  const undecided = (from: number, to: number) =>
    s.decided.slice(from, to).some((d) => d === undefined);
  const keys = ['y', 'n', 'q', 'a', 'd'];
  if (undecided(0, s.at)) keys.push('k');
  if (s.at > 0) keys.push('K');
  if (undecided(s.at + 1, n)) keys.push('j');
  if (s.at < n - 1) keys.push('J');
  if (n > 1) keys.push('g', '/');
  if (s.splittable) keys.push('s');
  if (s.editable) keys.push('e');
  keys.push('v');
  if (s.strategies.length > 0)
    keys.push('r', ...s.strategies.filter((x) => x !== 'replace').map((x) => STRATEGY_KEYS[x]));
  keys.push('?');
  return keys;
}

/** What git add -p says when a known key does not apply to this hunk. */
const REFUSALS: Record<string, string> = {
  j: 'No next hunk',
  J: 'No next hunk',
  k: 'No previous hunk',
  K: 'No previous hunk',
  s: 'Sorry, cannot split this hunk',
  e: 'Sorry, cannot edit this hunk',
  g: 'No other hunks to goto',
  '/': 'No other hunks to search',
};

export function openPrompt(opts: PromptOptions): Prompt | null {
  const term = openTerminal(opts.color);
  if (!term) return null;
  return {
    ask: (file) => askFile(term, opts, file),
    async confirm(text, question) {
      term.write(text);
      const a = await term.ask(question);
      return a !== null && a.toLowerCase() === 'y';
    },
    close: () => term.close(),
  };
}

function clip(line: string): string {
  const noCr = line.replace(/\r$/, '');
  return noCr.length > 200 ? `${noCr.slice(0, 200)} [...]` : noCr;
}

/** A hunk as diff lines, coloured. */
function hunkLines(h: Hunk, s: Colors, cut = Number.POSITIVE_INFINITY): string[] {
  const out = [s.cyan(h.header)];
  for (const l of h.lines) {
    if (out.length >= cut) break;
    out.push(l[0] === '-' ? s.red(clip(l)) : l[0] === '+' ? s.green(clip(l)) : clip(l));
  }
  return out;
}

/** Name, status and metrics, reasons, and what would be lost: the top of the first screen. Returns the rows written. */
function header(term: Terminal, opts: PromptOptions, f: PromptFile): number {
  const s = makeColors(term.color);
  const { c } = f;
  const rows: string[] = [
    s.bold(opts.title(displayName(c))),
    `  ${s.yellow(c.status)}  ${metricsLine(c)}`,
  ];
  const reasons = c.reasons.slice(0, 4);
  for (const r of reasons) rows.push(`  - ${clip(r)}`);
  if (c.reasons.length > reasons.length)
    rows.push(s.dim(`  - and ${plural(c.reasons.length - reasons.length, 'more reason')}`));
  if (c.binary) rows.push(s.dim('  (binary content is not shown)'));
  const by = f.writtenBy ?? [];
  for (const w of by.slice(0, 3)) rows.push(`  written by ${clip(w)}`);
  if (by.length > 3)
    rows.push(s.dim(`  written by ${plural(by.length - 3, 'more agent call')} (guard log)`));
  const lost = f.hunks.reduce((n, h) => n + h.lines.filter((l) => l[0] === '-').length, 0);
  if (lost > 0 && (c.status === 'replace' || c.status === 'delete' || c.needsApproval)) {
    const where = f.hunks.length > 1 ? `, in ${plural(f.hunks.length, 'hunk')}` : '';
    const of = c.existingLines > 0 ? ` of ${c.existingLines}` : '';
    rows.push(
      `  Would be lost: ${lost}${of} ${lost === 1 && !of ? 'line' : 'lines'}${where}. v shows the whole diff.`,
    );
  }
  term.write(`\n${rows.join('\n')}\n`);
  return rows.length + 1;
}

async function askWhole(term: Terminal): Promise<Asked> {
  for (;;) {
    const a = await term.ask('Take this change [y,n,q,?]? ');
    if (a === null || a === 'q') return { quit: true };
    if (a === 'y') return { answer: { take: 'all' }, quit: false };
    if (a === 'n') return { answer: { take: 'none' }, quit: false };
    term.write(
      Object.entries(WHOLE_HELP)
        .map(([k, v]) => `${k} - ${v}`)
        .join('\n') + '\n',
    );
  }
}

function answerOf(hunks: Hunk[], decided: Array<boolean | undefined>): Answer | undefined {
  if (decided.every((d) => d === undefined)) return undefined;
  const indices = new Set(hunks.filter((_, n) => decided[n] === true).map((h) => h.index));
  if (indices.size === 0) return { take: 'none' };
  // All taken is the proposal, unless one was edited by hand: then the hunks are what is taken.
  if (indices.size === hunks.length && !hunks.some((h) => h.edited)) return { take: 'all' };
  return { take: 'hunks', indices, hunks };
}

/** Where the person is in one file's hunks while it is asked: the hunks (split or edited), each one's answer, the one shown. */
interface Walk {
  readonly f: PromptFile;
  hunks: Hunk[];
  decided: Array<boolean | undefined>;
  /** The hunk asked about; -1 when every hunk is decided. */
  at: number;
  /** Print the hunk before asking (it changed, or the person moved). */
  show: boolean;
}

async function askFile(term: Terminal, opts: PromptOptions, f: PromptFile): Promise<Asked> {
  const s = makeColors(term.color);
  let used = header(term, opts, f);
  if (f.hunks.length === 0) return askWhole(term);
  const w: Walk = {
    f,
    hunks: [...f.hunks],
    decided: f.hunks.map(() => undefined),
    at: 0,
    show: true,
  };
  for (;;) {
    if (w.at === -1) return { answer: answerOf(w.hunks, w.decided)!, quit: false };
    const h = w.hunks[w.at]!;
    if (w.show) {
      showHunk(term, h, used, s);
      used = 0;
    }
    w.show = false;
    const editable = f.c.status !== 'delete' && !f.c.binary && !f.c.symlink;
    const state: HunkState = {
      at: w.at,
      decided: w.decided,
      splittable: splitHunk(h).length > 1,
      editable,
      strategies: f.strategies,
    };
    const keys = offeredKeys(state);
    const a = await term.ask(
      s.cyan(`(${w.at + 1}/${w.hunks.length}) Take this hunk [${keys.join(',')}]? `),
    );
    if (a === null || a === 'q')
      return {
        ...(answerOf(w.hunks, w.decided) ? { answer: answerOf(w.hunks, w.decided)! } : {}),
        quit: true,
      };
    if (!keys.includes(a)) refuse(term, f, keys, a);
    else {
      const done = await act({ term, opts, s, keys }, w, a);
      if (done) return done;
    }
  }
}

/** The hunk on its screen: whatever the header took (`used` rows), the hunk gets the rest of 24 rows (or the terminal's). */
function showHunk(term: Terminal, h: Hunk, used: number, s: Colors): void {
  const budget = Math.max(6, Math.min(term.rows, 24) - used - 3);
  const all = hunkLines(h, s);
  const shown = all.slice(0, budget);
  term.write(`${shown.join('\n')}\n`);
  if (all.length > shown.length)
    term.write(
      s.dim(
        `... ${plural(all.length - shown.length, 'more line')} in this hunk: v shows the whole diff\n`,
      ),
    );
}

/** A key that is not offered here: why, as git says it, or the help. */
function refuse(term: Terminal, f: PromptFile, keys: readonly string[], a: string): void {
  if (a !== '' && REFUSALS[a]) term.write(`${REFUSALS[a]}\n`);
  else if (['r', 'b', 'i', 'x'].includes(a))
    term.write(
      `No whole-file strategies for ${f.c.status === 'delete' ? 'a deletion' : f.c.binary ? 'a binary file' : 'this change'}\n`,
    );
  else term.write(helpText(keys));
}

/** What an offered key is done with, besides the walk. */
interface KeyContext {
  term: Terminal;
  opts: PromptOptions;
  s: Colors;
  keys: readonly string[];
}

/** The whole-file strategy each key takes (i asks where first). */
const STRATEGY_OF_KEY: Record<string, StrategyName> = { r: 'replace', b: 'append', x: 'extend' };

/** Do what an offered key says; the file's answer when the key ends the file, else null (ask again). */
async function act(k: KeyContext, w: Walk, a: string): Promise<Asked | null> {
  const { term, opts, s } = k;
  if (a === '?') term.write(helpText(k.keys));
  else if (a === 'v') await page(term, opts, w.hunks, s);
  else if (a === 'i') return { answer: await askInsert(term, await w.f.texts()), quit: false };
  else if (Object.hasOwn(STRATEGY_OF_KEY, a))
    return { answer: { take: 'strategy', strategy: STRATEGY_OF_KEY[a]! }, quit: false };
  else if (a === 's') splitAt(term, w);
  else if (a === 'e') await editAt(term, opts, w);
  else await move(term, w, a);
  return null;
}

/** The next undecided hunk from `from`, wrapping to the first; -1 when none is left. */
function nextUndecided(w: Walk, from: number): number {
  for (let n = from; n < w.hunks.length; n++) if (w.decided[n] === undefined) return n;
  return w.decided.findIndex((d) => d === undefined);
}

/** y n a d: answer and go on; j k J K g /: go to another hunk. */
async function move(term: Terminal, w: Walk, a: string): Promise<void> {
  switch (a) {
    case 'y':
    case 'n':
      w.decided[w.at] = a === 'y';
      w.at = nextUndecided(w, w.at + 1);
      break;
    case 'a':
    case 'd':
      for (let n = w.at; n < w.hunks.length; n++)
        if (n === w.at || w.decided[n] === undefined) w.decided[n] = a === 'a';
      w.at = nextUndecided(w, w.at + 1);
      break;
    case 'j':
    case 'k': {
      const step = a === 'j' ? 1 : -1;
      let n = w.at + step;
      while (w.decided[n] !== undefined) n += step;
      w.at = n;
      break;
    }
    case 'J':
    case 'K':
      w.at += a === 'J' ? 1 : -1;
      break;
    case 'g':
    case '/': {
      const to = a === 'g' ? await goTo(term, w.hunks) : await search(term, w.hunks, w.at);
      if (to === null) return;
      w.at = to;
      break;
    }
  }
  w.show = true;
}

/** s: the hunk in its smaller hunks, each undecided. */
function splitAt(term: Terminal, w: Walk): void {
  const parts = splitHunk(w.hunks[w.at]!);
  term.write(`Split into ${plural(parts.length, 'hunk')}.\n`);
  w.hunks = reindex([...w.hunks.slice(0, w.at), ...parts, ...w.hunks.slice(w.at + 1)]);
  w.decided = [
    ...w.decided.slice(0, w.at),
    ...parts.map(() => undefined),
    ...w.decided.slice(w.at + 1),
  ];
  w.show = true;
}

/** e: as git, an edit that applies is taken for this hunk at once; one that does not is said, and the original is asked again. */
async function editAt(term: Terminal, opts: PromptOptions, w: Walk): Promise<void> {
  const edited = await editHunk(term, opts, { f: w.f, hunks: w.hunks, h: w.hunks[w.at]! });
  if (edited) {
    w.hunks = edited;
    w.decided[w.at] = true;
    w.at = nextUndecided(w, w.at + 1);
  }
  w.show = true;
}

function helpText(keys: readonly string[]): string {
  return keys.map((k) => `${k} - ${HELP[k]}`).join('\n') + '\n';
}

async function page(
  term: Terminal,
  opts: PromptOptions,
  hunks: readonly Hunk[],
  s: Colors,
): Promise<void> {
  const text = hunks.flatMap((h) => hunkLines(h, s)).join('\n') + '\n';
  const command = await opts.pager();
  if (command === 'cat' || command === '') term.write(text);
  else await term.page(text, command);
}

interface HunkToEdit {
  f: PromptFile;
  hunks: readonly Hunk[];
  h: Hunk;
}

/**
 * `e`: the hunk, with git's guide as # lines, in a temp file; the person's
 * editor; the file read back. The file's hunks with the edited one in place
 * of `h` when it still applies to the base, else null (said why).
 */
async function editHunk(
  term: Terminal,
  opts: PromptOptions,
  { f, hunks, h }: HunkToEdit,
): Promise<Hunk[] | null> {
  const command = opts.editor ? await opts.editor() : null;
  if (!command) {
    // Never take the hunk as if edited: it stays undecided, asked again.
    term.write(
      'Editing is not possible here: git names no editor (`git commit -m` runs its hooks with GIT_EDITOR=:); set core.editor, VISUAL or EDITOR. The hunk is left undecided\n',
    );
    return null;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'guard-edit-'));
  try {
    const file = path.join(dir, 'addp-hunk-edit.diff');
    await writeFile(file, hunkEditText(h));
    if (!(await term.edit(file, command))) {
      term.write('There was a problem with the editor: the hunk is left as it was\n');
      return null;
    }
    const edited = editedHunk(h, await readFile(file, 'utf8'));
    if (!edited) {
      term.write('Every line of the hunk was removed: the edit is aborted\n');
      return null;
    }
    return withEditedHunk((await f.texts()).base, hunks, edited);
  } catch (err) {
    if (!(err instanceof HunkMismatch)) throw err;
    term.write('Your edited hunk does not apply\n');
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Until every flow passes `editor`: git's editor, asked in the current directory. */
async function goTo(term: Terminal, hunks: readonly Hunk[]): Promise<number | null> {
  const rows = hunks.map((h, n) => {
    const first = h.lines.find((l) => l[0] === '-' || l[0] === '+') ?? '';
    return `${String(n + 1).padStart(3)}: ${h.header.replace(/^@@ (.*?) @@.*$/, '$1')} ${clip(first).slice(0, 60)}`;
  });
  term.write(rows.join('\n') + '\n');
  const a = await term.ask('go to which hunk? ');
  const n = a !== null && /^\d+$/.test(a) ? Number(a) : NaN;
  if (Number.isInteger(n) && n >= 1 && n <= hunks.length) return n - 1;
  if (a) term.write(`Invalid number: '${a}'\n`);
  return null;
}

async function search(term: Terminal, hunks: readonly Hunk[], at: number): Promise<number | null> {
  const a = await term.ask('search for regex? ');
  if (!a) return null;
  let re: RegExp;
  try {
    re = new RegExp(a);
  } catch (err) {
    term.write(`Malformed search regexp ${a}: ${(err as Error).message}\n`);
    return null;
  }
  for (let step = 1; step <= hunks.length; step++) {
    const n = (at + step) % hunks.length;
    if (hunks[n]!.lines.some((l) => re.test(l.slice(1)))) return n;
  }
  term.write('No hunk matches the given pattern\n');
  return null;
}

const INSERT_LISTING_MAX = 2000;
const INSERT_TRIES = 3;

/** Show the old file with line numbers; ask where the new content goes (3 tries; empty cancels = rejection). */
export async function askInsert(term: Terminal, texts: FileTexts): Promise<Answer> {
  const s = makeColors(term.color);
  const oldLines = texts.base.split('\n');
  if (oldLines[oldLines.length - 1] === '') oldLines.pop();
  const n = lineCount(texts.base);
  const shown = oldLines.slice(0, INSERT_LISTING_MAX);
  term.write('\n');
  shown.forEach((l, k) => term.write(`${s.dim(String(k + 1).padStart(6))}  ${clip(l)}\n`));
  if (oldLines.length > shown.length)
    term.write(s.dim(`  ... ${plural(oldLines.length - shown.length, 'more line')} not shown\n`));
  for (let t = 1; t <= INSERT_TRIES; t++) {
    const a = await term.ask(`Insert the new content after which line (0-${n}; empty cancels)? `);
    if (a === null || a === '') {
      term.write('Cancelled: the change is rejected.\n');
      return { take: 'none' };
    }
    const line = /^\d+$/.test(a) ? Number(a) : NaN;
    if (Number.isInteger(line) && line >= 0 && line <= n)
      return { take: 'strategy', strategy: 'insert', insertAt: line };
    term.write(
      `"${a}" is not a line between 0 and ${n}${t < INSERT_TRIES ? ', try again' : ''}.\n`,
    );
  }
  term.write(`No valid line after ${INSERT_TRIES} tries: the change is rejected.\n`);
  return { take: 'none' };
}
