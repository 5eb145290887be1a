import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { withAggregateLoss } from '../core/aggregate.js';
import { classify, makePolicy, withReason, type ChangeFacts, type Classification, type Policy } from '../core/classify.js';
import { CONFIG_FILE, type Config } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { MODE, fileMode } from '../core/modes.js';
import { countLines, looksBinary } from '../core/lines.js';
import { decisionRecords, plan, type Answer, type Plan, type PlanFile } from '../core/plan.js';
import { parseRecordMessage, type DecisionRecord, type RecordContext } from '../core/record.js';
import { applyInsertLine, applyPatchChunks, applySearchReplace, applyStringEdits, type Applied } from '../harness/edits.js';
import { lossMessage, unmatchedReason, verdict, writeOutcome, type Judged, type Planned } from '../harness/decide.js';
import type { Change, FileChange, HookEvent, Outcome } from '../harness/types.js';
import { resolveInside } from '../worktree/atomic.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import type { SessionMeta } from '../git/checkpoint.js';
import { collectFacts } from '../git/changes.js';
import { treeDiff } from '../git/diff.js';
import { REFS, decisionBatch, newRef, rejectedCommit, type RecordCommit } from '../git/records.js';
import { openRepo, type Repo } from '../git/repo.js';
import { numstatPairs } from '../git/measure.js';
import { baseEventFor, readSessionEvents as readEvents, sessionEventCommit, sessionPrefix, type SessionEvent } from '../git/session.js';
import { askedStep, backgroundMarker, markBackgroundOpen } from '../git/session-index.js';
import { apply } from '../apply/apply.js';
import { configAt, laneOf } from './context.js';
import { coverageLoss, coverageSentences } from './shell-coverage.js';
import { backgroundNoted } from '../git/journal.js';
import { integrityDenial, integrityProblems, integritySentence } from './integrity.js';

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
 * Git processes for a write: rev-parse, for-each-ref (the session's
 * steps: the strictest policy they saw, the session bases, background
 * commands still open), cat-file of HEAD, the configs and the session
 * bases, one diff --no-index (when a base differs), one fast-import.
 * Nothing scans the work tree. The session index (git/session-index.ts)
 * answers the post event of a write without reading the steps.
 */
export interface HookOptions {
  event: HookEvent;
  /** guard's own auto mode (GUARD_AUTO, CI): nobody to ask. */
  auto: boolean;
  /**
   * The project the harness runs the hook for ($CLAUDE_PROJECT_DIR and
   * alike, else the hook's own working folder): set by the harness, not
   * by the agent, unlike the payload's cwd (which follows the shell's cd).
   */
  projectDir?: string;
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

/**
 * A session's events, read once per hook call (one for-each-ref): the
 * background check and the call's own flow both need them, and what the
 * check records (reports of a background call) changes nothing the flow
 * reads.
 */
const eventsRead = new Map<string, Promise<SessionEvent[]>>();
function readSessionEvents(root: string, prefix: string): Promise<SessionEvent[]> {
  const key = `${root}\0${prefix}`;
  let p = eventsRead.get(key);
  if (!p) eventsRead.set(key, (p = readEvents(root, prefix)));
  return p;
}

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
  eventsRead.clear();
  const now = opts.now ?? new Date();
  // The payload's cwd is the agent's to move (a `cd /tmp` first): the project the harness named is
  // judged as well, so a command or a write aimed at it from outside is still seen.
  const here = await repoAt(e.cwd);
  // (usually the same tree: no second rev-parse then)
  const project = opts.projectDir && !(here && within(here.root, opts.projectDir)) ? await repoAt(opts.projectDir) : null;
  const repos = [here, project].filter((r, i, all): r is Repo => r !== null && all.findIndex((x) => x?.root === r.root) === i);
  // the net itself first (file reads only): removed outside guard, it is said before anything runs
  // (hooks that git clean -X took are put back from guard's copy here, and said once)
  const net = repos.length > 0 ? await integrityProblems(repos[0]!.commonDir, { heal: true }) : [];
  if (net.length > 0 && e.phase === 'pre') return { outcome: { kind: 'deny', reason: integrityDenial(net) }, notes: [] };
  const r = await judgeCall(opts, repos, now);
  if (net.length === 0) return r;
  const said = integritySentence(net);
  const outcome: Outcome = r.outcome.kind === 'inform' ? { kind: 'inform', message: `${r.outcome.message} ${said}` } : { kind: 'inform', message: `guard: ${said} ${net.every((p) => p.healed) ? 'Tell the user.' : 'Tell the user: the safety net is down until guard recover (or guard init) is run.'}` };
  return { ...r, outcome };
}

/** One call in the work trees it touches: background reports first, then the shell or write flow. */
async function judgeCall(opts: HookOptions, repos: Repo[], now: Date): Promise<HookResult> {
  const e = opts.event;
  if (e.action.kind === 'other') return { outcome: NONE, notes: [] };
  const meta: SessionMeta = { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
  // what a command still running in the background destroyed since the last call (reportBackground)
  const late = await reportBackground(repos, e, now);
  // before a tool: refused once, untouched, so the model reads the report first (no checkpoint, no step)
  if (late.length > 0 && e.phase === 'pre') return withLate({ outcome: NONE, notes: [] }, late, 'pre');
  let r: HookResult;
  if (e.action.kind === 'shell') {
    if (repos.length === 0) return withLate({ outcome: NONE, notes: [`${e.cwd} is not in a git work tree: no opinion`] }, late, e.phase);
    const action = e.action;
    const each = await Promise.all(repos.map((repo) => (e.phase === 'pre' ? shellBefore(repo, e, action.command, action.background === true, meta, now) : shellAfter(repo, e, action.command, meta, now))));
    r = mergeResults(each);
  } else {
    const files = e.action.files;
    const repo = await repoOfWrite(repos, e.cwd, files);
    if (!repo) return withLate({ outcome: NONE, notes: [`${files.map((f) => f.path).join(', ')}: outside every git work tree: no opinion`] }, late, e.phase);
    r = e.phase === 'pre' ? await writeBefore(repo, e, files, opts.auto, now) : await writeAfter(repo, e, meta, now);
  }
  return withLate(r, late, e.phase);
}

async function repoAt(dir: string): Promise<Repo | null> {
  return openRepo(dir).catch((err) => {
    // a harness working outside any repository: not guard's business
    if (err instanceof GuardError && err.code === 'E_NOT_A_REPO') return null;
    throw err;
  });
}

/**
 * The work tree a write call lands in: the one around the payload's cwd or
 * the project's, whichever holds its files; for a file in neither (an
 * absolute path into another checkout), the checkout around that file. A
 * call whose files land in two work trees is refused: harnesses apply it
 * whole, and guard judges one tree at a time.
 */
async function repoOfWrite(known: Repo[], cwd: string, files: FileChange[]): Promise<Repo | null> {
  const found = new Map<string, Repo>();
  for (const f of files) {
    // named inside a known tree (even through a link that leads out: place() refuses that), or really inside it
    const lexical = path.resolve(cwd, f.path);
    const abs = await realAbs(lexical);
    let repo: Repo | null = null;
    // the innermost tree that holds it (a nested checkout inside the project is its own)
    for (const k of known) if ((within(k.root, lexical) || within(await realpath(k.root), abs)) && (!repo || k.root.length > repo.root.length)) repo = k;
    // leaving the cwd's tree through "..": judged there, where place() refuses it
    if (!repo && f.path.split(/[\\/]/).includes('..')) repo = known.find((k) => within(k.root, cwd)) ?? null;
    if (!repo) repo = await repoAt(await nearestFolder(abs));
    if (repo) found.set(repo.root, repo);
  }
  if (found.size > 1) throw new GuardError('E_PATH_ESCAPE', `this call writes into ${found.size} work trees (${[...found.keys()].join(', ')})`, 'write the files of one checkout per call');
  return [...found.values()][0] ?? null;
}

function within(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The path with its longest existing folder prefix resolved (symlinks followed), the rest as given. */
async function realAbs(abs: string): Promise<string> {
  let dir = path.dirname(abs);
  let rest = path.basename(abs);
  for (;;) {
    const real = await realpath(dir).catch(() => null);
    if (real !== null) return path.join(real, rest);
    const up = path.dirname(dir);
    if (up === dir) return abs;
    rest = path.join(path.basename(dir), rest);
    dir = up;
  }
}

async function nearestFolder(abs: string): Promise<string> {
  let dir = path.dirname(abs);
  while ((await lstat(dir).catch(() => null))?.isDirectory() !== true) {
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return dir;
}

/** Several work trees' answers to one shell call: any report is told, checkpoints listed. */
function mergeResults(rs: HookResult[]): HookResult {
  if (rs.length === 1) return rs[0]!;
  const informs = rs.flatMap((r) => (r.outcome.kind === 'inform' ? [r.outcome.message] : []));
  return {
    outcome: informs.length ? { kind: 'inform', message: informs.join('\n\n') } : NONE,
    checkpoint: rs.map((r) => r.checkpoint).filter(Boolean).join(' '),
    files: rs.flatMap((r) => r.files ?? []),
    notes: rs.flatMap((r) => r.notes),
  };
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
  let abs = path.resolve(cwd, p);
  const rel = path.relative(root, abs);
  const lexicallyOutside = rel.startsWith('..') || path.isAbsolute(rel);
  if (lexicallyOutside) {
    // through a symlink to the repository (a linked cwd, /tmp/link/state.py) it is still inside
    const realRoot = await realpath(root);
    const real = await realAbs(abs);
    if (!within(realRoot, real)) {
      if (p.split(/[\\/]/).includes('..')) throw new GuardError('E_PATH_ESCAPE', `${JSON.stringify(p)} leaves the repository through ".."`, 'name files inside the repository');
      return { kind: 'outside' };
    }
    abs = path.join(root, path.relative(realRoot, real));
  }
  let inside = await resolveInside(root, abs);
  const st = await lstat(inside.abs).catch(() => null);
  if (st?.isSymbolicLink()) {
    const target = await realpath(inside.abs).catch(() => null);
    if (target === null) throw new GuardError('E_PATH_ESCAPE', `${inside.rel} is a symlink to nothing guard can follow`, 'write the file the link points to by its own name');
    const realRoot = await realpath(root);
    const inRoot = path.relative(realRoot, target);
    if (inRoot.startsWith('..') || path.isAbsolute(inRoot)) throw new GuardError('E_PATH_ESCAPE', `${inside.rel} is a symlink that leads outside the repository`, 'write files inside the repository only');
    inside = await resolveInside(root, inRoot);
  }
  return { kind: 'inside', rel: inside.rel, abs: inside.abs };
}

/* -------------------------------------------------------------- writes */

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
  // a FIFO or a device: reading would block (node then cannot even exit) or never end
  const target = st.isSymbolicLink() ? await stat(abs).catch(() => null) : st;
  if (target && !target.isFile() && !target.isDirectory()) throw new GuardError('E_USAGE', `${abs} is not a regular file (a pipe or a device)`, 'a tool call writes files');
  return { content: await readFile(abs), mode: fileMode(st.mode) };
}

function applyChange(change: Change, current: Buffer | null, source: Buffer | null): Applied | { ok: true; text: null } {
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
  /** Edits guard cannot reproduce: the call is refused, the files checkpointed. */
  unmatched: Unmatched[];
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
  if (w.unmatched.length > 0) {
    // what the harness would make of it is unknown: keep the files as they are, and refuse
    const cp = await checkpointPaths(w, 'deny', unmatchedRecords(w));
    return { outcome: { kind: 'deny', reason: unmatchedReason(w.unmatched.map((u) => `${u.rel}: ${u.why}`), cp) }, checkpoint: cp, notes };
  }
  // the source of a move is judged with its destination (a rename), not as a deletion of its own
  const { judged, classified } = await judgeTargets(repo, w.targets.filter((t) => !t.movedAway), w.policy);
  const planFiles = classified.map((c, i) => planFileOf(c, judged[i]!));
  const planned = await plan('hook', planFiles, NO_ANSWERS);
  const v = verdict(planned.files, e.canAsk && !auto);
  const reported: Planned[] = planned.files.map((o, i) => ({ ...judgedOf(classified[i]!), decision: o.decision }));
  if (v === 'deny') {
    const kept = await keepRefused(w, planned, classified);
    const sessionBased = judged.some((t) => t.fromSession && !same(t.base, t.current));
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
 * opinion: nothing inside the repository, or a call that changes nothing
 * on disk. An edit guard cannot reproduce is listed in `unmatched`.
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
  const events = await readSessionEvents(root, sessionPrefix(e.harness, e.sessionId));
  const { head, policy } = await readPolicy(root, events);
  const unmatched: Unmatched[] = [];
  const targets = await readTargets(root, e.cwd, placed, events, unmatched, notes);
  linkMoves(targets);
  if (unmatched.length === 0 && targets.every((t) => same(t.current, t.next))) {
    notes.push('the call changes nothing on disk: no opinion');
    return null;
  }
  const ctx: RecordContext = { command: 'hook', lane: laneOf(root), time: now.toISOString(), base: head, harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
  return { repo, root, e, targets, unmatched, policy, head, ctx, now };
}

/**
 * The policy a hook call is judged by, and HEAD. HEAD is the agent's to
 * move (a `git commit --no-verify` of a looser guard.config.json before
 * the write), so the committed config of HEAD as each of the session's
 * calls found it counts as well, and the strictest applies: a step forged
 * with an older, looser HEAD cannot loosen what the real steps hold. One
 * cat-file; each distinct config parsed once.
 */
async function readPolicy(root: string, events: readonly SessionEvent[]): Promise<{ head: string | null; policy: Policy; config: Config }> {
  const anchors = events.filter((x) => x.worktree === root);
  // a session event's parent is its checkpoint, whose parent is HEAD as it was then
  const names = ['HEAD', `HEAD:${CONFIG_FILE}`, ...anchors.map((x) => `${x.commit}^^:${CONFIG_FILE}`)];
  const [head, configBlob, ...then] = await catFileBatch(root, names, READ_CAP);
  const headOid = head && head.type === 'commit' ? head.oid : null;
  let config = configAt('HEAD', configBlob?.data);
  let bootstrap = configBlob === null;
  // (no config at all counts once, as the defaults)
  const seen = new Set<string>([configBlob ? configBlob.oid : '']);
  for (const [i, blob] of then.entries()) {
    const key = blob ? blob.oid : '';
    if (seen.has(key)) continue;
    seen.add(key);
    config = stricter(config, configAt(`${anchors[i]!.checkpoint}^`, blob?.data));
    bootstrap &&= blob === null;
  }
  return { head: headOid, policy: makePolicy(config, { bootstrap }), config };
}

/** Of two policies, what each would ask a person about. */
function stricter(a: Config, b: Config): Config {
  return {
    lineThreshold: Math.min(a.lineThreshold, b.lineThreshold),
    byteThreshold: Math.min(a.byteThreshold, b.byteThreshold),
    changeRatio: Math.min(a.changeRatio, b.changeRatio),
    protect: [...new Set([...a.protect, ...b.protect])],
    ignore: a.ignore.filter((g) => b.ignore.includes(g)),
    maxFileBytes: Math.min(a.maxFileBytes, b.maxFileBytes),
    preview: a.preview,
    judge: a.judge === 'all' || b.judge === 'all' ? 'all' : 'agents',
  };
}

/** Each placed file on disk, at its session base and after the call; an edit that cannot be reproduced goes to `unmatched` ("PATH: why"). */
async function readTargets(root: string, cwd: string, placed: PlacedChange[], events: SessionEvent[], unmatched: Unmatched[], notes: string[]): Promise<Target[]> {
  const disk = await Promise.all(placed.map((p) => readDisk(p.abs)));
  const baseEvents = placed.map((p) => baseEventFor(events, root, p.rel));
  const wanted = baseEvents.flatMap((ev, i) => (ev ? [`${ev.commit}:${placed[i]!.rel}`] : []));
  const blobs = wanted.length ? await catFileBatch(root, wanted, READ_CAP) : [];
  const targets: Target[] = [];
  let k = 0;
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
    if (baseEvents[i]) {
      const b = blobs[k++];
      base = b && b.type === 'blob' ? (b.data ?? null) : null;
      fromSession = true;
    }
    const next = !r.ok ? current : r.text === null ? null : Buffer.from(r.text, 'utf8');
    targets.push({ rel: p.rel, abs: p.abs, change: p.change, current, mode, next, base, fromSession, ...(movedFrom ? { movedFrom } : {}) });
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

/**
 * Each file measured against its session base and, where that differs
 * from the disk, against the disk too: the stricter counts. The session
 * base is read from refs the agent can write (`git update-ref` of a forged
 * step whose tree holds a 10-line "base"), so it may only ever make the
 * gate stricter, never looser. One more diff --no-index, only then.
 */
async function judgeTargets(repo: Repo, targets: Target[], policy: Policy): Promise<{ judged: Target[]; classified: Classification[] }> {
  const classified = await measureAll(repo, targets, policy);
  const drift = targets.map((t) => t.fromSession && !same(t.base, t.current));
  if (!drift.some(Boolean)) return { judged: targets, classified };
  const onDisk = targets.map((t) => ({ ...t, base: t.current, fromSession: false }));
  const againstDisk = await measureAll(repo, onDisk, policy);
  const stricter = targets.map((_, i) => drift[i]! && againstDisk[i]!.needsApproval && !classified[i]!.needsApproval);
  return { judged: targets.map((t, i) => (stricter[i] ? onDisk[i]! : t)), classified: classified.map((c, i) => (stricter[i] ? againstDisk[i]! : c)) };
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
    rejectedCommit(w.ctx, decisions, rejected, ':2', w.targets.map((t) => blobChange(t.rel, t.next, t.mode))),
    decisionBatch(w.ctx, decisions, w.now),
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
async function checkpointPaths(w: WriteCall, v: 'allow' | 'ask' | 'deny', decisions: DecisionRecord[]): Promise<string> {
  const { e, now } = w;
  const paths = w.targets.map((t) => t.rel);
  const { checkpoint } = await apply({
    gate: 'hook',
    repo: w.repo,
    now,
    records: v !== 'ask' && decisions.length > 0 ? [decisionBatch(w.ctx, decisions, now)] : [],
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
      ...{ path: rel, status: 'modify' as const, existingLines: lines, linesAdded: 0, linesDeleted: 0, changeRatio: 0, needsApproval: true },
      ...{ reasons: [`an edit guard cannot reproduce (${why})`], rules: ['unmatched-edit'], decision: 'blocked' as const, decider: 'auto' as const },
    };
  });
}

function same(a: Buffer | null, b: Buffer | null): boolean {
  return a === null ? b === null : b !== null && a.equals(b);
}

function blobChange(rel: string, content: Buffer | null, mode: string): RecordCommit['changes'][number] {
  return content === null ? { kind: 'delete', path: rel } : { kind: 'inline', path: rel, mode, data: content };
}

/** Each target classified against its session base with HEAD's policy: one diff --no-index for all of them. */
async function measureAll(repo: Repo, targets: Target[], policy: Policy): Promise<Classification[]> {
  const pairs = targets.flatMap((t, i) => (t.base !== null && t.next !== null && !t.base.equals(t.next) ? [{ i, base: t.base, next: t.next }] : []));
  // a would-be replacement that is empty when whitespace is ignored is a reindent (DESIGN whitespaceOnly)
  const wouldReplace = (counts: Map<number, { deleted: number | null }>) =>
    pairs.filter(({ i, base }) => {
      const lines = countLines(base);
      return lines > 0 && (counts.get(i)?.deleted ?? 0) / lines >= policy.config.changeRatio;
    }).map((x) => x.i);
  const { counts, whitespaceOnly } = await numstatPairs(repo.gitDir, pairs, wouldReplace);
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
  await apply({ gate: 'hook', repo, now, records: [decisionBatch(ctx, asked.asked as DecisionRecord[], now)], target: null });
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

async function shellBefore(repo: Repo, e: HookEvent, command: string, background: boolean, meta: SessionMeta, now: Date): Promise<HookResult> {
  // the session step goes in the checkpoint's own fast-import
  const records = (c: { id: string; commit: string }) => [sessionCommit(repo, e, c.commit, c.id, 'pre', command, now, undefined, background)];
  const { checkpoint: cp } = await apply({ gate: 'hook', repo, now, records: [], target: { kind: 'worktree', checkpoint: { reason: `before ${e.harness} shell: ${oneLine(command)}`, command: 'hook', lane: laneOf(repo.root), session: meta, now, records } } });
  // the lanes' work trees, which a command in the main tree can take (git clean -ffdx): flows/lane-keep.ts
  await (await import('./lane-keep.js')).keepLanes(repo, command, now, cp!.id);
  if (background) await markBackgroundOpen(repo, e.harness, e.sessionId, now);
  await apply({ gate: 'hook', repo, now, records: [], target: null, pack: true });
  return { outcome: NONE, checkpoint: cp!.id, notes: [] };
}

function sessionCommit(repo: Repo, e: HookEvent, commit: string, id: string, phase: 'pre' | 'post', command: string, now: Date, lost?: string[], background?: boolean, toolCall?: string | null, notKept?: string[]): RecordCommit {
  return sessionEventCommit(
    commit,
    {
      harness: e.harness,
      session: e.sessionId,
      toolCall: toolCall === undefined ? e.toolCallId : toolCall,
      tool: e.tool,
      phase,
      kind: 'shell',
      checkpoint: id,
      paths: null,
      worktree: repo.root,
      time: now.toISOString(),
      command: oneLine(command),
      ...(lost ? { lost } : {}),
      ...(background ? { background: true } : {}),
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

async function shellAfter(repo: Repo, e: HookEvent, command: string, meta: SessionMeta, now: Date): Promise<HookResult> {
  const root = repo.root;
  const [events, cp] = await Promise.all([
    readSessionEvents(root, sessionPrefix(e.harness, e.sessionId)),
    apply({ gate: 'hook', repo, now, records: [], target: { kind: 'worktree', checkpoint: { reason: `after ${e.harness} shell: ${oneLine(command)}`, command: 'hook', lane: laneOf(root), session: meta, now } } }).then((r) => r.checkpoint!),
  ]);
  const pres = events.filter((x) => x.kind === 'shell' && x.phase === 'pre' && x.worktree === root);
  const pre = (e.toolCallId ? pres.filter((x) => x.toolCall === e.toolCallId) : pres).pop() ?? null;
  if (!pre) {
    await apply({ gate: 'hook', repo, now, records: [sessionCommit(repo, e, cp.commit, cp.id, 'post', command, now)], target: null });
    return { outcome: NONE, checkpoint: cp.id, notes: ['no checkpoint from before this command: nothing to compare with'] };
  }
  // the checkpoint before the command (the step's parent): what it kept outside git's tree
  const [{ config, policy }, [preCp]] = await Promise.all([readPolicy(root, events), catFileBatch(root, [`${pre.commit}^`], READ_CAP)]);
  const { lost, gate: inTree } = await lossesBetween(root, pre.commit, cp.commit, config, policy);
  // what it took outside the work tree's tree (ignored files, nested repositories, lanes, files over the cap): shell-coverage.ts
  const outside = await coverageLoss(root, preCp?.type === 'commit' ? (preCp.data ?? null) : null, cp);
  const gate = [...new Set([...inTree, ...outside.kept.map((k) => k.path).filter((p) => GATE_FILES.has(p))])];
  const lostPaths = [...lost.map((c) => c.path), ...outside.kept.map((k) => k.path)];
  const step = sessionCommit(repo, e, cp.commit, cp.id, 'post', command, now, lostPaths, undefined, undefined, outside.notKept.map((n) => n.path));
  await apply({ gate: 'hook', repo, now, records: [step], target: null, pack: true });
  const messages: string[] = [];
  const judged: Judged[] = lost.map((c) => ({ ...judgedOf(c), needsApproval: true }));
  if (lost.length > 0) messages.push(lossMessage(command, judged, restoreCommand(pre.checkpoint, lost), `guard rewind ${shellWord(e.sessionId)}`));
  const extra = coverageSentences(outside, pre.checkpoint, shellWord, lost.length > 0);
  if (extra.length > 0) messages.push((lost.length > 0 ? extra : [outsideMessage(command), ...extra]).join(' '));
  if (gate.length > 0) messages.push(gateMessage(gate, pre.checkpoint, false));
  if (messages.length === 0) return { outcome: NONE, checkpoint: cp.id, notes: [] };
  return { outcome: { kind: 'inform', message: messages.join('\n\n') }, checkpoint: cp.id, files: judged.map((j) => ({ ...j, decision: 'lost' })), notes: [] };
}

/** The report's head when the command took only what lies outside the work tree's tree. */
function outsideMessage(command: string): string {
  const shown = command.length > 80 ? command.slice(0, 77) + '...' : command;
  return `guard: the command \`${shown}\` took work that git does not track. Nothing was undone. Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.`;
}

function restoreCommand(checkpointId: string, lost: Classification[]): string {
  const paths = lost.map((c) => c.oldPath ?? c.path);
  return paths.length <= 20 ? `guard restore ${checkpointId} -- ${paths.map(shellWord).join(' ')}` : `guard restore ${checkpointId}`;
}

/**
 * What went from one whole-tree checkpoint to another: a file deleted or
 * replaced that would need approval, or, when lineThreshold lines or more
 * went in all (a `git checkout -- .` over a day of small edits), every
 * file that lost lines.
 */
async function lossesBetween(root: string, from: string, to: string, config: Config, policy: Policy, skip?: ReadonlySet<string>): Promise<Losses> {
  const all = (await treeDiff(root, from, to)).filter((x) => !skip?.has(x.oldPath ?? x.path));
  // the gate itself: the harness hook configs, guard.config.json, .husky/, whatever the policy protects
  const gate = [...new Set(all.flatMap((x) => [x.path, ...(x.oldPath !== undefined ? [x.oldPath] : [])]).filter((p) => GATE_FILES.has(p) || policy.isProtected(p)))];
  const entries = all.filter((x) => x.oldOid !== null);
  const { facts } = entries.length ? await collectFacts(root, entries, { maxBytes: Math.min(config.maxFileBytes, READ_CAP) }) : { facts: [] };
  const classified = facts.map((f) => classify(f, policy));
  const total = classified.reduce((n, c) => n + c.linesDeleted, 0);
  return { lost: classified.filter((c) => ((c.status === 'delete' || c.status === 'replace') && c.needsApproval) || (total >= config.lineThreshold && c.linesDeleted > 0)), gate };
}

interface Losses {
  lost: Classification[];
  /** Protected paths and harness hook configs the command changed, added or removed (the gate itself). */
  gate: string[];
}

/**
 * For the model and the person: a shell command changed the gate (a tool
 * call doing it would have been refused). It does not repeat the command:
 * it follows the loss report of the same command, or stands alone.
 */
function gateMessage(gate: readonly string[], checkpointId: string, background: boolean): string {
  return (
    `guard: ${background ? 'the command run in the background' : 'the command'} also changed what guards this repository: ${gate.slice(0, 10).join(', ')}${gate.length > 10 ? ` (and ${gate.length - 10} more)` : ''}. ` +
    `Only a person may change these (a write tool doing it is refused). guard kept them as they were: guard restore ${checkpointId} -- ${gate.slice(0, 20).map(shellWord).join(' ')}. ` +
    `Tell the user what changed and why; do not change them again.`
  );
}

/* --------------------------------------------------- background commands */

/**
 * A command run in the background (Claude's run_in_background) gets its
 * post event about 0.4 s after it starts, while it still runs. Its
 * checkpoint from before stays open: at every later hook call of the
 * session, in any event, for BACKGROUND_OPEN_MS after it started, guard
 * checkpoints the tree and reports what was lost since the last such
 * check (or its own after-event), leaving out what the session's own calls
 * since then account for (its writes, the losses of its other commands).
 * Each check is a post step of the background call (its lost paths
 * listed), the baseline of the next one. No git process while none is
 * open (the session's events are read once per call anyway); a checkpoint
 * and one fast-import per call while one is.
 */
const BACKGROUND_OPEN_MS = 30 * 60_000;

/** Whether a background command of the session started within BACKGROUND_OPEN_MS (one file read). */
async function backgroundOpen(repo: Repo, e: HookEvent, now: Date): Promise<boolean> {
  const text = await readFile(backgroundMarker(repo, e.harness, e.sessionId), 'utf8').catch(() => null);
  const t = text === null ? NaN : Date.parse(text.trim());
  // unreadable or in the future: read the steps (the safe side); no marker: the journal may still say so (a marker removed)
  if (text === null) return backgroundNoted(repo.commonDir, e.harness, path.basename(path.dirname(backgroundMarker(repo, e.harness, e.sessionId))), now, BACKGROUND_OPEN_MS);
  return Number.isNaN(t) || t > now.getTime() || now.getTime() - t < BACKGROUND_OPEN_MS;
}

interface Late {
  message: string;
  checkpoint: string;
}

async function reportBackground(repos: readonly Repo[], e: HookEvent, now: Date): Promise<Late[]> {
  const out: Late[] = [];
  for (const repo of repos) {
    const root = repo.root;
    if (!(await backgroundOpen(repo, e, now))) continue;
    const events = await readSessionEvents(root, sessionPrefix(e.harness, e.sessionId));
    // the call's own background command is reported by its own after-event (Gemini names no tool call: the latest shell pre)
    const own = e.toolCallId !== null ? (x: SessionEvent) => x.toolCall === e.toolCallId : (x: SessionEvent) => e.phase === 'post' && e.action.kind === 'shell' && x === events.filter((y) => y.kind === 'shell' && y.phase === 'pre' && y.worktree === root).pop();
    const open = events.filter((x) => x.background && x.phase === 'pre' && x.worktree === root && now.getTime() - Date.parse(x.time) < BACKGROUND_OPEN_MS && !own(x));
    if (open.length === 0) continue;
    const session = { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
    const cp = (await apply({ gate: 'hook', repo, now, records: [], target: { kind: 'worktree', checkpoint: { reason: `${e.harness} background commands still open`, command: 'hook', lane: laneOf(root), session, now } } })).checkpoint!;
    const { config, policy } = await readPolicy(root, events);
    const records: RecordCommit[] = [];
    for (const bg of open) {
      // each check is a post step of the background call: the next one compares from the last
      const mine = (x: SessionEvent) => x.kind === 'shell' && x.phase === 'post' && x.toolCall === bg.toolCall && (bg.toolCall !== null || x.command === bg.command);
      const baseline = events.filter((x) => x.time >= bg.time && mine(x)).pop() ?? bg;
      // what the session's own calls since then account for: its writes, its other commands' losses
      const later = events.filter((x) => x.time >= baseline.time && x !== baseline && x !== bg && !mine(x));
      const accounted = new Set<string>(later.flatMap((x) => (x.kind === 'write' ? (x.paths ?? []) : (x.lost ?? []))));
      const { lost, gate } = await lossesBetween(root, baseline.commit, cp.commit, config, policy, accounted);
      records.push(sessionCommit(repo, e, cp.commit, cp.id, 'post', bg.command ?? '', now, lost.map((c) => c.path), false, bg.toolCall));
      const shown = `${bg.command ?? ''} (run in the background)`;
      if (lost.length > 0) {
        const judged: Judged[] = lost.map((c) => ({ ...judgedOf(c), needsApproval: true }));
        out.push({ message: lossMessage(shown, judged, restoreCommand(bg.checkpoint, lost), `guard rewind ${shellWord(e.sessionId)}`), checkpoint: cp.id });
      }
      if (gate.length > 0) out.push({ message: gateMessage(gate, baseline.checkpoint, true), checkpoint: cp.id });
    }
    if (records.length) await apply({ gate: 'hook', repo, now, records, target: null });
  }
  return out;
}

/** A call's own answer with what background commands destroyed: told after a tool; before one, the call is refused once so the model reads it. */
function withLate(r: HookResult, late: Late[], phase: 'pre' | 'post'): HookResult {
  if (late.length === 0) return r;
  const message = late.map((l) => l.message).join('\n\n');
  const o = r.outcome;
  let outcome: Outcome;
  if (phase === 'post' || o.kind === 'inform') outcome = { kind: 'inform', message: o.kind === 'inform' ? `${o.message}\n\n${message}` : message };
  else if (o.kind === 'deny' || o.kind === 'ask') outcome = { ...o, reason: `${o.reason}\n\n${message}` };
  else outcome = { kind: 'deny', reason: `guard stopped this call to tell you first: ${message} This call did not run; run it again once you have told the user.` };
  return { ...r, outcome, notes: [...r.notes, 'a background command of this session lost work since the last call'] };
}
