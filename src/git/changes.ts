import type { ChangeFacts } from '../core/classify.js';
import { CONFIG_FILE } from '../core/config.js';
import { changeFacts, type Side } from '../core/facts.js';
import { MODE } from '../core/modes.js';
import { countLines } from '../core/lines.js';
import { NOTEBOOK_PATH, notebookSides } from '../core/notebook.js';
import { catFileRead, type CatFileOptions, type CatResult } from './catfile.js';
import { whitespaceOnlyPaths, type DiffEntry } from './diff.js';

const GITLINK = MODE.gitlink;

export interface FactsAndExtras {
  facts: ChangeFacts[];
  /** Results for `extra` object names, in order (e.g. "HEAD", "HEAD:guard.config.json"). */
  extra: CatResult[];
}

/** What collectFacts reads and how (see collectFacts). */
export interface FactOptions {
  maxBytes: number;
  extra?: readonly string[];
  /** The entries' line counts are still being computed (stagedDiffSplit): read speculatively, then wait. */
  countsReady?: Promise<void>;
  /**
   * The two sides for `git diff` (`['--cached']`, or two commits): files whose
   * deleted lines reach `changeRatio` are then asked whether they changed only
   * in whitespace (one more git process, only when there are such files).
   */
  whitespace?: { range: readonly string[]; changeRatio: number };
  /**
   * Handed each entry's facts (by index) as soon as its objects are read and the counts are
   * in, while git still reads the rest; never those whose whitespace is still to be measured.
   */
  early?: (f: ChangeFacts, index: number) => void;
  /** How the objects are read: a cat-file of their own unless given (guard check: the second round of the policy's, catFileRounds). */
  read?: (names: readonly string[], opts: Omit<CatFileOptions, 'more'>) => Promise<CatResult[]>;
}

/**
 * Turn diff entries into the facts core/classify needs, reading every blob it
 * needs (and any extra objects) through ONE cat-file process.
 */
export async function collectFacts(
  cwd: string,
  entries: readonly DiffEntry[],
  given: FactOptions,
  /**
   * maxBytes, whitespace and early, when they come later than the entries (guard check reads
   * the policy beside the blobs): until then objects are held up to `given.maxBytes` (READ_CAP)
   * and no entry's facts are built.
   */
  later?: Promise<Pick<FactOptions, 'maxBytes' | 'whitespace' | 'early'>>,
): Promise<FactsAndExtras> {
  let opts = given;
  let settled = later === undefined;
  later?.then(
    (l) => {
      opts = { ...given, ...l };
      settled = true;
    },
    () => {},
  );
  const { names, want, infoOnly } = requests(entries, given);
  // entries in order, each once its objects are read (the counts and the options must be in first)
  const facts: ChangeFacts[] = [];
  let counted = given.countsReady === undefined;
  given.countsReady?.then(
    () => (counted = true),
    () => {},
  );
  const build = (objects: readonly CatResult[]) => {
    for (let i = facts.length; counted && settled && i < entries.length; i = facts.length) {
      const w = want[i]!;
      if (Math.max(w.old ?? -1, w.new ?? -1) >= objects.length) return;
      const oldObj = w.old !== undefined ? objects[w.old] : undefined;
      const newObj = w.new !== undefined ? objects[w.new] : undefined;
      const f = entryFacts(entries[i]!, oldObj ?? undefined, newObj ?? undefined, opts.maxBytes);
      facts.push(f);
      // (a notebook is measured again on its cells below: never handed on early)
      if (
        opts.early &&
        !atNotebook(entries[i]!) &&
        !(opts.whitespace && mayBeWhitespaceOnly(f, opts.whitespace.changeRatio))
      )
        opts.early(f, i);
    }
  };
  const read = given.read ?? ((n, o) => catFileRead(cwd, n, o));
  const objects = await read(names, {
    maxBytes: () => opts.maxBytes,
    infoOnly: (i) => infoOnly.has(i),
    onProgress: given.early || later ? build : undefined,
  });
  await Promise.all([given.countsReady, later]);
  [counted, settled] = [true, true];
  build(objects);
  const extraCount = given.extra?.length ?? 0;
  const cells = await measureNotebooks({ entries, objects, want, facts }, opts);
  if (opts.whitespace)
    await markWhitespaceOnly(cwd, entries, facts, { ...opts.whitespace, done: cells });
  return { facts, extra: objects.slice(0, extraCount) };
}

/** The object names cat-file is asked for (the extras first), where each entry's sides are among them, and which need only their size. */
function requests(
  entries: readonly DiffEntry[],
  opts: FactOptions,
): { names: string[]; want: Array<{ old?: number; new?: number }>; infoOnly: Set<number> } {
  const names: string[] = [...(opts.extra ?? [])];
  const want: Array<{ old?: number; new?: number }> = [];
  for (const e of entries) {
    const w: { old?: number; new?: number } = {};
    if (e.oldOid && e.oldMode !== GITLINK) w.old = names.push(e.oldOid) - 1;
    // The new side is read for its size (maxFileBytes), the placeholder rule and symlink targets.
    if (e.newOid && e.newMode !== GITLINK) w.new = names.push(e.newOid) - 1;
    want.push(w);
  }
  // The new side's content matters only where lines were deleted (placeholders) or for a
  // symlink's target; otherwise its size (maxFileBytes) is all that is needed.
  const infoOnly = new Set<number>();
  entries.forEach((e, i) => {
    const n = want[i]!.new;
    // counts not known yet: any change to an existing file may have deleted lines
    const deleted = opts.countsReady ? e.oldOid !== null : e.deleted !== null && e.deleted > 0;
    // guard's own config is always read: the install rule and check's validation need it
    // (a notebook's new side is read whole: its cells are measured, not its JSON's lines)
    if (
      n !== undefined &&
      !deleted &&
      e.newMode !== MODE.symlink &&
      e.path !== CONFIG_FILE &&
      !atNotebook(e)
    )
      infoOnly.add(n);
  });
  return { names, want, infoOnly };
}

function entryFacts(
  e: DiffEntry,
  oldObj: CatResult | undefined,
  newObj: CatResult | undefined,
  maxBytes: number,
): ChangeFacts {
  // cat-file holds an object's data only within maxBytes, and always counts its lines
  // (an object read before maxBytes was known may be held though larger: it is not data then)
  const side = (o: CatResult | undefined): Side | null =>
    o
      ? {
          bytes: o.size,
          lines: o.lines,
          ...(o.data !== undefined && o.size <= maxBytes ? { data: o.data } : {}),
        }
      : null;
  return factsOf(e, [side(oldObj), side(newObj)], maxBytes);
}

/** An entry's facts from its two sides as measured, with git's counts unless `counts` are given. */
function factsOf(
  e: DiffEntry,
  [old, next]: [Side | null, Side | null],
  maxBytes: number,
  counts?: { added: number; deleted: number; whitespaceOnly: boolean },
): ChangeFacts {
  return changeFacts({
    path: e.path,
    oldPath: e.oldPath,
    oldMode: e.oldMode,
    newMode: e.newMode,
    old,
    new: next,
    added: counts ? counts.added : (e.added ?? 0),
    deleted: counts ? counts.deleted : (e.deleted ?? 0),
    ...(counts?.whitespaceOnly ? { whitespaceOnly: true } : {}),
    gitBinary: counts ? false : e.added === null,
    // git's counts stand even where the sniff says binary (a `diff` attribute)
    zeroBinaryCounts: false,
    contentChanged: e.oldOid !== e.newOid,
    maxBytes,
  });
}

interface Read {
  entries: readonly DiffEntry[];
  objects: readonly CatResult[];
  want: ReadonlyArray<{ old?: number; new?: number }>;
  facts: ChangeFacts[];
}

/** A change at a notebook's path, or from one (a notebook renamed is measured as the notebook it was). */
const atNotebook = (e: DiffEntry): boolean =>
  NOTEBOOK_PATH.test(e.path) || (e.oldPath !== undefined && NOTEBOOK_PATH.test(e.oldPath));

/**
 * A notebook whose two sides are both notebooks (and held) is measured on its cells' sources, as
 * the hook measures a Write, Edit or NotebookEdit of it (core/notebook.ts): its JSON's lines say
 * nothing of the work in it (a 150-line cell held as one JSON string is one line; a one-line
 * change to a cell saved as a list of lines rewrites them all). Its facts are replaced here. One
 * more `diff --no-index` (two with a would-be replacement: -w) for all of them, only when a
 * notebook is among the entries; the indexes measured this way are returned.
 */
async function measureNotebooks(
  { entries, objects, want, facts }: Read,
  opts: Pick<FactOptions, 'maxBytes' | 'whitespace'>,
): Promise<Set<number>> {
  const measured = new Set<number>();
  const pairs: Array<{ i: number; base: Buffer; next: Buffer }> = [];
  entries.forEach((e, i) => {
    if (!atNotebook(e) || facts[i]!.binary) return;
    if (e.oldMode === GITLINK || e.newMode === GITLINK || e.newMode === MODE.symlink) return;
    const held = (at: number | undefined) => {
      const o = at === undefined ? null : objects[at];
      return o?.data !== undefined && o.size <= opts.maxBytes ? o.data : null;
    };
    const [oldData, newData] = [held(want[i]!.old), held(want[i]!.new)];
    if (oldData === null || newData === null) return;
    const sides = notebookSides(oldData.toString('utf8'), newData.toString('utf8'));
    if (sides) pairs.push({ i, base: Buffer.from(sides[0]), next: Buffer.from(sides[1]) });
  });
  if (pairs.length === 0) return measured;
  const { numstatPairs } = await import('./measure.js');
  const { tmpdir } = await import('node:os');
  const ratio = opts.whitespace?.changeRatio;
  const { counts, whitespaceOnly } = await numstatPairs(tmpdir(), pairs, (c) =>
    ratio === undefined
      ? []
      : pairs
          .filter(({ i, base }) => {
            const lines = countLines(base);
            return lines > 0 && (c.get(i)?.deleted ?? 0) / lines >= ratio;
          })
          .map((p) => p.i),
  );
  for (const { i, base, next } of pairs) {
    const c = counts.get(i);
    const side = (b: Buffer): Side => ({ bytes: b.length, data: b });
    facts[i] = factsOf(entries[i]!, [side(base), side(next)], opts.maxBytes, {
      added: c?.added ?? 0,
      deleted: c?.deleted ?? 0,
      whitespaceOnly: whitespaceOnly.has(i),
    });
    measured.add(i);
  }
  return measured;
}

/** Would-be replacements that are a reindent: `whitespaceOnly`, measured by git (-b). */
async function markWhitespaceOnly(
  cwd: string,
  entries: readonly DiffEntry[],
  facts: ChangeFacts[],
  /** `done`: entries already measured another way (notebooks, on their cells). */
  { done, ...ws }: { range: readonly string[]; changeRatio: number; done: ReadonlySet<number> },
): Promise<void> {
  const candidates = entries.filter(
    (e, i) => !done.has(i) && mayBeWhitespaceOnly(facts[i]!, ws.changeRatio),
  );
  if (candidates.length === 0) return;
  const only = await whitespaceOnlyPaths(cwd, ws.range, candidates);
  for (const f of facts) if (only.has(f.path)) f.whitespaceOnly = true;
}

/** A would-be replacement of text (changeRatio or more of its lines deleted): git is asked whether only whitespace changed. */
function mayBeWhitespaceOnly(f: ChangeFacts, changeRatio: number): boolean {
  return (
    f.oldMode !== null &&
    f.newMode !== null &&
    f.oldMode !== GITLINK &&
    f.newMode !== GITLINK &&
    f.newMode !== MODE.symlink &&
    !f.binary &&
    f.existingLines > 0 &&
    f.linesDeleted / f.existingLines >= changeRatio
  );
}
