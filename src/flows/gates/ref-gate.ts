import { withAggregateLoss } from '../../core/aggregate.js';
import { classify, type Classification } from '../../core/classify.js';
import { decisionRecord, type DecisionRecord, type RecordContext } from '../../core/record.js';
import { approvalKind } from '../../core/modes.js';
import { approvalKey, personApprovals } from '../../git/person-approvals.js';
import { READ_CAP } from '../../git/catfile.js';
import { collectFacts } from '../../git/changes.js';
import { treeDiff, type DiffEntry } from '../../git/diff.js';
import {
  anchorDay,
  branchTips,
  commitTimes,
  DROPPED_REFS,
  heldElsewhere,
  packedStill,
  isZeroOid,
  moveBase,
  shallowCutsIn,
  type Settled,
} from '../../git/moves.js';
import { commonDirOf } from '../../git/journal.js';
import { apply, record } from '../../apply/apply.js';
import {
  REFS,
  decisionBatch,
  newRef,
  proposalChanges,
  rejectedCommit,
  type RecordCommit,
} from '../../git/records.js';
import { type FlowOptions } from '../context.js';
import { readPolicy } from '../../git/policy.js';

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
  files: Array<
    Classification & {
      decision: 'approved' | 'rejected' | 'blocked';
      decider: 'person' | 'auto';
      approvedBy?: 'record' | 'prompt';
    }
  >;
  refused: boolean;
  /** Why the move was refused when no file says it (history cut by .git/shallow). */
  reason?: string;
  /** The refused move's content, kept: `git diff REF^ REF`. */
  rejectedRef?: string;
  /** Committed work the move drops (never refused: the tip is kept as `ref`, under refs/guard/dropped/). */
  dropped?: { tip: string; ref: string; files: Classification[]; needsApproval: boolean };
}

export interface GateResult {
  command: 'verify-refs';
  moves: MoveVerdict[];
  refused: number;
  /** Branches deleted whose tip no other ref holds: kept under refs/guard/dropped/. */
  deleted?: Array<{ ref: string; tip: string; kept: string }>;
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

interface MeasureOptions {
  brokenConfig?: 'fail' | 'defaults';
  /** Only these paths (a rename is followed only between them). */
  paths?: readonly string[];
  /** The change-level rule (core/aggregate); off for the step-by-step measure, which is per file. */
  aggregate?: boolean;
  /** Rename similarity for git's -M (default 50%). */
  renameSimilarity?: number;
  /** Measure only the entries of the diff that pass (renames paired over the whole diff first). */
  only?: (e: DiffEntry) => boolean;
}

/** What moving to `to` from the last verified tip brings in, under the policy committed at the base. */
export async function measureMove(
  cwd: string,
  anchor: string,
  to: string,
  opts: MeasureOptions = {},
): Promise<Measured> {
  return measureBetween(cwd, await moveBase(cwd, anchor, to), to, opts);
}

/**
 * `to` against `base`, with check's rules: core/classify per file, then the
 * change as a whole (core/aggregate), bytes as well as lines, reindents
 * measured by git's `diff -b` as check does.
 */
async function measureBetween(
  cwd: string,
  base: string,
  to: string,
  opts: MeasureOptions,
): Promise<Measured> {
  if (opts.paths && opts.paths.length === 0) return { base, entries: [], needing: [], all: [] };
  const [diff, { config, policy }] = await Promise.all([
    treeDiff(cwd, base, to, {
      paths: opts.paths,
      ...(opts.renameSimilarity === undefined ? {} : { renameSimilarity: opts.renameSimilarity }),
    }),
    // an older tip's broken config must not lock the branch for good: that range is measured under the defaults
    readPolicy(cwd, base, { broken: opts.brokenConfig === 'defaults' ? 'defaults' : 'throw' }),
  ]);
  const entries = opts.only ? diff.filter(opts.only) : diff;
  const { facts } = await collectFacts(cwd, entries, {
    maxBytes: Math.min(config.maxFileBytes, READ_CAP),
    whitespace: { range: [base, to], changeRatio: config.changeRatio },
  });
  const each = facts.map((f) => classify(f, policy));
  const all = opts.aggregate === false ? each : withAggregateLoss(each, config);
  return { base, entries, needing: all.filter((c) => c.needsApproval), all };
}

/** git -M similarity (percent) for the day's measure: see where it is used. */
const STEP_RENAME_SIMILARITY = 20;

/** Both names of every entry: the paths a measure restricted to these changes looks at. */
const namesOf = (entries: readonly DiffEntry[]): string[] => [
  ...new Set(entries.flatMap((e) => (e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]))),
];

/**
 * What a move from `from` to `to` drops: the commits reachable from `from`
 * and not from `to` (everything after `base`, their merge-base) changed some
 * paths; where `to` does not have what `from` had there, that committed work
 * is gone from the branch. Measured `from` -> `to` on those paths only, so a
 * rebase that replays every commit loses nothing, and an amend that only
 * adds to the commit it replaces loses nothing. Null when nothing is lost.
 */
async function measureDrop(
  cwd: string,
  from: string,
  to: string,
  base: string,
): Promise<Classification[] | null> {
  const changed = namesOf(await treeDiff(cwd, base, from));
  if (changed.length === 0) return null;
  // a huge range: measure it whole rather than pass thousands of names on a command line
  const m = await measureBetween(cwd, from, to, {
    brokenConfig: 'defaults',
    ...(changed.length <= 1000 ? { paths: changed } : {}),
  });
  const lost = m.all.filter(
    (c) => c.status === 'delete' || c.status === 'replace' || c.linesDeleted > 0,
  );
  return lost.length > 0 ? lost : null;
}

export interface GateOptions extends FlowOptions {
  auto: boolean;
  /** The hook's stdin. */
  input: string;
}

export async function gateMoves(opts: GateOptions): Promise<GateResult> {
  const cwd = opts.cwd;
  const all = parseRefLines(opts.input).filter((l) => l.ref.startsWith('refs/heads/'));
  const lines = all.filter((l) => !isZeroOid(l.new));
  const deletions = all.filter((l) => isZeroOid(l.new) && !l.ref.startsWith('refs/heads/guard/'));
  if (lines.length === 0 && deletions.length === 0)
    return { command: 'verify-refs', moves: [], refused: 0 };
  const tips = await branchTips(cwd);
  const now = opts.now ?? new Date();
  const gate: MoveGate = {
    cwd,
    opts,
    tips,
    now,
    day: anchorDay(now),
    person: personAsked(opts.color),
  };
  const judged: JudgedMove[] = [];
  try {
    for (const m of movesOf(lines, tips)) judged.push(await judgeMove(gate, m));
  } finally {
    gate.person.close();
  }
  const verdicts = judged.map((j) => j.verdict);
  const refused = verdicts.filter((v) => v.refused).length;
  // The hook knows its repository by path only (no rev-parse on every ref update): the records and
  // tips need its root; the common dir is found by files, as the journal finds it.
  const repo = { root: cwd, gitDir: commonDirOf(cwd) ?? cwd, commonDir: commonDirOf(cwd) ?? cwd };
  const records = judged.flatMap((j) => j.commits);
  // Only a transaction that goes through moves the verified tips, anchors and kept tips (all or none, like git's).
  await record('ref-gate', repo, records, { now });
  if (refused > 0) return { command: 'verify-refs', moves: verdicts, refused };
  const stale = [...tips.anchors.values()]
    .flat()
    .filter((a) => a.day !== gate.day)
    .map((a) => a.ref);
  const settled = judged.flatMap((j) => (j.settled ? [j.settled] : []));
  await apply({
    gate: 'ref-gate',
    repo,
    now,
    records: [],
    target: { kind: 'tips', settle: { moves: settled, day: gate.day, stale } },
  });
  // (after the settling, as before: a tip a move just kept as dropped is held elsewhere now)
  const deleted = await deletedBranches(repo, deletions, tips.heads, now);
  await apply({
    gate: 'ref-gate',
    repo,
    now,
    records: [],
    target: { kind: 'tips', dropped: deleted.map((d) => ({ ref: d.kept, tip: d.tip })) },
  });
  return {
    command: 'verify-refs',
    moves: verdicts,
    refused,
    ...(deleted.length > 0 ? { deleted } : {}),
  };
}

type Tips = Awaited<ReturnType<typeof branchTips>>;
type Prompt = NonNullable<Awaited<ReturnType<typeof openPrompt>>>;

/** What every move of one transaction is judged with. */
interface MoveGate {
  cwd: string;
  opts: GateOptions;
  tips: Tips;
  now: Date;
  /** Today, as the day's anchors name it. */
  day: string;
  person: PersonAsked;
}

/** One move judged: its verdict, the record commits it adds, and what settling it writes (none when it cannot be measured). */
interface JudgedMove {
  verdict: MoveVerdict;
  commits: RecordCommit[];
  settled?: Settled;
}

/** The moves of existing branches, from the tip each has now (or its last verified tip). */
function movesOf(
  lines: ReadonlyArray<{ new: string; ref: string }>,
  { heads, verified }: Tips,
): RefMove[] {
  const moves: RefMove[] = [];
  for (const l of lines) {
    // A new branch brings nothing in by itself: what it holds is measured when it moves into another.
    // One that had a verified tip (deleted and made again, or renamed over) is measured from there.
    const from = heads.get(l.ref) ?? verified.get(l.ref);
    if (!from || from === l.new) continue;
    moves.push({ ref: l.ref, from, to: l.new });
  }
  return moves;
}

/** The prompt, opened the first time a move needs a person and shared by the moves after it. */
interface PersonAsked {
  prompt(): Promise<Prompt | null>;
  close(): void;
}

function personAsked(color: boolean): PersonAsked {
  let prompt: Awaited<ReturnType<typeof openPrompt>> | undefined;
  return {
    prompt: async () => (prompt ??= await openPrompt(color)),
    close: () => prompt?.close(),
  };
}

async function judgeMove(gate: MoveGate, m: RefMove): Promise<JudgedMove> {
  const { cwd, now } = gate;
  const cuts = await shallowCutsIn(cwd, m.from, m.to);
  if (cuts.length > 0) {
    // its merge-base is hidden, so it cannot be measured: never let it through
    const reason = `.git/shallow cuts ${cuts[0]!.slice(0, 10)}, which this move brings in, off from its parents: what it changes cannot be measured`;
    return { verdict: { ...m, base: m.from, files: [], refused: true, reason }, commits: [] };
  }
  const { measured, droppedPastGate } = await measureSinceVerified(
    cwd,
    m,
    gate.tips.verified.get(m.ref),
  );
  const today = (gate.tips.anchors.get(m.ref) ?? []).find((a) => a.day === gate.day);
  if (today && today.oid !== m.from && today.oid !== m.to && measured.entries.length > 0)
    await addStepByStep(cwd, m, measured, today.oid);
  const v: MoveVerdict = { ...m, base: measured.base, files: [], refused: false };
  const byPath = new Map(measured.entries.map((e) => [e.path, e]));
  if (measured.needing.length > 0) await decideFiles(gate, v, measured, byPath);
  // Moves that drop commits (reset, a rebase that drops one, branch -f, update-ref back):
  // never refused (the dropped tip is kept, so one command brings it back), always reported.
  const lost =
    v.refused || measured.base === m.from
      ? null
      : await measureDrop(cwd, m.from, m.to, measured.base);
  if (lost)
    v.dropped = {
      tip: m.from,
      ref: newRef(DROPPED_REFS, now),
      files: lost,
      needsApproval: lost.some((c) => c.needsApproval),
    };
  const commits = moveRecords(v, measured, byPath, now);
  // the last approved state: a move a person approved starts today's steps afresh
  const personApproved = v.files.length > 0 && v.files.every((f) => f.decision === 'approved');
  // (a move back needs nothing here: the day's measure starts at the merge-base of this
  // base and the new tip, never at work the branch dropped)
  const anchor = personApproved ? m.to : today ? undefined : m.from;
  const settled: Settled = {
    branchRef: m.ref,
    to: m.to,
    ...(anchor ? { anchor } : {}),
    dropped: [
      ...(v.dropped ? [{ ref: v.dropped.ref, tip: v.dropped.tip }] : []),
      ...(droppedPastGate && droppedPastGate !== v.dropped?.tip
        ? [{ ref: newRef(DROPPED_REFS, now), tip: droppedPastGate }]
        : []),
    ],
  };
  return { verdict: v, commits, settled };
}

/**
 * From the tip the branch has now (a forged verified ref cannot shrink this), and from the last
 * verified tip when that differs (what an earlier move past the gate brought in).
 */
async function measureSinceVerified(
  cwd: string,
  m: RefMove,
  v0: string | undefined,
): Promise<{ measured: Measured; droppedPastGate?: string }> {
  const measured = await measureMove(cwd, m.from, m.to);
  if (!v0 || v0 === m.from || v0 === m.to) return { measured };
  const seen = new Set(measured.needing.map((c) => c.path));
  const more = await measureMove(cwd, v0, m.to, { brokenConfig: 'defaults' });
  measured.needing.push(...more.needing.filter((c) => !seen.has(c.path)));
  const known = new Set(measured.entries.map((e) => e.path));
  measured.entries.push(...more.entries.filter((e) => !known.has(e.path)));
  // the branch went back past every hook: the verified tip is all that still holds what it dropped
  return more.base !== v0 ? { measured, droppedPastGate: v0 } : { measured };
}

/**
 * Step by step: the paths this move changes, measured from the branch as it was at its
 * first move today (or the last tip a person approved), so small steps add up.
 */
async function addStepByStep(
  cwd: string,
  m: RefMove,
  measured: Measured,
  todayOid: string,
): Promise<void> {
  // the whole range, not a pathspec: a rename earlier in the day (big.txt -> b.txt, then b.txt
  // trimmed) is followed only when git sees both names, and from 20% similarity rather than
  // git's 50%: a renamed file trimmed by half is still that file. A step that is not a replace
  // on its own takes less than half of what is left, so from over 50% of the morning's file
  // it cannot fall under 25%. (Padding the renamed file with new lines lowers git's score
  // too: docs/reliability/backdoors.md, still open.)
  const touched = new Set(namesOf(measured.entries));
  const only = (e: DiffEntry) =>
    touched.has(e.path) || (e.oldPath !== undefined && touched.has(e.oldPath));
  // what the day changed elsewhere is not read: only the files this move touches
  const steps = await measureMove(cwd, todayOid, m.to, {
    brokenConfig: 'defaults',
    aggregate: false,
    renameSimilarity: STEP_RENAME_SIMILARITY,
    only,
  });
  for (const c of steps.needing) {
    if (measured.needing.some((n) => n.path === c.path)) continue;
    measured.needing.push({
      ...c,
      reasons: [
        ...c.reasons,
        `measured against ${todayOid.slice(0, 10)}, the branch at its first move today or the last move a person approved: step by step, the commits since add up to this`,
      ],
      rules: [...c.rules, 'step-by-step'],
    });
  }
  const known = new Set(measured.entries.map((e) => e.path));
  measured.entries.push(...steps.entries.filter((e) => !known.has(e.path)));
}

/** Each change that needs a person: approved by a person's record since the base, else asked at the terminal, else blocked. */
async function decideFiles(
  gate: MoveGate,
  v: MoveVerdict,
  measured: Measured,
  byPath: ReadonlyMap<string, DiffEntry>,
): Promise<void> {
  const since = (await commitTimes(gate.cwd, [measured.base])).get(measured.base) ?? 0;
  const approved = await personApprovals(gate.cwd, since);
  for (const c of measured.needing) {
    const e = byPath.get(c.path);
    if (approved.has(approvalKey(c.path, e?.newOid ?? null, e?.newMode)))
      v.files.push({ ...c, decision: 'approved', decider: 'person', approvedBy: 'record' });
    else v.files.push({ ...c, decision: 'blocked', decider: 'auto' });
  }
  const open = v.files.filter((f) => f.decision === 'blocked');
  const prompt = open.length > 0 && !gate.opts.auto ? await gate.person.prompt() : null;
  if (prompt) {
    // The move is taken whole or not at all: no hunks, no strategies. `q` leaves the rest blocked.
    for (const f of open) {
      const asked = await prompt.ask({
        c: f,
        hunks: [],
        strategies: [],
        texts: async () => ({ base: '', lane: '' }),
      });
      if (asked.answer?.take === 'all')
        Object.assign(f, { decision: 'approved', decider: 'person', approvedBy: 'prompt' });
      else if (asked.answer) Object.assign(f, { decision: 'rejected', decider: 'person' });
      if (asked.quit) break;
    }
  }
  v.refused = v.files.some((f) => f.decision !== 'approved');
}

/** The move's decisions (and what it drops) as one batch; a refused move's content kept whole under refs/guard/rejected/. */
function moveRecords(
  v: MoveVerdict,
  measured: Measured,
  byPath: ReadonlyMap<string, DiffEntry>,
  now: Date,
): RecordCommit[] {
  const commits: RecordCommit[] = [];
  const ctx: RecordContext = {
    command: 'verify-refs',
    lane: null,
    time: now.toISOString(),
    base: measured.base,
  };
  const records: DecisionRecord[] = v.files.map((f) => {
    const e = byPath.get(f.path);
    const blob = e?.newOid;
    return decisionRecord(f, f.decision, f.decider, {
      ...(blob ? { blob } : {}),
      // the kind as well (core/record.ts approvalKey): a person's yes to a file is not one to a symlink
      ...(blob && approvalKind(e?.newMode) !== 'file' ? { mode: e!.newMode! } : {}),
      ...(f.approvedBy === 'record' ? { strategy: 'record' } : {}),
    });
  });
  if (v.dropped) {
    const note = `dropped by moving ${v.ref.replace(/^refs\/heads\//, '')} from ${v.from.slice(0, 10)} to ${v.to.slice(0, 10)}; the dropped tip is kept as ${v.dropped.ref}`;
    for (const c of v.dropped.files)
      records.push(
        decisionRecord(
          { ...c, reasons: [...c.reasons, note], rules: [...c.rules, 'dropped'] },
          'allowed',
          'policy',
          { ref: v.dropped.ref },
        ),
      );
  }
  if (v.refused) {
    // the whole move, kept: parent the base, tree the refused tip's
    v.rejectedRef = newRef(REFS.rejected, now);
    const first = records.find((r) => r.decision !== 'approved')!;
    const changes = measured.entries.flatMap((e) => proposalChanges(e));
    commits.push(
      rejectedCommit(ctx, {
        kept: { ...first, ref: v.rejectedRef },
        ref: v.rejectedRef,
        parent: measured.base,
        changes,
      }),
    );
    for (const r of records) if (r.decision !== 'approved') r.ref = v.rejectedRef;
  }
  if (records.length > 0) commits.push(decisionBatch(ctx, records, now));
  return commits;
}

/**
 * A deleted branch drops its commits unless another ref holds them (a rename shows git's hook
 * only the deletion, so a renamed branch's tip is kept too: harmless, and said as "went away"). A
 * loose branch pruned by pack-refs (git gc) is not deleted: git/moves.ts packedStill.
 */
async function deletedBranches(
  repo: { root: string; commonDir: string },
  deletions: ReadonlyArray<{ ref: string }>,
  heads: ReadonlyMap<string, string>,
  now: Date,
): Promise<NonNullable<GateResult['deleted']>> {
  const deleted: NonNullable<GateResult['deleted']> = [];
  const gone = new Set(deletions.map((d) => d.ref));
  for (const d of deletions) {
    const tip = heads.get(d.ref);
    if (!tip || deleted.some((x) => x.ref === d.ref) || packedStill(repo.commonDir, d.ref, tip))
      continue;
    if (await heldElsewhere(repo.root, tip, gone)) continue;
    deleted.push({ ref: d.ref, tip, kept: newRef(DROPPED_REFS, now) });
  }
  return deleted;
}

/** The person at the terminal (git hooks get the ref list on stdin, so /dev/tty), or null. */
async function openPrompt(color: boolean) {
  const { openFilePrompt } = await import('../ask.js');
  return openFilePrompt({
    color,
    root: process.cwd(),
    title: (name) => `guard: moving the branch brings in ${name}, which needs approval`,
  });
}
