import * as v from 'valibot';
import { GuardError } from './errors.js';
import type { Hunk } from './hunks.js';
import { STRATEGY_NAMES, type StrategyName } from './strategies.js';

/**
 * Scripted review decisions (`guard review --decisions FILE`):
 *   [{"path", "action": "approve" | "reject", "strategy"?, "hunks"?, "insertAt"?}]
 * `hunks` names hunks by index (0-based, diff order) or by stable id.
 */
export interface ScriptedDecision {
  path: string;
  action: 'approve' | 'reject';
  strategy?: StrategyName;
  hunks?: Array<number | string>;
  insertAt?: number;
}

const DecisionSchema = v.strictObject({
  path: v.pipe(v.string(), v.minLength(1)),
  action: v.picklist(['approve', 'reject']),
  strategy: v.optional(v.picklist(STRATEGY_NAMES as unknown as StrategyName[])),
  hunks: v.optional(v.array(v.union([v.pipe(v.number(), v.integer(), v.minValue(0)), v.pipe(v.string(), v.minLength(1))]))),
  insertAt: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
const DecisionsSchema = v.array(DecisionSchema);

function usage(message: string): GuardError {
  return new GuardError('E_USAGE', message, 'decisions are a JSON array of {"path", "action": "approve"|"reject", "strategy"?, "hunks"?, "insertAt"?}');
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
    if (d.action === 'reject' && (d.strategy || d.hunks || d.insertAt !== undefined)) {
      throw usage(`${source}: "${d.path}": a rejection takes no strategy, hunks or insertAt`);
    }
    if (d.strategy && d.hunks) throw usage(`${source}: "${d.path}": give a strategy or hunks, not both`);
    if (d.strategy === 'insert' && d.insertAt === undefined) throw usage(`${source}: "${d.path}": strategy insert needs insertAt`);
    if (d.insertAt !== undefined && d.strategy !== 'insert') throw usage(`${source}: "${d.path}": insertAt goes with strategy insert`);
  }
  return r.output as ScriptedDecision[];
}

/** Hunk names (indices or ids) to indices; unknown names are usage errors. */
export function resolveHunks(path: string, names: ReadonlyArray<number | string>, hunks: readonly Hunk[]): Set<number> {
  const out = new Set<number>();
  for (const n of names) {
    const h = typeof n === 'number' ? hunks[n] : hunks.find((x) => x.id === n);
    if (!h) {
      throw usage(`"${path}": no hunk ${typeof n === 'number' ? `#${n}` : `with id ${n}`} (the file has ${hunks.length}; guard review --json lists them)`);
    }
    out.add(h.index);
  }
  return out;
}
