import type { Classification } from './classify.js';
import { approvalKind } from './modes.js';

/**
 * The audit trail. Every decision is a JSON object; guard stores them in
 * commit messages under refs/guard/ (see src/git/records.ts), so they travel
 * with the repository and are read back by `guard log` with one for-each-ref.
 */
export type Decision = 'allowed' | 'approved' | 'rejected' | 'blocked';
export type Decider = 'policy' | 'person' | 'auto';

export interface DecisionRecord {
  path: string;
  oldPath?: string;
  status: Classification['status'];
  existingLines: number;
  linesAdded: number;
  linesDeleted: number;
  changeRatio: number;
  needsApproval: boolean;
  reasons: string[];
  /** The rule ids of `reasons` (absent in records made before they existed). */
  rules?: string[];
  decision: Decision;
  decider: Decider;
  strategy?: string;
  hunks?: string[];
  /** The rejected ref holding the refused proposal, when one was made. */
  ref?: string;
  /** The blob that was approved or refused (absent for deletions). */
  blob?: string;
  /**
   * The mode of `blob` when it is not a regular file: a symlink (120000) or a
   * gitlink (160000), as a `Guard-Approved:` trailer names it (core/modes.ts
   * approvalKind). Absent: a regular file, executable or not, or a deletion;
   * so a record made before the mode was kept approves a regular file only.
   */
  mode?: string;
  /** The agent sessions that wrote the path through guard's hooks (git/provenance Origin). */
  writtenBy?: Array<{
    harness: string;
    session: string;
    toolCall: string | null;
    tool: string;
    time: string;
    kind: 'write' | 'shell' | 'session';
    command?: string;
  }>;
}

export interface RecordContext {
  command: string;
  lane: string | null;
  time: string;
  /** The commit the changes were measured against; null before the first commit. */
  base: string | null;
  /** guard hook: the agent harness, its session id and the tool call. */
  harness?: string;
  session?: string;
  toolCall?: string | null;
}

export const RECORD_VERSION = 1;

/**
 * The key of a person's approval in a decision record, or of what a gate
 * measured: kind (approvalKind of the mode: a regular file, a symlink or a
 * gitlink), path and blob (empty for a deletion). A record without a mode
 * approves a regular file only, as a `Guard-Approved:` trailer without one does.
 */
export const approvalKey = (
  path: string,
  blob: string | null | undefined,
  mode?: string | null,
): string => `${approvalKind(blob ? mode : null)}\0${path}\0${blob ?? ''}`;

export function decisionRecord(
  c: Classification,
  decision: Decision,
  decider: Decider,
  extra: Partial<DecisionRecord> = {},
): DecisionRecord {
  const r: DecisionRecord = {
    path: c.path,
    status: c.status,
    existingLines: c.existingLines,
    linesAdded: c.linesAdded,
    linesDeleted: c.linesDeleted,
    changeRatio: c.changeRatio,
    needsApproval: c.needsApproval,
    reasons: c.reasons,
    rules: c.rules,
    decision,
    decider,
    ...extra,
  };
  if (c.oldPath !== undefined) r.oldPath = c.oldPath;
  return r;
}

/** Subject line, then a blank line, then one JSON document. */
export function batchMessage(ctx: RecordContext, decisions: DecisionRecord[]): string {
  const counts = new Map<Decision, number>();
  for (const d of decisions) counts.set(d.decision, (counts.get(d.decision) ?? 0) + 1);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ') || 'no changes';
  const body = { v: RECORD_VERSION, kind: 'decisions', ...ctx, decisions };
  return `guard ${ctx.command}: ${summary}\n\n${JSON.stringify(body)}\n`;
}

/** The message of a rejected commit: one refused change, or every change one run refused. */
export function rejectedMessage(ctx: RecordContext, d: DecisionRecord | DecisionRecord[]): string {
  const decisions = Array.isArray(d) ? d : [d];
  const body = { v: RECORD_VERSION, kind: 'rejected', ...ctx, decisions };
  const first = decisions[0]!;
  const subject =
    decisions.length === 1
      ? `${first.decision} ${first.path} (${first.status})`
      : `${decisions.length} changes refused`;
  return `guard ${ctx.command}: ${subject}\n\n${JSON.stringify(body)}\n`;
}

export interface ParsedRecord {
  v: number;
  kind: string;
  command?: string;
  lane?: string | null;
  time?: string;
  base?: string | null;
  reason?: string;
  decisions?: DecisionRecord[];
}

/** Read back a record message; null when the message is not guard's or was hand-edited. */
export function parseRecordMessage(message: string): ParsedRecord | null {
  const start = message.indexOf('\n\n');
  if (start === -1) return null;
  try {
    const body = JSON.parse(message.slice(start + 2)) as unknown;
    if (
      typeof body !== 'object' ||
      body === null ||
      typeof (body as ParsedRecord).kind !== 'string'
    )
      return null;
    const rec = body as ParsedRecord;
    if (rec.decisions !== undefined && !Array.isArray(rec.decisions)) return null;
    return rec;
  } catch {
    return null;
  }
}

/** A ref name part that sorts by time and is unique under concurrency. */
export function recordId(now: Date, random: string): string {
  const t = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-${random}`;
}
