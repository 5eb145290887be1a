import { classify, makePolicy, type Classification } from '../core/classify.js';
import { CONFIG_FILE, DEFAULT_CONFIG, type Config } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { batchMessage, decisionRecord, rejectedMessage, type DecisionRecord, type RecordContext } from '../core/record.js';
import { approvalKey, personApprovals } from '../git/person-approvals.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import { collectFacts } from '../git/changes.js';
import { treeDiff, type DiffEntry } from '../git/diff.js';
import { branchTips, commitTimes, isZeroOid, markVerified, moveBase, shallowCutsIn } from '../git/moves.js';
import { REFS, newRef, proposalChanges, writeRecords, type RecordCommit } from '../git/records.js';
import { configAt, type FlowOptions } from './context.js';

/**
 * The gate on every move of a local branch: `guard verify-refs`, run by the
 * reference-transaction hook in its "prepared" phase (githooks(5)), where a
 * non-zero exit aborts the whole ref transaction. That is every way git moves
 * a branch: commit (with or without --no-verify or HUSKY=0), amend, merge,
 * rebase, reset, `branch -f`, `update-ref`. What the move brings in is
 * measured from the last tip that passed the gate (refs/guard/verified/),
 * through the common ancestor of that tip and the new one: so an amend is
 * measured against the parent of the commit it replaces, a squash against
 * the fork point, and a move made past the hook (hooks off, a hand-written ref
 * file) is measured again with the next one.
 */
export interface RefMove {
  ref: string;
  /** The branch's tip now (git passes zeroes for a forced update, so it is read, not trusted). */
  from: string;
  to: string;
}

export interface MoveVerdict extends RefMove {
  /** What the move was measured against. */
  base: string;
  /** Changes that need a person, with what was decided. */
  files: Array<Classification & { decision: 'approved' | 'rejected' | 'blocked'; decider: 'person' | 'auto'; approvedBy?: 'record' | 'prompt' }>;
  refused: boolean;
  /** Why the move was refused when no file says it (history cut by .git/shallow). */
  reason?: string;
  /** The refused move's content, kept: `git diff REF^ REF`. */
  rejectedRef?: string;
}

export interface GateResult {
  command: 'verify-refs';
  moves: MoveVerdict[];
  refused: number;
}

/** "<old> SP <new> SP <ref> LF", as the hook gets it on stdin. */
export function parseRefLines(text: string): Array<{ old: string; new: string; ref: string }> {
  const out: Array<{ old: string; new: string; ref: string }> = [];
  for (const line of text.split('\n')) {
    const [o, n, ref] = line.trim().split(' ');
    if (o && n && ref) out.push({ old: o, new: n, ref });
  }
  return out;
}

interface Measured {
  base: string;
  entries: DiffEntry[];
  needing: Classification[];
  all: Classification[];
}

/** What moving to `to` from the last verified tip brings in, under the policy committed at the base. */
export async function measureMove(cwd: string, anchor: string, to: string, opts: { brokenConfig?: 'fail' | 'defaults' } = {}): Promise<Measured> {
  const base = await moveBase(cwd, anchor, to);
  const [entries, [configBlob]] = await Promise.all([treeDiff(cwd, base, to), catFileBatch(cwd, [`${base}:${CONFIG_FILE}`], READ_CAP)]);
  let config: Config;
  try {
    config = configAt(base, configBlob?.data);
  } catch (err) {
    // an older tip's broken config must not lock the branch for good: measure that range under the defaults
    if (opts.brokenConfig !== 'defaults' || !(err instanceof GuardError)) throw err;
    config = DEFAULT_CONFIG;
  }
  const policy = makePolicy(config, { bootstrap: configBlob === null });
  const { facts } = await collectFacts(cwd, entries, { maxBytes: Math.min(config.maxFileBytes, READ_CAP) });
  const all = facts.map((f) => classify(f, policy));
  return { base, entries, needing: all.filter((c) => c.needsApproval), all };
}

export interface GateOptions extends FlowOptions {
  auto: boolean;
  /** The hook's stdin. */
  input: string;
}

export async function gateMoves(opts: GateOptions): Promise<GateResult> {
  const cwd = opts.cwd;
  const lines = parseRefLines(opts.input).filter((l) => l.ref.startsWith('refs/heads/') && !isZeroOid(l.new));
  if (lines.length === 0) return { command: 'verify-refs', moves: [], refused: 0 };
  const { heads, verified } = await branchTips(cwd);
  const moves: RefMove[] = [];
  for (const l of lines) {
    // A new branch brings nothing in by itself: what it holds is measured when it moves into another.
    // One that had a verified tip (deleted and made again, or renamed over) is measured from there.
    const from = heads.get(l.ref) ?? verified.get(l.ref);
    if (!from || from === l.new) continue;
    moves.push({ ref: l.ref, from, to: l.new });
  }
  const verdicts: MoveVerdict[] = [];
  const now = opts.now ?? new Date();
  const commits: RecordCommit[] = [];
  let prompt: Awaited<ReturnType<typeof openPrompt>> | undefined;
  try {
    for (const m of moves) {
      // From the tip it has now (a forged verified ref cannot shrink this), and from the last
      // verified tip when that differs (what an earlier move past the gate brought in).
      const cuts = await shallowCutsIn(cwd, m.from, m.to);
      if (cuts.length > 0) {
        // its merge-base is hidden, so it cannot be measured: never let it through
        const reason = `.git/shallow cuts ${cuts[0]!.slice(0, 10)}, which this move brings in, off from its parents: what it changes cannot be measured`;
        verdicts.push({ ...m, base: m.from, files: [], refused: true, reason });
        continue;
      }
      const v0 = verified.get(m.ref);
      const measured = await measureMove(cwd, m.from, m.to);
      if (v0 && v0 !== m.from && v0 !== m.to) {
        const more = await measureMove(cwd, v0, m.to, { brokenConfig: 'defaults' });
        const seen = new Set(measured.needing.map((c) => c.path));
        measured.needing.push(...more.needing.filter((c) => !seen.has(c.path)));
        const known = new Set(measured.entries.map((e) => e.path));
        measured.entries.push(...more.entries.filter((e) => !known.has(e.path)));
      }
      const v: MoveVerdict = { ...m, base: measured.base, files: [], refused: false };
      verdicts.push(v);
      if (measured.needing.length === 0) continue;
      const byPath = new Map(measured.entries.map((e) => [e.path, e]));
      const since = (await commitTimes(cwd, [measured.base])).get(measured.base) ?? 0;
      const approved = await personApprovals(cwd, since);
      for (const c of measured.needing) {
        const blob = byPath.get(c.path)?.newOid ?? null;
        if (approved.has(approvalKey(c.path, blob))) v.files.push({ ...c, decision: 'approved', decider: 'person', approvedBy: 'record' });
        else v.files.push({ ...c, decision: 'blocked', decider: 'auto' });
      }
      const open = v.files.filter((f) => f.decision === 'blocked');
      if (open.length > 0 && !opts.auto) {
        prompt ??= await openPrompt(opts.color);
        if (prompt) {
          // The move is taken whole or not at all: no hunks, no strategies. `q` leaves the rest blocked.
          for (const f of open) {
            const asked = await prompt.ask({ c: f, hunks: [], strategies: [], texts: async () => ({ base: '', lane: '' }) });
            if (asked.answer?.take === 'all') Object.assign(f, { decision: 'approved', decider: 'person', approvedBy: 'prompt' });
            else if (asked.answer) Object.assign(f, { decision: 'rejected', decider: 'person' });
            if (asked.quit) break;
          }
        }
      }
      v.refused = v.files.some((f) => f.decision !== 'approved');
      const ctx: RecordContext = { command: 'verify-refs', lane: null, time: now.toISOString(), base: measured.base };
      const records: DecisionRecord[] = v.files.map((f) => {
        const blob = byPath.get(f.path)?.newOid;
        return decisionRecord(f, f.decision, f.decider, { ...(blob ? { blob } : {}), ...(f.approvedBy === 'record' ? { strategy: 'record' } : {}) });
      });
      if (v.refused) {
        // the whole move, kept: parent the base, tree the refused tip's
        v.rejectedRef = newRef(REFS.rejected, now);
        const first = records.find((r) => r.decision !== 'approved')!;
        const changes = measured.entries.flatMap((e) => proposalChanges(e));
        commits.push({ ref: v.rejectedRef, parent: measured.base, message: rejectedMessage(ctx, { ...first, ref: v.rejectedRef }), changes });
        for (const r of records) if (r.decision !== 'approved') r.ref = v.rejectedRef;
      }
      commits.push({ ref: newRef(REFS.decisions, now), parent: null, message: batchMessage(ctx, records), changes: [] });
    }
  } finally {
    prompt?.close();
  }
  await writeRecords(cwd, commits, now);
  const refused = verdicts.filter((v) => v.refused).length;
  // Only a transaction that goes through moves the verified tips (all or none, like git's).
  if (refused === 0) await Promise.all(verdicts.map((v) => markVerified(cwd, v.ref, v.to)));
  return { command: 'verify-refs', moves: verdicts, refused };
}

/** The person at the terminal (git hooks get the ref list on stdin, so /dev/tty), or null. */
async function openPrompt(color: boolean) {
  const [{ openPrompt: open }, { pagerCommand }, { editorCommand }] = await Promise.all([import('../ui/prompt.js'), import('../git/pager.js'), import('../git/editor.js')]);
  return open({ color, title: (name) => `guard: moving the branch brings in ${name}, which needs approval`, pager: () => pagerCommand(process.cwd()), editor: () => editorCommand(process.cwd()) });
}
