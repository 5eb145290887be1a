import { lstat, readFile, stat } from 'node:fs/promises';
import { withAggregateLoss } from '../../core/aggregate.js';
import { classify, withReason, type Classification, type Policy } from '../../core/classify.js';
import { GuardError } from '../../core/errors.js';
import { MODE, fileMode } from '../../core/modes.js';
import { countLines, surelyReplaces } from '../../core/lines.js';
import { changeFacts, heldSide } from '../../core/facts.js';
import { decisionRecords, plan, type Answer, type Plan, type PlanFile } from '../../core/plan.js';
import { parseRecordMessage, type DecisionRecord, type RecordContext } from '../../core/record.js';
import {
  applyInsertLine,
  applyPatchChunks,
  applySearchReplace,
  applyStringEdits,
  type EditResult,
} from '../../harness/edits.js';
import { unmatchedReason, verdict, writeOutcome, type Planned } from '../../harness/decide.js';
import { applyNotebookEdit } from '../../harness/notebook.js';
import { notebookSides } from '../../core/notebook.js';
import type { Change, FileChange, HookEvent } from '../../harness/types.js';
import { READ_CAP, catFileBatch } from '../../git/catfile.js';
import type { SessionMeta } from '../../git/checkpoint.js';
import {
  REFS,
  decisionBatch,
  newRef,
  rejectedCommit,
  type RecordCommit,
} from '../../git/records.js';
import { type Repo } from '../../git/repo.js';
import { numstatPairs } from '../../git/measure.js';
import { sessionPrefix } from '../../git/session.js';
import { askedStep, sessionBases, type SessionBaseOf } from '../../git/session-index.js';
import { apply } from '../../apply/apply.js';
import { laneOf } from '../context.js';
import {
  GATE_FILES,
  NONE,
  PLUGIN_DIRS,
  judgedOf,
  readSessionPolicy,
  sessionEventsOnce,
  type HookResult,
} from './hook-common.js';
import { place } from './hook-place.js';

/**
 * A write tool call (flows/hook/hook.ts): before it runs, read (where each file
 * lands, its session base, the file after the call, measured), plan
 * (core/plan, with no answers: what needs a person is blocked), then apply
 * (the paths checkpointed with the session step, or the refused proposal
 * kept), and the plan mapped onto the harness's allow / ask / deny; after
 * it ran, the person's yes to an asked write is recorded.
 */

/** An edit guard cannot reproduce, and why. */
interface Unmatched {
  rel: string;
  why: string;
}

/** A file of the call, placed inside the repository. */
interface PlacedChange {
  rel: string;
  abs: string;
  change: Change;
}

interface CallFile {
  rel: string;
  abs: string;
  change: Change;
  /** On disk now (null: absent). */
  current: Buffer | null;
  mode: string;
  /** After the call (null: deleted). */
  next: Buffer | null;
  /** The session base (null: absent), and whether it came from the session. */
  base: Buffer | null;
  fromSession: boolean;
  /** A Codex move: the path the content comes from (measured as a rename from it). */
  movedFrom?: string;
  /** The source of a move: judged with its destination, not as a deletion of its own. */
  movedAway?: boolean;
}

async function readDisk(abs: string): Promise<{ content: Buffer | null; mode: string }> {
  const st = await lstat(abs).catch(() => null);
  if (!st) return { content: null, mode: MODE.file };
  if (st.isDirectory())
    throw new GuardError('E_USAGE', `${abs} is a folder`, 'a tool call writes files');
  // a FIFO or a device: reading would block (node then cannot even exit) or never end
  const target = st.isSymbolicLink() ? await stat(abs).catch(() => null) : st;
  if (target && !target.isFile() && !target.isDirectory())
    throw new GuardError(
      'E_USAGE',
      `${abs} is not a regular file (a pipe or a device)`,
      'a tool call writes files',
    );
  return { content: await readFile(abs), mode: fileMode(st.mode) };
}

function applyChange(
  change: Change,
  current: Buffer | null,
  source: Buffer | null,
): EditResult | { ok: true; text: null } {
  const text = (current ?? Buffer.alloc(0)).toString('utf8');
  switch (change.kind) {
    case 'content':
      return { ok: true, text: change.content };
    case 'delete':
      return current === null
        ? { ok: false, why: 'the file to delete does not exist' }
        : { ok: true, text: null };
    case 'edits':
      if (current === null && change.edits.some((e) => e.oldString !== ''))
        return { ok: false, why: 'the file does not exist' };
      return applyStringEdits(text, change.edits);
    case 'blocks':
      return applySearchReplace(text, change.blocks);
    case 'insert':
      return current === null
        ? { ok: false, why: 'the file to insert into does not exist' }
        : applyInsertLine(text, change.line, change.text);
    case 'notebook':
      return current === null
        ? { ok: false, why: 'the notebook does not exist' }
        : applyNotebookEdit(text, change);
    case 'chunks': {
      const from = change.from !== undefined ? source : current;
      if (from === null) return { ok: false, why: 'the file to update does not exist' };
      return applyPatchChunks(from.toString('utf8'), change.chunks);
    }
  }
}

/**
 * The hook's answers to the plan: none. Nobody answers guard before the
 * tool runs, so the plan blocks what needs a person; where a person can
 * answer in the harness, that blocked outcome becomes the harness's `ask`.
 */
const NO_ANSWERS: ReadonlyMap<string, Answer> = new Map();

/** What a write call reads: the files it writes (placed inside the repository, with session bases), the policy, HEAD. */
interface WriteCall {
  repo: Repo;
  root: string;
  e: HookEvent;
  targets: CallFile[];
  /** Edits guard cannot reproduce: the call is refused, the files checkpointed. */
  unmatched: Unmatched[];
  policy: Policy;
  head: string | null;
  /** Policy anchors this call adds (hook-common.ts readSessionPolicy), written with its records. */
  anchors: RecordCommit[];
  ctx: RecordContext;
  now: Date;
  /** Keep what the call leaves with its step (a background command of the session is open). */
  keepResult?: boolean;
}

export interface WriteBeforeCall {
  files: FileChange[];
  auto: boolean;
  now: Date;
  /** A background command of the session is open: keep what the call leaves with its step (holes7). */
  keepResult?: boolean;
}

/** A write tool call, before it runs: read, then plan (core/plan), then apply (records) and the harness outcome. */
export async function writeBefore(
  repo: Repo,
  e: HookEvent,
  { files, auto, now, keepResult }: WriteBeforeCall,
): Promise<HookResult> {
  const notes: string[] = [];
  const w = await readWrite(repo, e, { files, notes, now });
  if (w === null) return { outcome: NONE, notes };
  if (keepResult) w.keepResult = true;
  if (w.unmatched.length > 0) {
    // what the harness would make of it is unknown: keep the files as they are, and refuse
    const cp = await keepCallPaths(w, 'deny', unmatchedRecords(w));
    return {
      outcome: {
        kind: 'deny',
        reason: unmatchedReason(
          w.unmatched.map((u) => `${u.rel}: ${u.why}`),
          cp,
        ),
      },
      checkpoint: cp,
      notes,
    };
  }
  // the source of a move is judged with its destination (a rename), not as a deletion of its own
  const { judged, classified } = await judgeTargets(
    repo,
    w.targets.filter((t) => !t.movedAway),
    w.policy,
  );
  const planFiles = classified.map((c, i) => planFileOf(c, judged[i]!));
  const planned = await plan('hook', planFiles, NO_ANSWERS);
  const v = verdict(planned.files, e.canAsk && !auto);
  const reported: Planned[] = planned.files.map((o, i) => ({
    ...judgedOf(classified[i]!),
    decision: o.decision,
  }));
  if (v === 'deny') {
    const kept = await keepRefused(w, planned, classified);
    const sessionBased = judged.some((t) => t.fromSession && !same(t.base, t.current));
    return { ...writeOutcome(v, reported, { kept, sessionBased }), rejected: kept, notes };
  }
  // ask: what the post event records when the tool ran (the person said yes in the harness): every file taken as it is
  const decisions =
    v === 'ask'
      ? await personTakesAll(planFiles, classified)
      : decisionRecords(planned, classified, { refs: new Map(), blobs: new Map() });
  const cp = await keepCallPaths(w, v, decisions);
  return { ...writeOutcome(v, reported, { checkpoint: cp }), checkpoint: cp, notes };
}

interface ReadWriteCall {
  files: FileChange[];
  notes: string[];
  now: Date;
}

/**
 * Read a write call: where each file lands, what is on disk, the session
 * base, the file after the call. Null (with a note) when guard has no
 * opinion: nothing inside the repository, or a call that changes nothing
 * on disk. An edit guard cannot reproduce is listed in `unmatched`.
 */
async function readWrite(
  repo: Repo,
  e: HookEvent,
  { files, notes, now }: ReadWriteCall,
): Promise<WriteCall | null> {
  const root = repo.root;
  const placed: PlacedChange[] = [];
  for (const f of files) {
    const p = await place(root, e.cwd, f.path);
    if (p.kind === 'outside') notes.push(`${f.path} is outside the repository: no opinion`);
    else placed.push({ rel: p.rel, abs: p.abs, change: f.change });
  }
  if (placed.length === 0) return null;
  const [{ head, policy, anchors }, bases] = await Promise.all([
    readSessionPolicy(repo, { harness: e.harness, session: e.sessionId, now }),
    sessionBases(repo, {
      harness: e.harness,
      session: e.sessionId,
      rels: placed.map((p) => p.rel),
      maxBytes: READ_CAP,
      events: () => sessionEventsOnce(root, sessionPrefix(e.harness, e.sessionId)),
    }),
  ]);
  const unmatched: Unmatched[] = [];
  const targets = await readTargets(root, e.cwd, { placed, bases, unmatched, notes });
  linkMoves(targets);
  if (unmatched.length === 0 && targets.every((t) => same(t.current, t.next))) {
    notes.push('the call changes nothing on disk: no opinion');
    return null;
  }
  const ctx: RecordContext = {
    command: 'hook',
    lane: laneOf(root),
    time: now.toISOString(),
    base: head,
    harness: e.harness,
    session: e.sessionId,
    toolCall: e.toolCallId,
  };
  return { repo, root, e, targets, unmatched, policy, head, anchors, ctx, now };
}

interface TargetsInput {
  placed: PlacedChange[];
  /** Each placed file's session base (null: the session has not touched it here). */
  bases: Array<SessionBaseOf | null>;
  unmatched: Unmatched[];
  notes: string[];
}

/** Each placed file on disk, at its session base and after the call; an edit that cannot be reproduced goes to `unmatched` ("PATH: why"). */
async function readTargets(
  root: string,
  cwd: string,
  { placed, bases, unmatched, notes }: TargetsInput,
): Promise<CallFile[]> {
  const disk = await Promise.all(placed.map((p) => readDisk(p.abs)));
  const targets: CallFile[] = [];
  for (const [i, p] of placed.entries()) {
    const { content: current, mode } = disk[i]!;
    let source: Buffer | null = null;
    let movedFrom: string | undefined;
    if (p.change.kind === 'chunks' && p.change.from !== undefined) {
      const from = await place(root, cwd, p.change.from);
      source = from.kind === 'inside' ? (await readDisk(from.abs)).content : null;
      if (from.kind === 'inside') movedFrom = from.rel;
    }
    const r = applyChange(p.change, current, source);
    // guard cannot tell what the harness makes of it (it may match loosely where guard could not)
    if (!r.ok) unmatched.push({ rel: p.rel, why: r.why });
    else if ('loose' in r && r.loose) notes.push(`${p.rel}: ${r.loose.join('; ')}`);
    let base = current;
    let fromSession = false;
    if (bases[i]) {
      base = bases[i]!.data;
      fromSession = true;
    }
    const next = !r.ok ? current : r.text === null ? null : Buffer.from(r.text, 'utf8');
    targets.push({
      rel: p.rel,
      abs: p.abs,
      change: p.change,
      current,
      mode,
      next,
      base,
      fromSession,
      ...(movedFrom ? { movedFrom } : {}),
    });
  }
  return targets;
}

/**
 * A move is a rename (DESIGN: renames are followed): the destination is
 * measured against the source's session base, and the source is not a
 * deletion of its own.
 */
function linkMoves(targets: CallFile[]): void {
  for (const t of targets) {
    const src =
      t.movedFrom !== undefined
        ? targets.find((x) => x.rel === t.movedFrom && x.change.kind === 'delete')
        : undefined;
    if (!src) continue;
    src.movedAway = true;
    if (t.current === null && !t.fromSession) t.base = src.base;
    else delete t.movedFrom;
  }
}

/**
 * Each file measured against its session base and, where that differs
 * from the disk, against the disk too: the stricter counts. The session
 * base is read from refs the agent can write (`git update-ref` of a forged
 * step whose tree holds a 10-line "base"), so it may only ever make the
 * gate stricter, never looser. Measured in the same diff --no-index.
 */
async function judgeTargets(
  repo: Repo,
  targets: CallFile[],
  policy: Policy,
): Promise<{ judged: CallFile[]; classified: Classification[] }> {
  const drift = targets.map((t) => t.fromSession && !same(t.base, t.current));
  if (!drift.some(Boolean))
    return { judged: targets, classified: (await measureAll(repo, [targets], policy))[0]! };
  const onDisk = targets.map((t) => ({ ...t, base: t.current, fromSession: false }));
  // both measures in the one diff --no-index
  const [classified, againstDisk] = (await measureAll(repo, [targets, onDisk], policy)) as [
    Classification[],
    Classification[],
  ];
  const stricter = targets.map(
    (_, i) => drift[i]! && againstDisk[i]!.needsApproval && !classified[i]!.needsApproval,
  );
  return {
    judged: targets.map((t, i) => (stricter[i] ? onDisk[i]! : t)),
    classified: classified.map((c, i) => (stricter[i] ? againstDisk[i]! : c)),
  };
}

/** One file for the plan: measured against its session base; the disk holds what is there now. */
function planFileOf(c: Classification, t: CallFile): PlanFile {
  return {
    c,
    hunks: [],
    base: t.base,
    proposed: t.next,
    baseMode: t.base === null ? null : t.mode,
    proposedMode: t.next === null ? null : t.mode,
    current: { at: t.current === null ? null : { content: t.current, mode: t.mode } },
  };
}

/** The records of a call put to the person, as the plan makes them when the person takes every file as it is. */
async function personTakesAll(
  files: PlanFile[],
  classified: Classification[],
): Promise<DecisionRecord[]> {
  const answers = new Map<string, Answer>(files.map((f) => [f.c.path, { take: 'all' }]));
  return decisionRecords(await plan('hook', files, answers), classified, {
    refs: new Map(),
    blobs: new Map(),
  });
}

/**
 * Deny: the whole call is refused (harnesses apply it all or nothing), so
 * the proposal of every file is kept in one rejected ref and every record
 * names it. Its parent holds the session bases on top of HEAD and its tree
 * the proposal, so `git diff R^ R` shows what was refused. Returns the ref.
 */
async function keepRefused(
  w: WriteCall,
  planned: Plan,
  classified: Classification[],
): Promise<string> {
  const rejected = newRef(REFS.rejected, w.now);
  const decisions = decisionRecords(planned, classified, {
    refs: new Map(planned.files.map((o) => [o.path, rejected])),
    blobs: new Map(),
  });
  const commits: RecordCommit[] = [
    {
      mark: 2,
      parent: w.head,
      message: 'guard: session base of a refused hook write\n',
      changes: w.targets.map((t) => blobChange(t.rel, t.base, t.mode)),
    },
    rejectedCommit(w.ctx, {
      kept: decisions,
      ref: rejected,
      parent: ':2',
      changes: w.targets.map((t) => blobChange(t.rel, t.next, t.mode)),
    }),
    decisionBatch(w.ctx, decisions, w.now),
    ...w.anchors,
  ];
  await apply({ gate: 'hook', repo: w.repo, now: w.now, records: commits, target: null });
  return rejected;
}

/**
 * Allow or ask: the paths are checkpointed first, as they are on disk now,
 * with the session step that makes it their session base (apply's `paths`
 * target). allow records the decisions now; ask leaves them in the step
 * (`asked`) for the post event, which runs only when the person said yes.
 * Returns the checkpoint id.
 */
async function keepCallPaths(
  w: WriteCall,
  v: 'allow' | 'ask' | 'deny',
  decisions: DecisionRecord[],
): Promise<string> {
  const { e, now } = w;
  const paths = w.targets.map((t) => t.rel);
  const { checkpoint } = await apply({
    gate: 'hook',
    repo: w.repo,
    now,
    records: [
      ...(v !== 'ask' && decisions.length > 0 ? [decisionBatch(w.ctx, decisions, now)] : []),
      ...w.anchors,
    ],
    pack: true,
    target: {
      kind: 'paths',
      files: w.targets.map((t) => ({ rel: t.rel, content: t.current, mode: t.mode })),
      head: w.head,
      lane: w.ctx.lane,
      reason: `before ${e.harness} ${e.tool} ${paths.join(', ')}`,
      session: { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId, tool: e.tool },
      outcome: v,
      ...(v === 'ask' ? { asked: decisions } : {}),
      ...(w.keepResult && v !== 'deny'
        ? { results: w.targets.map((t) => ({ rel: t.rel, content: t.next, mode: t.mode })) }
        : {}),
    },
  });
  return checkpoint!.id;
}

/** The record of a call refused because guard cannot reproduce its edits: blocked, each file as it stands. */
function unmatchedRecords(w: WriteCall): DecisionRecord[] {
  return w.unmatched.map(({ rel, why }) => {
    const t = w.targets.find((x) => x.rel === rel);
    const lines = t?.current ? countLines(t.current) : 0;
    return {
      ...{
        path: rel,
        status: 'modify' as const,
        existingLines: lines,
        linesAdded: 0,
        linesDeleted: 0,
        changeRatio: 0,
        needsApproval: true,
      },
      ...{
        reasons: [`an edit guard cannot reproduce (${why})`],
        rules: ['unmatched-edit'],
        decision: 'blocked' as const,
        decider: 'auto' as const,
      },
    };
  });
}

function same(a: Buffer | null, b: Buffer | null): boolean {
  return a === null ? b === null : b !== null && a.equals(b);
}

function blobChange(
  rel: string,
  content: Buffer | null,
  mode: string,
): RecordCommit['changes'][number] {
  return content === null
    ? { kind: 'delete', path: rel }
    : { kind: 'inline', path: rel, mode, data: content };
}

/**
 * A notebook's two sides as their cells' sources, when both are notebooks: a NotebookEdit's, and a
 * Write's or Edit's of an .ipynb (a cell's source held as one JSON string, as NotebookEdit leaves
 * it, lost whole in one JSON line otherwise); any other target as it is.
 */
function measuredSides(t: CallFile): CallFile {
  if (t.change.kind !== 'notebook' && !/\.ipynb$/i.test(t.rel)) return t;
  if (t.base === null || t.next === null) return t;
  const sides = notebookSides(t.base.toString('utf8'), t.next.toString('utf8'));
  return sides ? { ...t, base: Buffer.from(sides[0]), next: Buffer.from(sides[1]) } : t;
}

/**
 * Each list of targets classified against its bases with HEAD's policy, every list in the one
 * diff --no-index; each list's aggregate loss is its own.
 */
async function measureAll(
  repo: Repo,
  lists: CallFile[][],
  policy: Policy,
): Promise<Classification[][]> {
  // a notebook edit is measured on its cells' sources (harness/notebook.ts), not its JSON
  const targets = lists.flat().map(measuredSides);
  const pairs = targets.flatMap((t, i) =>
    t.base !== null && t.next !== null && !t.base.equals(t.next)
      ? [{ i, base: t.base, next: t.next }]
      : [],
  );
  // a would-be replacement that is empty when whitespace is ignored is a reindent (DESIGN whitespaceOnly)
  const wouldReplace = (counts: Map<number, { deleted: number | null }>) =>
    pairs
      .filter(({ i, base }) => {
        const lines = countLines(base);
        return lines > 0 && (counts.get(i)?.deleted ?? 0) / lines >= policy.config.changeRatio;
      })
      .map((x) => x.i);
  // (one that surely is: its `-w` count runs beside the first, as guard write's does)
  const { counts, whitespaceOnly } = await numstatPairs(repo.gitDir, pairs, wouldReplace, (x) =>
    surelyReplaces(x.base, x.next, policy.config.changeRatio),
  );
  const classified = targets.map((t, i) =>
    classifyTarget(t, counts.get(i), whitespaceOnly.has(i), policy),
  );
  let at = 0;
  return lists.map((l) => {
    at += l.length;
    // the call as a whole (a patch deleting twelve 40-line files) is one change
    return withAggregateLoss(classified.slice(at - l.length, at), policy.config);
  });
}

/** One target's facts and classification, from its counts. */
function classifyTarget(
  t: CallFile,
  n: { added: number | null; deleted: number | null } | undefined,
  whitespaceOnly: boolean,
  policy: Policy,
): Classification {
  let added = 0;
  let deleted = 0;
  if (t.base === null) added = t.next ? countLines(t.next) : 0;
  else if (t.next === null) deleted = countLines(t.base);
  else if (!t.base.equals(t.next)) {
    added = n?.added ?? 0;
    deleted = n?.deleted ?? 0;
  }
  const facts = changeFacts({
    path: t.rel,
    oldPath: t.movedFrom,
    oldMode: t.base === null ? null : t.mode,
    newMode: t.next === null ? null : t.mode,
    old: heldSide(t.base),
    new: heldSide(t.next),
    added,
    deleted,
    // binary by the sniff of the two sides alone, as the hook always judged it
    gitBinary: false,
    zeroBinaryCounts: true,
    contentChanged: !same(t.base, t.next),
    whitespaceOnly,
    maxBytes: policy.config.maxFileBytes,
  });
  let c = classify(facts, policy);
  if ((GATE_FILES.has(t.rel) || PLUGIN_DIRS.test(t.rel)) && !c.rules.includes('protected')) {
    // the agent may not switch off its own gate
    c = {
      ...withReason(c, {
        rule: 'protected',
        text: 'the hook configuration that runs guard (an agent may not change its own gate)',
      }),
      needsApproval: true,
    };
  }
  return c;
}

/** After a write tool ran: a write guard put to the person ran, so the person approved it. */
export async function writeAfter(
  repo: Repo,
  e: HookEvent,
  _meta: SessionMeta,
  now: Date,
): Promise<HookResult> {
  if (!e.toolCallId) return { outcome: NONE, notes: [] };
  const asked = await askedOf(repo, e, e.toolCallId);
  if (!asked?.asked) return { outcome: NONE, notes: [] };
  const ctx: RecordContext = {
    command: 'hook',
    lane: laneOf(repo.root),
    time: now.toISOString(),
    base: null,
    harness: e.harness,
    session: e.sessionId,
    toolCall: e.toolCallId,
  };
  await apply({
    gate: 'hook',
    repo,
    now,
    records: [decisionBatch(ctx, asked.asked as DecisionRecord[], now)],
    target: null,
  });
  return { outcome: NONE, notes: [] };
}

/** The step of the write this tool call put to the person: from the session index (no git process when there is none), else the refs. */
async function askedOf(
  repo: Repo,
  e: HookEvent,
  toolCall: string,
): Promise<{ asked?: unknown[] } | null> {
  const indexed = await askedStep(repo, e.harness, e.sessionId, toolCall);
  if (indexed === undefined) {
    const events = await sessionEventsOnce(repo.root, sessionPrefix(e.harness, e.sessionId));
    return events.find((x) => x.toolCall === toolCall && x.outcome === 'ask') ?? null;
  }
  if (indexed === null) return null;
  const [obj] = await catFileBatch(repo.root, [indexed.commit], READ_CAP);
  const text = obj?.type === 'commit' && obj.data ? obj.data.toString('utf8') : '';
  const body = parseRecordMessage(text.slice(text.indexOf('\n\n') + 2).replace(/\n$/, '')) as {
    toolCall?: unknown;
    outcome?: unknown;
    asked?: unknown;
  } | null;
  return body && body.toolCall === toolCall && body.outcome === 'ask' && Array.isArray(body.asked)
    ? { asked: body.asked }
    : null;
}
