import * as v from 'valibot';
import { GuardError } from './errors.js';
import { HunkMismatch, editedHunk, withEditedHunk, type Hunk } from './hunks.js';
import type { Answer } from './plan.js';
import { STRATEGY_NAMES, type StrategyName } from './strategies.js';

/**
 * Scripted review decisions (`guard review --decisions FILE`):
 *   [{"path", "action": "approve" | "reject", "strategy"?, "hunks"?, "edits"?, "insertAt"?}]
 * `hunks` names hunks by index (0-based, diff order) or by stable id.
 * `edits` replaces hunks by hand, as `e` does at the prompt: each names a
 * hunk and gives the lines the person would leave in the editor (' ', '-',
 * '+' lines); an edited hunk is taken.
 */
export interface ScriptedDecision {
  path: string;
  action: 'approve' | 'reject';
  strategy?: StrategyName;
  hunks?: Array<number | string>;
  edits?: ScriptedEdit[];
  insertAt?: number;
}

/** One hunk edited by hand: the hunk (index or id) and its lines as `e` leaves them. */
export interface ScriptedEdit {
  hunk: number | string;
  lines: string[];
}

const HunkName = v.union([
  v.pipe(v.number(), v.integer(), v.minValue(0)),
  v.pipe(v.string(), v.minLength(1)),
]);
const Line = v.pipe(
  v.string(),
  v.check((l) => !l.includes('\n'), 'a line holds no newline (one string per line)'),
);
const EditSchema = v.strictObject({ hunk: HunkName, lines: v.array(Line) });

const DecisionSchema = v.strictObject({
  path: v.pipe(v.string(), v.minLength(1)),
  action: v.picklist(['approve', 'reject']),
  strategy: v.optional(v.picklist(STRATEGY_NAMES as unknown as StrategyName[])),
  hunks: v.optional(v.array(HunkName)),
  edits: v.optional(v.pipe(v.array(EditSchema), v.minLength(1))),
  insertAt: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
const DecisionsSchema = v.array(DecisionSchema);

function usage(message: string): GuardError {
  return new GuardError(
    'E_USAGE',
    message,
    'decisions are a JSON array of {"path", "action": "approve"|"reject", "strategy"?, "hunks"?, "edits"?, "insertAt"?}',
  );
}

/** Parse and check the shape; `source` names the file in messages. */
export function parseDecisions(text: string, source: string): ScriptedDecision[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw usage(`${source} is not valid JSON: ${(err as Error).message}`);
  }
  const r = v.safeParse(DecisionsSchema, raw);
  if (!r.success) {
    const issue = r.issues[0]!;
    const where = v.getDotPath(issue);
    throw usage(`${source}: ${where ? `"${where}": ` : ''}${issue.message}`);
  }
  const seen = new Set<string>();
  for (const d of r.output) {
    if (seen.has(d.path)) throw usage(`${source}: two decisions for "${d.path}"`);
    seen.add(d.path);
    if (d.action === 'reject' && (d.strategy || d.hunks || d.edits || d.insertAt !== undefined)) {
      throw usage(
        `${source}: "${d.path}": a rejection takes no strategy, hunks, edits or insertAt`,
      );
    }
    if (d.strategy && (d.hunks || d.edits))
      throw usage(`${source}: "${d.path}": give a strategy or hunks and edits, not both`);
    if (d.strategy === 'insert' && d.insertAt === undefined)
      throw usage(`${source}: "${d.path}": strategy insert needs insertAt`);
    if (d.insertAt !== undefined && d.strategy !== 'insert')
      throw usage(`${source}: "${d.path}": insertAt goes with strategy insert`);
  }
  return r.output as ScriptedDecision[];
}

/** Hunk names (indices or ids) to indices; unknown names are usage errors. */
export function resolveHunks(
  path: string,
  names: ReadonlyArray<number | string>,
  hunks: readonly Hunk[],
): Set<number> {
  return new Set(names.map((n) => hunkNamed(path, n, hunks).index));
}

function hunkNamed(path: string, n: number | string, hunks: readonly Hunk[]): Hunk {
  const h = typeof n === 'number' ? hunks[n] : hunks.find((x) => x.id === n);
  if (!h)
    throw usage(
      `"${path}": no hunk ${typeof n === 'number' ? `#${n}` : `with id ${n}`} (the file has ${hunks.length}; guard review NAME --dry-run --json lists them)`,
    );
  return h;
}

/** A file a decision is about: its path, its hunks, and its base as text (what an edited hunk must apply to). */
export interface DecidedFile {
  path: string;
  hunks: readonly Hunk[];
  baseText: string;
}

/**
 * The plan's answer for one scripted decision. Edits go the way of `e` at
 * the prompt (core/hunks editedHunk, then withEditedHunk against the base):
 * the edited hunk stands in for the original and is taken, besides the
 * hunks `hunks` names (without `hunks`: every hunk). An edit that leaves no
 * line, has a line that is not ' ', '-' or '+', or does not apply to the
 * base is a usage error.
 */
export function scriptedAnswer(d: ScriptedDecision, f: DecidedFile): Answer {
  if (d.action === 'reject') return { take: 'none' };
  if (d.strategy)
    return {
      take: 'strategy',
      strategy: d.strategy,
      ...(d.insertAt !== undefined ? { insertAt: d.insertAt } : {}),
    };
  if (!d.hunks && !d.edits) return { take: 'all' };
  if (f.hunks.length === 0)
    throw new GuardError(
      'E_USAGE',
      `"${d.path}" has no hunks to pick or edit (binary, symlink, mode or rename only)`,
      'approve or reject it whole',
    );
  const indices = d.hunks
    ? resolveHunks(d.path, d.hunks, f.hunks)
    : new Set(f.hunks.map((h) => h.index));
  if (!d.edits) return { take: 'hunks', indices };
  let hunks = f.hunks;
  const done = new Set<number>();
  for (const e of d.edits) {
    const h = hunkNamed(d.path, e.hunk, f.hunks);
    const name = typeof e.hunk === 'number' ? `#${e.hunk}` : e.hunk;
    if (done.has(h.index)) throw usage(`"${d.path}": two edits of hunk ${name}`);
    done.add(h.index);
    try {
      const edited = editedHunk(h, e.lines.map((l) => `${l}\n`).join(''));
      if (!edited)
        throw usage(
          `"${d.path}": the edit of hunk ${name} removes every line (to leave the hunk out, do not name it)`,
        );
      hunks = withEditedHunk(f.baseText, hunks, edited);
    } catch (err) {
      if (!(err instanceof HunkMismatch)) throw err;
      throw new GuardError(
        'E_USAGE',
        `"${d.path}": the edit of hunk ${name} does not apply: ${err.message}`,
        "keep the hunk's ' ' and '-' lines as the base has them; change or add only '+' lines",
      );
    }
    indices.add(h.index);
  }
  return { take: 'hunks', indices, hunks };
}
