import { lstat, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { withAggregateLoss } from '../core/aggregate.js';
import { classify, makePolicy, withReason, type ChangeFacts, type Classification, type Policy } from '../core/classify.js';
import { CONFIG_FILE } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { countLines, looksBinary } from '../core/lines.js';
import { decisionRecords, plan, type Answer, type Plan, type PlanFile } from '../core/plan.js';
import { batchMessage, rejectedMessage, type DecisionRecord, type RecordContext } from '../core/record.js';
import { applyInsertLine, applyPatchChunks, applySearchReplace, applyStringEdits, type Applied } from '../harness/edits.js';
import { lossMessage, verdict, writeOutcome, type Judged, type Planned } from '../harness/decide.js';
import type { Change, FileChange, HookEvent, Outcome } from '../harness/types.js';
import { MODE, resolveInside } from '../worktree/atomic.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import { checkpoint, checkpointId, checkpointMessage, type SessionMeta } from '../git/checkpoint.js';
import { collectFacts } from '../git/changes.js';
import { treeDiff } from '../git/diff.js';
import { faultPoint } from '../git/faults.js';
import { REFS, newRef, packWhenLoose, writeRecords, type RecordCommit } from '../git/records.js';
import { openRepo, type Repo } from '../git/repo.js';
import { numstatFolders } from '../git/measure.js';
import { readSessionEvents, sessionEventCommit, sessionMessage, sessionPrefix } from '../git/session.js';
import { askedStep, noteEvent, sessionBases, shellBefore as indexedShellBefore, type SessionBaseOf } from '../git/session-index.js';
import { parseRecordMessage } from '../core/record.js';
import { configAt, laneOf } from './context.js';
import { coverageLoss, coverageSentences } from './shell-coverage.js';
import { integrityProblems, integritySentence } from './integrity.js';

/**
 * `guard hook`: one tool call of an agent harness, already translated
 * (src/harness). A write is one more front end to the gate's plan: read
 * (where each file lands, its session base, the file after the call,
 * measured), then plan (core/plan, with no answers: what needs a person is
 * blocked), then apply (checkpoint or rejected ref, and the records), and
 * the plan mapped onto the harness's allow (no opinion) / ask / deny by
 * harness/decide.ts. Shell calls get a whole-tree
 * checkpoint before, and a report of what they destroyed after. The flow
 * never writes the work tree: the harness does, or does not.
 *
 * Git processes for a write: rev-parse, cat-file (HEAD and its config) and,
 * when the session touched the files before, cat-file of their session
 * bases (at once; found through the session index, git/session-index.ts,
 * so nothing reads the session's earlier events), one diff --no-index (when
 * a base differs), one fast-import. Nothing scans the work tree.
 */
export interface HookOptions {
  event: HookEvent;
  /** guard's own auto mode (GUARD_AUTO, CI): nobody to ask. */
  auto: boolean;
  now?: Date;
}

export interface HookResult {
  outcome: Outcome;
  /** For the log and tests: what was checkpointed and kept. */
  checkpoint?: string;
  rejected?: string;
  files?: Planned[];
  /** Said on stderr only (e.g. why there was no opinion). */
  notes: string[];
}

const NONE: Outcome = { kind: 'none' };

/** Files that hold the harnesses' hook configuration (flows/agents.ts CONFIG_FILES, plus Claude's local settings). */
const GATE_FILES = new Set([
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.gemini/settings.json',
  '.codex/hooks.json',
  '.codex/config.toml',
  '.cursor/hooks.json',
  '.clinerules/hooks/PreToolUse',
  '.clinerules/hooks/PostToolUse',
  '.cline/plugins/guard.js',
  '.opencode/plugins/guard.js',
  '.kilo/plugins/guard.js',
  '.github/hooks/guard.json',
  // the Claude-style rows (harness/table.ts) and the other files they read hooks from
  '.continue/settings.json',
  '.continue/settings.local.json',
  '.qwen/settings.json',
  '.augment/settings.json',
  '.augment/settings.local.json',
  '.factory/settings.json',
  '.factory/settings.local.json',
  '.factory/hooks.json',
  'crush.json',
  '.crush.json',
]);

/**
 * The folders the plugin harnesses load code from, and their project
 * configs (which can name plugins too): a plugin there runs in the
 * harness with guard's and can rewrite a call's input after guard judged
 * it (Cline's beforeTool `input`, opencode's output.args), so an agent may
 * not add or change one.
 */
const PLUGIN_DIRS = /^(?:\.cline\/plugins\/|\.(?:opencode|kilo|kilocode)\/plugins?\/|(?:\.(?:opencode|kilo|kilocode)\/)?(?:opencode|kilo)\.jsonc?$)/;

export async function runHook(opts: HookOptions): Promise<HookResult> {
  const e = opts.event;
  if (e.action.kind === 'other') return { outcome: NONE, notes: [] };
  const repo = await openRepo(e.cwd).catch((err) => {
    // a harness working outside any repository: not guard's business
    if (err instanceof GuardError && err.code === 'E_NOT_A_REPO') return null;
    throw err;
  });
  if (!repo) return { outcome: NONE, notes: [`${e.cwd} is not in a git work tree: no opinion`] };
  const now = opts.now ?? new Date();
  const meta: SessionMeta = { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
  // the net itself first (file reads only): removed outside guard, it is said before anything runs
  const problems = await integrityProblems(repo.commonDir);
  if (problems.length > 0 && e.phase === 'pre') {
    return { outcome: { kind: 'deny', reason: `${integritySentence(problems)} guard blocks tool calls until a person has looked: tell the user to run guard doctor, then guard recover (or guard init).` }, notes: [] };
  }
  let r: HookResult;
  if (e.action.kind === 'shell') r = await (e.phase === 'pre' ? shellBefore(repo, e, e.action.command, meta, now) : shellAfter(repo, e, e.action.command, meta, now));
  else r = await (e.phase === 'pre' ? writeBefore(repo, e, e.action.files, opts.auto, now) : writeAfter(repo, e, meta, now));
  if (problems.length === 0) return r;
  const said = integritySentence(problems);
  const outcome: Outcome = r.outcome.kind === 'inform' ? { kind: 'inform', message: `${r.outcome.message} ${said}` } : { kind: 'inform', message: `guard: ${said} Tell the user: the safety net is down until guard recover (or guard init) is run.` };
  return { ...r, outcome };
}

/* ------------------------------------------------------------ placing */

type Placed = { kind: 'outside' } | { kind: 'inside'; rel: string; abs: string };

/**
 * Where a payload path lands. An absolute path outside the repository is
 * not guard's business; a path that leaves it through `..` or a symlinked
 * folder, or that points into .git/, is refused (E_PATH_ESCAPE). A symlink
 * at the path itself is written through by the harnesses: its target is
 * what gets measured, and it must stay inside.
 */
export async function place(root: string, cwd: string, p: string): Promise<Placed> {
  const abs = path.resolve(cwd, p);
  const rel = path.relative(root, abs);
  const lexicallyOutside = rel.startsWith('..') || path.isAbsolute(rel);
  if (lexicallyOutside) {
    const realRoot = await realpath(root);
    const viaReal = path.relative(realRoot, abs);
    const outsideReal = viaReal.startsWith('..') || path.isAbsolute(viaReal);
    if (outsideReal) {
      if (p.split(/[\\/]/).includes('..')) throw new GuardError('E_PATH_ESCAPE', `${JSON.stringify(p)} leaves the repository through ".."`, 'name files inside the repository');
      return { kind: 'outside' };
    }
  }
  let inside = await resolveInside(root, abs);
  const st = await lstat(inside.abs).catch(() => null);
  if (st?.isSymbolicLink()) {
    const target = await realpath(inside.abs).catch(() => null);
    if (target === null) throw new GuardError('E_PATH_ESCAPE', `${inside.rel} is a symlink to nothing guard can follow`, 'write the file the link points to by its own name');
    const realRoot = await realpath(root);
    const within = path.relative(realRoot, target);
    if (within.startsWith('..') || path.isAbsolute(within)) throw new GuardError('E_PATH_ESCAPE', `${inside.rel} is a symlink that leads outside the repository`, 'write files inside the repository only');
    inside = await resolveInside(root, within);
  }
  return { kind: 'inside', rel: inside.rel, abs: inside.abs };
}

/* -------------------------------------------------------------- writes */

/** A file of the call, placed inside the repository. */
interface PlacedChange {
  rel: string;
  abs: string;
  change: Change;
}

interface Target {
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
  if (st.isDirectory()) throw new GuardError('E_USAGE', `${abs} is a folder`, 'a tool call writes files');
  return { content: await readFile(abs), mode: st.mode & 0o100 ? MODE.executable : MODE.file };
}

function apply(change: Change, current: Buffer | null, source: Buffer | null): Applied | { ok: true; text: null } {
  const text = (current ?? Buffer.alloc(0)).toString('utf8');
  switch (change.kind) {
    case 'content':
      return { ok: true, text: change.content };
    case 'delete':
      return current === null ? { ok: false, why: 'the file to delete does not exist' } : { ok: true, text: null };
    case 'edits':
      if (current === null && change.edits.some((e) => e.oldString !== '')) return { ok: false, why: 'the file does not exist' };
      return applyStringEdits(text, change.edits);
    case 'blocks':
      return applySearchReplace(text, change.blocks);
    case 'insert':
      return current === null ? { ok: false, why: 'the file to insert into does not exist' } : applyInsertLine(text, change.line, change.text);
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
  targets: Target[];
  policy: Policy;
  head: string | null;
  ctx: RecordContext;
  now: Date;
}

/** A write tool call, before it runs: read, then plan (core/plan), then apply (records) and the harness outcome. */
async function writeBefore(repo: Repo, e: HookEvent, files: FileChange[], auto: boolean, now: Date): Promise<HookResult> {
  const notes: string[] = [];
  const w = await readWrite(repo, e, files, notes, now);
  if (w === null) return { outcome: NONE, notes };
  // the source of a move is judged with its destination (a rename), not as a deletion of its own
  const judged = w.targets.filter((t) => !t.movedAway);
  const classified = await measureAll(repo, judged, w.policy);
  const planFiles = classified.map((c, i) => planFileOf(c, judged[i]!));
  const planned = await plan('hook', planFiles, NO_ANSWERS);
  const v = verdict(planned.files, e.canAsk && !auto);
  const reported: Planned[] = planned.files.map((o, i) => ({ ...judgedOf(classified[i]!), decision: o.decision }));
  if (v === 'deny') {
    const kept = await keepRefused(w, planned, classified);
    const sessionBased = w.targets.some((t) => t.fromSession && !same(t.base, t.current));
    return { ...writeOutcome(v, reported, { kept, sessionBased }), rejected: kept, notes };
  }
  // ask: what the post event records when the tool ran (the person said yes in the harness): every file taken as it is
  const decisions = v === 'ask' ? await personTakesAll(planFiles, classified) : decisionRecords(planned, classified, new Map(), new Map());
  const cp = await checkpointPaths(w, v, decisions);
  return { ...writeOutcome(v, reported, { checkpoint: cp }), checkpoint: cp, notes };
}

/**
 * Read a write call: where each file lands, what is on disk, the session
 * base, the file after the call. Null (with a note) when guard has no
 * opinion: nothing inside the repository, an edit that cannot apply (the
 * harness fails the call itself), or a call that changes nothing on disk.
 */
async function readWrite(repo: Repo, e: HookEvent, files: FileChange[], notes: string[], now: Date): Promise<WriteCall | null> {
  const root = repo.root;
  const placed: PlacedChange[] = [];
  for (const f of files) {
    const p = await place(root, e.cwd, f.path);
    if (p.kind === 'outside') notes.push(`${f.path} is outside the repository: no opinion`);
    else placed.push({ rel: p.rel, abs: p.abs, change: f.change });
  }
  if (placed.length === 0) return null;
  const [bases, [head, configBlob]] = await Promise.all([
    sessionBases(repo, e.harness, e.sessionId, placed.map((p) => p.rel), READ_CAP),
    catFileBatch(root, ['HEAD', `HEAD:${CONFIG_FILE}`], READ_CAP),
  ]);
  const headOid = head && head.type === 'commit' ? head.oid : null;
  const policy = makePolicy(configAt('HEAD', configBlob?.data), { bootstrap: configBlob === null });
  const targets = await readTargets(root, e.cwd, placed, bases);
  if (typeof targets === 'string') {
    notes.push(`${targets}; the tool call will fail by itself: no opinion`);
    return null;
  }
  linkMoves(targets);
  if (targets.every((t) => same(t.current, t.next))) {
    notes.push('the call changes nothing on disk: no opinion');
    return null;
  }
  const ctx: RecordContext = { command: 'hook', lane: laneOf(root), time: now.toISOString(), base: headOid, harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
  return { repo, root, e, targets, policy, head: headOid, ctx, now };
}

/** Each placed file on disk, at its session base and after the call; or why an edit cannot apply ("PATH: why"). */
async function readTargets(root: string, cwd: string, placed: PlacedChange[], bases: Array<SessionBaseOf | null>): Promise<Target[] | string> {
  const disk = await Promise.all(placed.map((p) => readDisk(p.abs)));
  const targets: Target[] = [];
  for (const [i, p] of placed.entries()) {
    const { content: current, mode } = disk[i]!;
    let source: Buffer | null = null;
    let movedFrom: string | undefined;
    if (p.change.kind === 'chunks' && p.change.from !== undefined) {
      const from = await place(root, cwd, p.change.from);
      source = from.kind === 'inside' ? (await readDisk(from.abs)).content : null;
      if (from.kind === 'inside') movedFrom = from.rel;
    }
    const r = apply(p.change, current, source);
    // the harness fails this call itself and tells the model why
    if (!r.ok) return `${p.rel}: ${r.why}`;
    let base = current;
    let fromSession = false;
    if (bases[i]) {
      base = bases[i]!.data;
      fromSession = true;
    }
    targets.push({ rel: p.rel, abs: p.abs, change: p.change, current, mode, next: r.text === null ? null : Buffer.from(r.text, 'utf8'), base, fromSession, ...(movedFrom ? { movedFrom } : {}) });
  }
  return targets;
}

/**
 * A move is a rename (DESIGN: renames are followed): the destination is
 * measured against the source's session base, and the source is not a
 * deletion of its own.
 */
function linkMoves(targets: Target[]): void {
  for (const t of targets) {
    const src = t.movedFrom !== undefined ? targets.find((x) => x.rel === t.movedFrom && x.change.kind === 'delete') : undefined;
    if (!src) continue;
    src.movedAway = true;
    if (t.current === null && !t.fromSession) t.base = src.base;
    else delete t.movedFrom;
  }
}

/** One file for the plan: measured against its session base; the disk holds what is there now. */
function planFileOf(c: Classification, t: Target): PlanFile {
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
async function personTakesAll(files: PlanFile[], classified: Classification[]): Promise<DecisionRecord[]> {
  const answers = new Map<string, Answer>(files.map((f) => [f.c.path, { take: 'all' }]));
  return decisionRecords(await plan('hook', files, answers), classified, new Map(), new Map());
}

/**
 * Deny: the whole call is refused (harnesses apply it all or nothing), so
 * the proposal of every file is kept in one rejected ref and every record
 * names it. Its parent holds the session bases on top of HEAD and its tree
 * the proposal, so `git diff R^ R` shows what was refused. Returns the ref.
 */
async function keepRefused(w: WriteCall, planned: Plan, classified: Classification[]): Promise<string> {
  const rejected = newRef(REFS.rejected, w.now);
  const decisions = decisionRecords(planned, classified, new Map(planned.files.map((o) => [o.path, rejected])), new Map());
  const commits: RecordCommit[] = [
    { mark: 2, parent: w.head, message: 'guard: session base of a refused hook write\n', changes: w.targets.map((t) => blobChange(t.rel, t.base, t.mode)) },
    { ref: rejected, parent: ':2', message: rejectedMessage(w.ctx, decisions), changes: w.targets.map((t) => blobChange(t.rel, t.next, t.mode)) },
    { ref: newRef(REFS.decisions, w.now), parent: null, message: batchMessage(w.ctx, decisions), changes: [] },
  ];
  await writeRecords(w.root, commits, w.now);
  return rejected;
}

/**
 * Allow or ask: the paths are checkpointed first, as they are on disk now,
 * with the session step that makes it their session base. allow records
 * the decisions now; ask leaves them in the step (`asked`) for the post
 * event, which runs only when the person said yes. Returns the checkpoint id.
 */
async function checkpointPaths(w: WriteCall, v: 'allow' | 'ask', decisions: DecisionRecord[]): Promise<string> {
  const { e, now } = w;
  const cpRef = newRef(REFS.checkpoints, now);
  const cpId = checkpointId(cpRef);
  const paths = w.targets.map((t) => t.rel);
  const reason = `before ${e.harness} ${e.tool} ${paths.join(', ')}`;
  const cpMessage = checkpointMessage(
    { root: w.root },
    { reason, command: 'hook', lane: w.ctx.lane, paths, session: { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId } },
    { now, head: w.head, index: null, skipped: [] },
  );
  const step = sessionMessage({
    ...{ harness: e.harness, session: e.sessionId, toolCall: e.toolCallId, tool: e.tool, phase: 'pre', kind: 'write' },
    ...{ checkpoint: cpId, paths, worktree: w.root, time: now.toISOString(), outcome: v },
    ...(v === 'ask' ? { asked: decisions } : {}),
  });
  const stepRef = newRef(sessionPrefix(e.harness, e.sessionId), now);
  const commits: RecordCommit[] = [
    { ref: cpRef, mark: 1, parent: w.head, message: cpMessage, changes: w.targets.map((t) => blobChange(t.rel, t.current, t.mode)) },
    { ref: stepRef, parent: ':1', message: step, changes: [] },
  ];
  if (v === 'allow') commits.push({ ref: newRef(REFS.decisions, now), parent: null, message: batchMessage(w.ctx, decisions), changes: [] });
  // indexed first, by the step's ref name (its tree is the checkpoint's): killed before the
  // records exist, the entry names a ref that is not there, and the next call rebuilds the index
  const at = { commit: stepRef, checkpoint: cpId, time: now.toISOString(), ref: stepRef };
  await noteEvent(w.repo, { harness: e.harness, session: e.sessionId, worktree: w.root, paths, kind: 'write', phase: 'pre', toolCall: e.toolCallId, outcome: v }, at, at);
  faultPoint('hook:before-record');
  await writeRecords(w.root, commits, now);
  faultPoint('hook:after-record');
  await packWhenLoose(w.repo.commonDir, w.root);
  return cpId;
}

function same(a: Buffer | null, b: Buffer | null): boolean {
  return a === null ? b === null : b !== null && a.equals(b);
}

function blobChange(rel: string, content: Buffer | null, mode: string): RecordCommit['changes'][number] {
  return content === null ? { kind: 'delete', path: rel } : { kind: 'inline', path: rel, mode, data: content };
}

/** Each target classified against its session base with HEAD's policy: one diff --no-index for all of them. */
async function measureAll(repo: Repo, targets: Target[], policy: Policy): Promise<Classification[]> {
  const pairs = targets.map((t, i) => ({ i, t })).filter(({ t }) => t.base !== null && t.next !== null && !t.base.equals(t.next));
  const counts = new Map<number, { added: number | null; deleted: number | null }>();
  const whitespaceOnly = new Set<number>();
  if (pairs.length > 0) {
    // base and proposal side by side in a temp folder: one diff --no-index for every file
    const dir = path.join(repo.gitDir, `guard-hook-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(path.join(dir, 'a'), { recursive: true });
      await mkdir(path.join(dir, 'b'), { recursive: true });
      await Promise.all(pairs.flatMap(({ i, t }) => [writeFile(path.join(dir, 'a', String(i)), t.base!), writeFile(path.join(dir, 'b', String(i)), t.next!)]));
      for (const [name, n] of await numstatFolders(dir)) counts.set(Number(name), n);
      // a would-be replacement that is empty when whitespace is ignored is a reindent (DESIGN whitespaceOnly)
      const wouldReplace = pairs.filter(({ i, t }) => {
        const d = counts.get(i)?.deleted ?? 0;
        const lines = countLines(t.base!);
        return lines > 0 && d / lines >= policy.config.changeRatio;
      });
      if (wouldReplace.length > 0) {
        const w = await numstatFolders(dir, true);
        for (const { i } of wouldReplace) if (!w.has(String(i)) || (w.get(String(i))!.added === 0 && w.get(String(i))!.deleted === 0)) whitespaceOnly.add(i);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const classified = targets.map((t, i) => {
    const binary = (t.base !== null && looksBinary(t.base)) || (t.next !== null && looksBinary(t.next));
    let added = 0;
    let deleted = 0;
    if (t.base === null) added = t.next ? countLines(t.next) : 0;
    else if (t.next === null) deleted = countLines(t.base);
    else if (!t.base.equals(t.next)) {
      const n = counts.get(i);
      added = n?.added ?? 0;
      deleted = n?.deleted ?? 0;
    }
    const facts: ChangeFacts = {
      ...(t.movedFrom !== undefined ? { oldPath: t.movedFrom } : {}),
      path: t.rel,
      oldMode: t.base === null ? null : t.mode,
      newMode: t.next === null ? null : t.mode,
      linesAdded: binary ? 0 : added,
      linesDeleted: binary ? 0 : deleted,
      existingLines: binary || t.base === null ? 0 : countLines(t.base),
      ...(t.base !== null ? { existingBytes: t.base.length } : {}),
      binary,
      contentChanged: !same(t.base, t.next),
      ...(whitespaceOnly.has(i) ? { whitespaceOnly: true } : {}),
    };
    const max = policy.config.maxFileBytes;
    const big = [t.base, t.next].find((b) => b !== null && b.length > max);
    if (big) facts.tooLarge = { bytes: big.length };
    if (!binary && t.base !== null && t.base.length <= max) facts.oldText = t.base.toString('utf8');
    if (!binary && t.next !== null && t.next.length <= max) facts.newText = t.next.toString('utf8');
    let c = classify(facts, policy);
    if ((GATE_FILES.has(t.rel) || PLUGIN_DIRS.test(t.rel)) && !c.rules.includes('protected')) {
      // the agent may not switch off its own gate
      c = { ...withReason(c, { rule: 'protected', text: 'the hook configuration that runs guard (an agent may not change its own gate)' }), needsApproval: true };
    }
    return c;
  });
  // the call as a whole (a patch deleting twelve 40-line files) is one change
  return withAggregateLoss(classified, policy.config);
}

function judgedOf(c: Classification): Judged {
  return { path: c.path, status: c.status, existingLines: c.existingLines, linesDeleted: c.linesDeleted, changeRatio: c.changeRatio, needsApproval: c.needsApproval, reasons: c.reasons, rules: c.rules };
}

/** After a write tool ran: a write guard put to the person ran, so the person approved it. */
async function writeAfter(repo: Repo, e: HookEvent, _meta: SessionMeta, now: Date): Promise<HookResult> {
  if (!e.toolCallId) return { outcome: NONE, notes: [] };
  const asked = await askedOf(repo, e, e.toolCallId);
  if (!asked?.asked) return { outcome: NONE, notes: [] };
  const ctx: RecordContext = { command: 'hook', lane: laneOf(repo.root), time: now.toISOString(), base: null, harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
  await writeRecords(repo.root, [{ ref: newRef(REFS.decisions, now), parent: null, message: batchMessage(ctx, asked.asked as DecisionRecord[]), changes: [] }], now);
  return { outcome: NONE, notes: [] };
}

/** The step of the write this tool call put to the person: from the session index (no git process when there is none), else the refs. */
async function askedOf(repo: Repo, e: HookEvent, toolCall: string): Promise<{ asked?: unknown[] } | null> {
  const indexed = await askedStep(repo, e.harness, e.sessionId, toolCall);
  if (indexed === undefined) {
    const events = await readSessionEvents(repo.root, sessionPrefix(e.harness, e.sessionId));
    return events.find((x) => x.toolCall === toolCall && x.outcome === 'ask') ?? null;
  }
  if (indexed === null) return null;
  const [obj] = await catFileBatch(repo.root, [indexed.commit], READ_CAP);
  const text = obj?.type === 'commit' && obj.data ? obj.data.toString('utf8') : '';
  const body = parseRecordMessage(text.slice(text.indexOf('\n\n') + 2).replace(/\n$/, '')) as { toolCall?: unknown; outcome?: unknown; asked?: unknown } | null;
  return body && body.toolCall === toolCall && body.outcome === 'ask' && Array.isArray(body.asked) ? { asked: body.asked } : null;
}

/* -------------------------------------------------------------- shell */

async function shellBefore(repo: Repo, e: HookEvent, command: string, meta: SessionMeta, now: Date): Promise<HookResult> {
  // the session step goes in the checkpoint's own fast-import
  let stepRef = '';
  const records = (c: { id: string; commit: string }) => {
    const step = sessionCommit(repo, e, c.commit, c.id, 'pre', command, now);
    stepRef = step.ref!;
    return [step];
  };
  const cp = await checkpoint(repo, { reason: `before ${e.harness} shell: ${oneLine(command)}`, command: 'hook', lane: laneOf(repo.root), session: meta, now, records });
  await noteShell(repo, e, 'pre', { commit: cp.commit, checkpoint: cp.id, time: now.toISOString(), ref: stepRef });
  return { outcome: NONE, checkpoint: cp.id, notes: [] };
}

/** After a shell call's records: its event into the session index, and the loose objects packed when they pile up (git/records.ts). */
async function noteShell(repo: Repo, e: HookEvent, phase: 'pre' | 'post', at: { commit: string; checkpoint: string; time: string; ref: string }): Promise<void> {
  await noteEvent(repo, { harness: e.harness, session: e.sessionId, worktree: repo.root, paths: null, kind: 'shell', phase, toolCall: e.toolCallId }, at);
  await packWhenLoose(repo.commonDir, repo.root);
}


/** The report's head when the command took only what lies outside the work tree's tree. */
function outsideMessage(command: string): string {
  const shown = command.length > 80 ? command.slice(0, 77) + '...' : command;
  return `guard: the command \`${shown}\` took work that git does not track. Nothing was undone. Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.`;
}

function sessionCommit(repo: Repo, e: HookEvent, commit: string, id: string, phase: 'pre' | 'post', command: string, now: Date, lost?: string[], notKept?: string[]): RecordCommit {
  return sessionEventCommit(
    commit,
    {
      harness: e.harness,
      session: e.sessionId,
      toolCall: e.toolCallId,
      tool: e.tool,
      phase,
      kind: 'shell',
      checkpoint: id,
      paths: null,
      worktree: repo.root,
      time: now.toISOString(),
      command: oneLine(command),
      ...(lost ? { lost } : {}),
      ...(notKept?.length ? { notKept } : {}),
    },
    now,
  );
}

function oneLine(s: string): string {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > 200 ? l.slice(0, 197) + '...' : l;
}

/** A shell-safe word for a path in a command the person copies. */
export function shellWord(p: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}

/** The checkpoint before this shell call (this tool call's, or the latest one's): from the session index, else the refs. */
async function preShellOf(repo: Repo, e: HookEvent): Promise<{ commit: string; checkpoint: string; checkpointRev: string } | null> {
  // the index names the checkpoint commit itself; a step read from the refs is the event commit, whose parent it is
  const indexed = await indexedShellBefore(repo, e.harness, e.sessionId, e.toolCallId);
  if (indexed !== undefined) return indexed && { ...indexed, checkpointRev: indexed.commit };
  const events = await readSessionEvents(repo.root, sessionPrefix(e.harness, e.sessionId));
  const pres = events.filter((x) => x.kind === 'shell' && x.phase === 'pre' && x.worktree === repo.root);
  const pre = (e.toolCallId ? pres.filter((x) => x.toolCall === e.toolCallId) : pres).pop();
  return pre ? { ...pre, checkpointRev: `${pre.commit}^` } : null;
}

async function shellAfter(repo: Repo, e: HookEvent, command: string, meta: SessionMeta, now: Date): Promise<HookResult> {
  const root = repo.root;
  const [pre, cp] = await Promise.all([
    preShellOf(repo, e),
    checkpoint(repo, { reason: `after ${e.harness} shell: ${oneLine(command)}`, command: 'hook', lane: laneOf(root), session: meta, now }),
  ]);
  const postAt = { commit: cp.commit, checkpoint: cp.id, time: now.toISOString(), ref: '' };
  // the config, and the checkpoint before the command: what it kept outside git
  const [configBlob, preCp] = await catFileBatch(root, [`HEAD:${CONFIG_FILE}`, ...(pre ? [pre.checkpointRev] : [])], READ_CAP);
  if (!pre) {
    const step = sessionCommit(repo, e, cp.commit, cp.id, 'post', command, now);
    await writeRecords(root, [step], now);
    await noteShell(repo, e, 'post', { ...postAt, ref: step.ref! });
    return { outcome: NONE, checkpoint: cp.id, notes: ['no checkpoint from before this command: nothing to compare with'] };
  }
  const config = configAt('HEAD', configBlob?.data);
  const policy = makePolicy(config, { bootstrap: configBlob === null });
  const entries = await treeDiff(root, pre.commit, cp.commit);
  const touched = entries.filter((x) => x.oldOid !== null);
  const { facts } = touched.length ? await collectFacts(root, touched, { maxBytes: Math.min(config.maxFileBytes, READ_CAP) }) : { facts: [] };
  const classified = facts.map((f) => classify(f, policy));
  // Lost: a file deleted or replaced that would need approval, or, when the command
  // took lineThreshold lines or more in all (a `git checkout -- .` over a day of
  // small edits), every file it took lines from.
  const total = classified.reduce((n, c) => n + c.linesDeleted, 0);
  const lost = classified.filter((c) => ((c.status === 'delete' || c.status === 'replace') && c.needsApproval) || (total >= config.lineThreshold && c.linesDeleted > 0));
  // what it took outside the work tree's tree (ignored files, nested repositories, lanes, files over the cap),
  // and the harness hook configuration it changed (shell-coverage.ts)
  const outside = await coverageLoss(root, preCp?.type === 'commit' ? (preCp.data ?? null) : null, cp);
  const gate = [...new Set([...entries.flatMap((x) => [x.path, x.oldPath ?? '']), ...outside.kept.map((k) => k.path)])].filter((p) => GATE_FILES.has(p));
  const lostPaths = [...lost.map((c) => c.path), ...outside.kept.map((k) => k.path)];
  const step = sessionCommit(repo, e, cp.commit, cp.id, 'post', command, now, lostPaths, outside.notKept.map((n) => n.path));
  await writeRecords(root, [step], now);
  await noteShell(repo, e, 'post', { ...postAt, ref: step.ref! });
  const extra = coverageSentences(outside, pre.checkpoint, shellWord, lost.length > 0);
  if (gate.length > 0) {
    extra.push(
      `WARNING: it changed ${gate.join(', ')}, the hook configuration that runs guard: the safety net may be off from the next session on. ` +
        `The person must check it (guard doctor); the earlier version: guard restore ${pre.checkpoint} -- ${gate.map(shellWord).join(' ')}.`,
    );
  }
  if (lost.length === 0 && extra.length === 0) return { outcome: NONE, checkpoint: cp.id, notes: [] };
  const paths = lost.map((c) => c.oldPath ?? c.path);
  const restore = paths.length <= 20 ? `guard restore ${pre.checkpoint} -- ${paths.map(shellWord).join(' ')}` : `guard restore ${pre.checkpoint}`;
  const rewind = `guard rewind ${shellWord(e.sessionId)}`;
  const judged: Judged[] = lost.map((c) => ({ ...judgedOf(c), needsApproval: true }));
  const head = lost.length > 0 ? lossMessage(command, judged, restore, rewind) : outsideMessage(command);
  return { outcome: { kind: 'inform', message: [head, ...extra].join(' ') }, checkpoint: cp.id, files: judged.map((j) => ({ ...j, decision: 'lost' })), notes: [] };
}
