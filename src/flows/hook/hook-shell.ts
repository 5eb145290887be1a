import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { classify, type Classification, type Policy } from '../../core/classify.js';
import { type Config } from '../../core/config.js';
import { lossMessage, type Judged } from '../../harness/decide.js';
import type { HookEvent, Outcome } from '../../harness/types.js';
import { READ_CAP, catFileBatch } from '../../git/catfile.js';
import {
  checkpointId,
  checkpointMessage,
  type CheckpointOptions,
  type SessionMeta,
} from '../../git/checkpoint.js';
import { collectFacts } from '../../git/changes.js';
import { treeDiff, type DiffEntry } from '../../git/diff.js';
import { REFS, newRef, type RecordCommit } from '../../git/records.js';
import { type Repo } from '../../git/repo.js';
import { sessionEventCommit, sessionPrefix, type SessionEvent } from '../../git/session.js';
import { stepCommit } from '../../git/session-chain.js';
import {
  anchoredHead,
  backgroundMarker,
  markBackgroundOpen,
  noteAnchoredHead,
  firstWhole,
  noteEvent,
  shellPre,
  type Indexed,
} from '../../git/session-index.js';
import { anchorCommit } from '../../git/session-policy.js';
import { apply, takeCheckpoint } from '../../apply/apply.js';
import { laneOf } from '../context.js';
import { coverageLoss, coverageSentences, type CoverageLoss } from './shell-coverage.js';
import { backgroundNoted } from '../../git/journal.js';
import {
  GATE_FILES,
  NONE,
  judgedOf,
  oneLine,
  readSessionPolicy,
  sessionEventsOnce,
  shellWord,
  type HookResult,
} from './hook-common.js';

/**
 * A shell tool call (flows/hook/hook.ts): a whole-tree checkpoint before it (and
 * the lanes' work trees), a report of what it destroyed after it, and the
 * same for commands still running in the background at later calls.
 */

export interface ShellBeforeCall {
  command: string;
  background: boolean;
  meta: SessionMeta;
  now: Date;
}

/** The whole-tree checkpoint a shell call takes before and after it ran (with the records it names). */
function shellCheckpoint(
  repo: Repo,
  c: Pick<CheckpointOptions, 'reason' | 'session' | 'now' | 'records'>,
) {
  return takeCheckpoint('hook', repo, { ...c, command: 'hook', lane: laneOf(repo.root) });
}

export async function shellBefore(
  repo: Repo,
  e: HookEvent,
  { command, background, meta, now }: ShellBeforeCall,
): Promise<HookResult> {
  const who = { harness: e.harness, session: e.sessionId, worktree: repo.root };
  const [anchored, witness] = await Promise.all([
    anchoredHead(repo, who),
    // the session's first whole-tree step here: its link witnesses `w-` (git/session-index.ts)
    firstWhole(repo, e.harness, e.sessionId),
  ]);
  let stepRef = '';
  let head: string | null = null;
  // the session step goes in the checkpoint's own fast-import, and HEAD's anchor when it moved (git/session-policy.ts)
  const records = (c: { id: string; commit: string; head: string | null }) => {
    const step = {
      ...sessionCommit(repo, e, {
        ...{ commit: c.commit, id: c.id, phase: 'pre', command, now, background },
      }),
      witness,
    };
    stepRef = step.ref!;
    head = c.head;
    return [
      step,
      ...(c.head && c.head !== anchored ? [anchorCommit(who, { head: c.head }, now)] : []),
    ];
  };
  const taking = shellCheckpoint(repo, {
    reason: `before ${e.harness} shell: ${oneLine(command)}`,
    session: meta,
    now,
    records,
  });
  // loaded while git takes the checkpoint, not after it (node waits for git there)
  const laneKeep = import('./lane-keep.js');
  laneKeep.catch(() => {}); // awaited below
  const cp = await taking;
  await noteShell(repo, e, 'pre', {
    commit: stepCommit(stepRef),
    checkpoint: cp.id,
    time: now.toISOString(),
    ref: stepRef,
  });
  if (head && head !== anchored) await noteAnchoredHead(repo, who, head);
  // the lanes' work trees, which a command in the main tree can take (git clean -ffdx): flows/hook/lane-keep.ts
  await (await laneKeep).keepLanes(repo, command, now, cp.id);
  if (background) await markBackgroundOpen(repo, e.harness, e.sessionId, now);
  await apply({ gate: 'hook', repo, now, records: [], target: null, pack: true });
  return { outcome: NONE, checkpoint: cp.id, notes: [] };
}

/** A shell step in the session index: its checkpoint (`s-`) and, the session's first whole-tree one, every path's base (`w-`). */
async function noteShell(
  repo: Repo,
  e: HookEvent,
  phase: 'pre' | 'post',
  at: Indexed,
): Promise<void> {
  await noteEvent(
    repo,
    {
      ...{ harness: e.harness, session: e.sessionId, worktree: repo.root, paths: null },
      ...{ kind: 'shell', phase, toolCall: e.toolCallId },
    },
    at,
  );
}

interface SessionCommitInput {
  commit: string;
  id: string;
  phase: 'pre' | 'post';
  command: string;
  now: Date;
  lost?: string[];
  background?: boolean;
  toolCall?: string | null;
  notKept?: string[];
  /** A background check: the writes' results it found as they left the files (holes7). */
  seen?: string[];
}

function sessionCommit(
  repo: Repo,
  e: HookEvent,
  {
    commit,
    id,
    phase,
    command,
    now,
    lost,
    background,
    toolCall,
    notKept,
    seen,
  }: SessionCommitInput,
): RecordCommit {
  // a hook call's step: on its session's chain (git/session-chain.ts)
  const step = sessionEventCommit(
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
      ...(seen?.length ? { seen } : {}),
    },
    now,
  );
  return { ...step, chain: true };
}

export interface ShellAfterCall {
  command: string;
  meta: SessionMeta;
  now: Date;
  /** The harness says the command runs on past this post event (Copilot past its initial wait). */
  stillRunning?: boolean;
}

export async function shellAfter(
  repo: Repo,
  e: HookEvent,
  { command, meta, now, stillRunning }: ShellAfterCall,
): Promise<HookResult> {
  const root = repo.root;
  const [pre, cp] = await Promise.all([
    preShellOf(repo, e),
    shellCheckpoint(repo, {
      reason: `after ${e.harness} shell: ${oneLine(command)}`,
      session: meta,
      now,
    }),
  ]);
  const post = (x: Partial<SessionCommitInput> = {}) =>
    sessionCommit(repo, e, { commit: cp.commit, id: cp.id, phase: 'post', command, now, ...x });
  // it runs on: from here a background call, as if started now (a pre step of its own, marked open)
  const also = stillRunning ? [post({ phase: 'pre', background: true })] : [];
  if (stillRunning) await markBackgroundOpen(repo, e.harness, e.sessionId, now);
  if (!pre) {
    await recordPost(repo, e, { step: post(), cp, now, also });
    return {
      outcome: NONE,
      checkpoint: cp.id,
      notes: ['no checkpoint from before this command: nothing to compare with'],
    };
  }
  const since = await lostSince(repo, e, { pre, cp, now });
  if (!since) return checkpointGone(repo, e, { command, step: post(), cp, pre, now });
  const { lost, outside, gate, anchors } = since;
  const lostPaths = [...lost.map((c) => c.path), ...outside.kept.map((k) => k.path)];
  const step = post({ lost: lostPaths, notKept: outside.notKept.map((n) => n.path) });
  await recordPost(repo, e, { step, cp, now, anchors, also });
  const judged: Judged[] = lost.map((c) => ({ ...judgedOf(c), needsApproval: true }));
  const messages = afterMessages(
    { command, session: e.sessionId, since: pre.checkpoint },
    { lost, judged, outside, gate },
  );
  if (messages.length === 0) return { outcome: NONE, checkpoint: cp.id, notes: [] };
  return {
    outcome: { kind: 'inform', message: messages.join('\n\n') },
    checkpoint: cp.id,
    files: judged.map((j) => ({ ...j, decision: 'lost' })),
    notes: [],
  };
}

/**
 * The after-event's step written (with the branch gate's anchors, if any: then packed, as a shell
 * call's records may be many) and noted in the session's shell notes.
 */
async function recordPost(
  repo: Repo,
  e: HookEvent,
  x: {
    step: ReturnType<typeof sessionCommit>;
    cp: { id: string };
    now: Date;
    anchors?: RecordCommit[];
    /** Steps written with it (a command that runs on: its background pre step). */
    also?: RecordCommit[];
  },
): Promise<void> {
  const { step, cp, now, anchors } = x;
  const records = [step, ...(x.also ?? []), ...(anchors ?? [])];
  await apply({
    gate: 'hook',
    repo,
    now,
    records,
    target: null,
    ...(anchors ? { pack: true } : {}),
  });
  await noteShell(repo, e, 'post', {
    commit: stepCommit(step.ref!),
    checkpoint: cp.id,
    time: now.toISOString(),
    ref: step.ref!,
  });
}

/**
 * The after-event of a command that removed guard's checkpoint from before it (guard's refs
 * deleted, then `git gc --prune=now`, built at run time so the hook could not read it: holes6):
 * what it changed cannot be told, and what it took is in no copy guard has. Said as that, not as a
 * check that failed.
 */
async function checkpointGone(
  repo: Repo,
  e: HookEvent,
  x: {
    command: string;
    step: ReturnType<typeof sessionCommit>;
    cp: { id: string };
    pre: { checkpoint: string };
    now: Date;
  },
): Promise<HookResult> {
  await recordPost(repo, e, x);
  const shown = x.command.length > 80 ? x.command.slice(0, 77) + '...' : x.command;
  const message = `guard: the command \`${shown}\` removed guard's checkpoint from before it (${x.pre.checkpoint}: its commit is no longer in git: guard's refs were deleted and git's objects pruned, as \`git update-ref -d\` then \`git gc --prune=now\` do). guard cannot tell what the command changed, and what it took from the work tree is in no copy guard has. Do not carry on: tell the user now, and do not run commands that remove guard's refs or git's objects.`;
  return { outcome: { kind: 'inform', message }, checkpoint: x.cp.id, notes: [] };
}

/** The step before this shell call (this tool call's, or the latest one's): from the session index, else the refs. */
async function preShellOf(
  repo: Repo,
  e: HookEvent,
): Promise<{ commit: string; checkpoint: string } | null> {
  const indexed = await shellPre(repo, e.harness, e.sessionId, e.toolCallId);
  if (indexed !== undefined) return indexed;
  const events = await sessionEventsOnce(repo.root, sessionPrefix(e.harness, e.sessionId));
  const pres = events.filter(
    (x) => x.kind === 'shell' && x.phase === 'pre' && x.worktree === repo.root,
  );
  return (e.toolCallId ? pres.filter((x) => x.toolCall === e.toolCallId) : pres).pop() ?? null;
}

/** What changed between the step before the command (`pre`) and the checkpoint after it (`cp`): losses in git's tree, outside it, and of the gate's own files. */
async function lostSince(
  repo: Repo,
  e: HookEvent,
  {
    pre,
    cp,
    now,
  }: {
    pre: { commit: string };
    cp: Parameters<typeof coverageLoss>[2];
    now: Date;
  },
) {
  const root = repo.root;
  // the checkpoint before the command (the step's parent): what it kept outside git's tree;
  // and HEAD as the step found it (its checkpoint's parent) counts for the policy too
  const [{ config, policy, anchors }, [preCp]] = await Promise.all([
    readSessionPolicy(repo, {
      ...{ harness: e.harness, session: e.sessionId, now },
      also: [`${pre.commit}^^`],
    }),
    catFileBatch(root, [`${pre.commit}^`], READ_CAP),
  ]);
  // the checkpoint from before the command is no longer in git (its refs deleted and its objects
  // pruned by the command itself): nothing to compare with (checkpointGone)
  if (!preCp) return null;
  const { lost, gate: inTree } = await lossesBetween(root, {
    from: pre.commit,
    to: cp.commit,
    config,
    policy,
  });
  // what it took outside the work tree's tree (ignored files, nested repositories, lanes, files over the cap): shell-coverage.ts
  const outside = await coverageLoss(
    root,
    preCp?.type === 'commit' ? (preCp.data ?? null) : null,
    cp,
  );
  const gate = [
    ...new Set([...inTree, ...outside.kept.map((k) => k.path).filter((p) => GATE_FILES.has(p))]),
  ];
  return { lost, outside, gate, anchors };
}

/** What the model is told after a shell command: what it lost (kept by `since`), what went outside git's tree, the gate's own files. */
function afterMessages(
  call: { command: string; session: string; since: string },
  found: {
    lost: Parameters<typeof restoreCommand>[1];
    judged: Judged[];
    outside: Parameters<typeof coverageSentences>[0];
    gate: string[];
  },
): string[] {
  const { command, since } = call;
  const { lost, judged, outside, gate } = found;
  const messages: string[] = [];
  if (lost.length > 0)
    messages.push(
      lossMessage(command, judged, {
        restore: restoreCommand(since, lost),
        rewind: `guard rewind ${shellWord(call.session)}`,
      }),
    );
  const extra = coverageSentences(outside, since, shellWord, lost.length > 0);
  if (extra.length > 0)
    messages.push((lost.length > 0 ? extra : [outsideMessage(command), ...extra]).join(' '));
  if (gate.length > 0) messages.push(gateMessage(gate, since, false));
  return messages;
}

/** The report's head when the command took only what lies outside the work tree's tree. */
function outsideMessage(command: string, note = ''): string {
  const shown = command.length > 80 ? command.slice(0, 77) + '...' : command;
  return `guard: the command \`${shown}\`${note} took work that git does not track. Nothing was undone. Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.`;
}

function restoreCommand(checkpointId: string, lost: Classification[]): string {
  const paths = lost.map((c) => c.oldPath ?? c.path);
  return paths.length <= 20
    ? `guard restore ${checkpointId} -- ${paths.map(shellWord).join(' ')}`
    : `guard restore ${checkpointId}`;
}

interface LossesInput {
  from: string;
  to: string;
  config: Config;
  policy: Policy;
  skip?: ReadonlySet<string>;
  /** Paths the session's writes changed: skipped too, unless gone at `to` (a write tool does not delete them: adv8). */
  written?: ReadonlySet<string>;
  /** Paths compared from what a write left (its step's result commit) instead of `from` (holes7). */
  results?: ReadonlyArray<{ from: string; paths: string[] }>;
}

/**
 * What went from one whole-tree checkpoint to another: a file deleted or
 * replaced that would need approval, or, when lineThreshold lines or more
 * went in all (a `git checkout -- .` over a day of small edits), every
 * file that lost lines.
 */
async function lossesBetween(
  root: string,
  { from, to, config, policy, skip, written, results }: LossesInput,
): Promise<Losses> {
  const gone = (x: DiffEntry) => x.newOid === null || x.oldPath !== undefined;
  const [main, ...fromResults] = await Promise.all([
    treeDiff(root, from, to),
    ...(results ?? []).map((r) => treeDiff(root, r.from, to, { paths: r.paths })),
  ]);
  const resulted = fromResults.flat().filter((x) => x.oldOid !== null);
  const all = [
    ...main!.filter(
      (x) => !skip?.has(x.oldPath ?? x.path) && !(written?.has(x.oldPath ?? x.path) && !gone(x)),
    ),
    ...resulted,
  ];
  // the gate itself: the harness hook configs, guard.config.json, .husky/, whatever the policy protects
  const gate = [
    ...new Set(
      all
        .flatMap((x) => [x.path, ...(x.oldPath !== undefined ? [x.oldPath] : [])])
        .filter((p) => GATE_FILES.has(p) || policy.isProtected(p)),
    ),
  ];
  const entries = all.filter((x) => x.oldOid !== null);
  const { facts } = entries.length
    ? await collectFacts(root, entries, { maxBytes: Math.min(config.maxFileBytes, READ_CAP) })
    : { facts: [] };
  const classified = facts.map((f) => classify(f, policy));
  const total = classified.reduce((n, c) => n + c.linesDeleted, 0);
  return {
    lost: classified.filter(
      (c) =>
        ((c.status === 'delete' || c.status === 'replace') && c.needsApproval) ||
        (total >= config.lineThreshold && c.linesDeleted > 0),
    ),
    gate,
    fromResult: new Set(resulted.map((x) => x.path)),
  };
}

interface Losses {
  /** Paths compared from what a write left (LossesInput.results). */
  fromResult: ReadonlySet<string>;
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
 * check (or its own after-event), in git's tree and outside it (ignored
 * files: shell-coverage.ts), leaving out what the session's own calls since
 * then account for (the files its writes changed, unless gone since; the
 * losses of its other commands: adv8).
 * Each check is a post step of the background call (its lost paths
 * listed), the baseline of the next one. No git process while none is
 * open (the session's events are read once per call anyway); a checkpoint
 * and one fast-import per call while one is.
 */
const BACKGROUND_OPEN_MS = 30 * 60_000;

/** Whether a background command of the session started within BACKGROUND_OPEN_MS (one file read). */
async function backgroundOpen(repo: Repo, e: HookEvent, now: Date): Promise<boolean> {
  const text = await readFile(backgroundMarker(repo, e.harness, e.sessionId), 'utf8').catch(
    () => null,
  );
  const t = text === null ? NaN : Date.parse(text.trim());
  // unreadable or in the future: read the steps (the safe side)
  if (
    text !== null &&
    (Number.isNaN(t) || t > now.getTime() || now.getTime() - t < BACKGROUND_OPEN_MS)
  )
    return true;
  // no marker, or one that says closed: the journal may still say open (a marker removed, or
  // written back to an old time by the session's own shell: adv11), one read of its tail, as a
  // session that never ran one pays on every call
  return backgroundNoted(repo.commonDir, {
    harness: e.harness,
    sessionKey: path.basename(path.dirname(backgroundMarker(repo, e.harness, e.sessionId))),
    now,
    windowMs: BACKGROUND_OPEN_MS,
  });
}

interface Late {
  message: string;
  checkpoint: string;
}

/**
 * What background commands of the session took since the last call (`late`), and the work trees
 * where one is open (`open`: a write there keeps what it leaves with its step, holes7).
 */
export async function reportBackground(
  repos: readonly Repo[],
  e: HookEvent,
  now: Date,
): Promise<{ late: Late[]; open: ReadonlySet<string> }> {
  const out: Late[] = [];
  const openIn = new Set<string>();
  for (const repo of repos) {
    const root = repo.root;
    if (!(await backgroundOpen(repo, e, now))) continue;
    const events = await sessionEventsOnce(root, sessionPrefix(e.harness, e.sessionId));
    // the call's own background command is reported by its own after-event (Gemini names no tool call: the latest shell pre)
    const own =
      e.toolCallId !== null
        ? (x: SessionEvent) => x.toolCall === e.toolCallId
        : (x: SessionEvent) =>
            e.phase === 'post' &&
            e.action.kind === 'shell' &&
            x ===
              events
                .filter((y) => y.kind === 'shell' && y.phase === 'pre' && y.worktree === root)
                .pop();
    const open = events.filter(
      (x) =>
        x.background &&
        x.phase === 'pre' &&
        x.worktree === root &&
        now.getTime() - Date.parse(x.time) < BACKGROUND_OPEN_MS &&
        !own(x),
    );
    if (open.length === 0) continue;
    openIn.add(root);
    const session = { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
    const cp = await shellCheckpoint(repo, {
      reason: `${e.harness} background commands still open`,
      session,
      now,
    });
    const { config, policy, anchors } = await readSessionPolicy(repo, {
      ...{ harness: e.harness, session: e.sessionId, now },
      events,
    });
    const records: RecordCommit[] = [...anchors];
    // newest first: a file several open commands lost is told once, by the one compared from the
    // latest state, naming the others (guard cannot tell which of them took it)
    const told = new Set<string>();
    for (const bg of [...open].reverse()) {
      const others = open.filter((x) => x !== bg).map((x) => x.command ?? '');
      const check = { repo, e, events, cp, config, policy, now, told, others };
      const checked = await checkBackground(check, bg);
      records.push(...checked.records);
      out.push(...checked.late);
    }
    if (records.length) await apply({ gate: 'hook', repo, now, records, target: null });
  }
  return { late: out, open: openIn };
}

interface BackgroundCheck {
  repo: Repo;
  e: HookEvent;
  events: SessionEvent[];
  /** The checkpoint taken now, that each open command is compared with. */
  cp: Parameters<typeof coverageLoss>[2] & { commit: string; id: string };
  config: Awaited<ReturnType<typeof readSessionPolicy>>['config'];
  policy: Awaited<ReturnType<typeof readSessionPolicy>>['policy'];
  now: Date;
  /** Paths an open command checked before this one told at this call: not told again. */
  told: Set<string>;
  /** The session's other open background commands. */
  others: readonly string[];
}

/** One open background command: what it lost since it was last compared (a post step of its own), and what to say. */
async function checkBackground(
  c: BackgroundCheck,
  bg: SessionEvent,
): Promise<{ records: RecordCommit[]; late: Late[] }> {
  const { repo, e, events, cp, now } = c;
  // each check is a post step of the background call: the next one compares from the last
  const mine = (x: SessionEvent) =>
    x.kind === 'shell' &&
    x.phase === 'post' &&
    x.toolCall === bg.toolCall &&
    (bg.toolCall !== null || x.command === bg.command);
  const baseline = events.filter((x) => x.time >= bg.time && mine(x)).pop() ?? bg;
  // what the session's own calls since then account for: its writes, its other commands' losses
  const { accounted, written } = accountedFor(
    events.filter((x) => x.time >= baseline.time && x !== baseline && x !== bg && !mine(x)),
  );
  // a write whose step kept what it leaves: compared from that, not left out (holes7)
  const results = writeResults(events, bg, mine);
  const sides = resultSides(results, accounted);
  const changed = await changedSince(repo.root, sides, cp.commit);
  const { lost, gate, fromResult } = await lossesBetween(repo.root, {
    ...{ from: baseline.commit, to: cp.commit, config: c.config, policy: c.policy },
    ...{ skip: new Set([...accounted, ...results.keys()]), written },
    results: changed,
  });
  // the results found as the writes left them: not compared again (a check's `seen`)
  const differ = new Set(changed.flatMap((x) => x.paths));
  const seen = sides.flatMap((x) => x.paths).filter((p) => !differ.has(p));
  const outside = await outsideSince(repo.root, baseline.commit, cp, accounted);
  const fresh = lost.filter((x) => !c.told.has(x.path));
  const untold = unTold(outside, c.told);
  for (const p of [...fresh, ...outside.kept, ...outside.notKept]) c.told.add(p.path);
  const undone = fresh.filter((x) => fromResult.has(x.path));
  const kept = undone.length ? keptResults(undone, { results, now }) : [];
  const record = sessionCommit(repo, e, {
    commit: cp.commit,
    id: cp.id,
    phase: 'post',
    command: bg.command ?? '',
    now,
    lost: [...lost.map((x) => x.path), ...outside.kept.map((k) => k.path)],
    ...(outside.notKept.length ? { notKept: outside.notKept.map((n) => n.path) } : {}),
    ...(seen.length ? { seen } : {}),
    background: false,
    toolCall: bg.toolCall,
  });
  const shown = bg.command ?? '';
  const note = ' (run in the background)';
  const late: Late[] = kept.length
    ? [{ message: undoneMessage(bg, undone, kept), checkpoint: cp.id }]
    : [];
  const tracked = fresh.filter((x) => !fromResult.has(x.path));
  const extra = coverageSentences(untold, baseline.checkpoint, shellWord, fresh.length > 0);
  if (extra.length > 0)
    late.push({
      message: (fresh.length > 0 ? extra : [outsideMessage(shown, note), ...extra]).join(' '),
      checkpoint: cp.id,
    });
  if (tracked.length > 0) {
    const judged: Judged[] = tracked.map((x) => ({ ...judgedOf(x), needsApproval: true }));
    late.push({
      message:
        lossMessage(
          shown,
          judged,
          {
            // the state it was last compared at (holes7: the command's own checkpoint, from before
            // it started, lacks what the session wrote since)
            restore: restoreCommand(baseline.checkpoint, tracked),
            rewind: `guard rewind ${shellWord(e.sessionId)}`,
          },
          note,
        ) + othersNote(c.others),
      checkpoint: cp.id,
    });
  }
  if (gate.length > 0)
    late.push({ message: gateMessage(gate, baseline.checkpoint, true), checkpoint: cp.id });
  return { records: [record, ...kept.map((k) => k.commit)], late };
}

/**
 * What the session's own calls since the baseline account for. A write accounts for a file it
 * changed (`written`), not for one gone since (no write tool deletes, but a patch or a Delete tool
 * does: `accounted`, with the other commands' losses): where no after event of the write moved the
 * baseline, that file was the session's own edit, then wiped by the background command (adv8).
 */
function accountedFor(later: readonly SessionEvent[]): {
  accounted: Set<string>;
  written: Set<string>;
} {
  const deletes = (x: SessionEvent) => x.kind === 'write' && /patch|delete/i.test(x.tool);
  return {
    accounted: new Set<string>(
      later.flatMap((x) =>
        x.kind === 'write' ? (deletes(x) ? (x.paths ?? []) : []) : (x.lost ?? []),
      ),
    ),
    written: new Set<string>(
      later.flatMap((x) => (x.kind === 'write' && !deletes(x) ? (x.paths ?? []) : [])),
    ),
  };
}

/**
 * Per path, the session's latest write since the background command started whose step kept what
 * it leaves (its second parent: apply's paths target `results`), until a check of the command
 * found the file as the write left it (`seen`) or told it (`lost`). Not only since the last check:
 * a check at a concurrent call may come after the write's step and before the harness wrote the
 * file (holes7). A shell call of the session after the write judged the file itself (its after
 * event), so it ends the write's say.
 */
function writeResults(
  events: readonly SessionEvent[],
  bg: SessionEvent,
  mine: (x: SessionEvent) => boolean,
): Map<string, SessionEvent> {
  const out = new Map<string, SessionEvent>();
  for (const x of events) {
    if (x.time < bg.time || x === bg) continue;
    if (x.kind === 'shell' && x.phase === 'pre') out.clear();
    // a check of this command since found it as the write left it, or told it
    if (mine(x)) for (const p of [...(x.seen ?? []), ...(x.lost ?? [])]) out.delete(p);
    if (x.kind !== 'write') continue;
    for (const p of x.paths ?? []) {
      if (x.result) out.set(p, x);
      else out.delete(p);
    }
  }
  return out;
}

/** The result commits to compare from, each with its paths (those the session's other calls did not account for). */
function resultSides(
  results: ReadonlyMap<string, SessionEvent>,
  accounted: ReadonlySet<string>,
): Array<{ from: string; paths: string[] }> {
  const by = new Map<string, string[]>();
  for (const [p, w] of results) {
    if (accounted.has(p)) continue;
    const from = `${w.commit}^2`;
    by.set(from, [...(by.get(from) ?? []), p]);
  }
  return [...by].map(([from, paths]) => ({ from, paths }));
}

/**
 * The result sides whose files differ now (or are gone): their blob ids asked on the call's
 * cat-file (git/resident.ts withCallCatFile), so the usual case, the file as the write left it,
 * costs no process; only a file that changed since is diffed (lossesBetween).
 */
async function changedSince(
  root: string,
  sides: ReadonlyArray<{ from: string; paths: string[] }>,
  now: string,
): Promise<Array<{ from: string; paths: string[] }>> {
  // (a name with a new line cannot be asked on cat-file's lines: diffed whatever it holds)
  const asked = (p: string) => !p.includes('\n');
  const specs = sides.flatMap((x) =>
    x.paths.filter(asked).flatMap((p) => [`${x.from}:${p}`, `${now}:${p}`]),
  );
  const ids = specs.length ? await catFileBatch(root, specs, 0, () => true) : [];
  let at = 0;
  return sides
    .map((x) => ({
      from: x.from,
      paths: x.paths.filter((p) => {
        if (!asked(p)) return true;
        const [left, there] = [ids[at++], ids[at++]];
        return left?.type === 'blob' && left.oid !== there?.oid;
      }),
    }))
    .filter((x) => x.paths.length > 0);
}

/**
 * What a write left and the background command then took back is kept under a checkpoint ref of
 * its own (the result commit, a partial checkpoint of those paths), so `guard restore ID -- PATH`
 * brings it back: written only when such a loss is found. One per write whose result was taken
 * back (adv11: two writes at once, both undone, were named under the first's, which lacks the
 * second's file).
 */
function keptResults(
  undone: readonly Classification[],
  x: { results: ReadonlyMap<string, SessionEvent>; now: Date },
): Array<{ id: string; paths: string[]; commit: RecordCommit }> {
  const by = new Map<SessionEvent, string[]>();
  for (const u of undone) {
    const w = x.results.get(u.path)!;
    by.set(w, [...(by.get(w) ?? []), u.path]);
  }
  return [...by].map(([first, paths]) => {
    const ref = newRef(REFS.checkpoints, x.now);
    const message = checkpointMessage(
      { root: first.worktree },
      {
        reason: `what ${first.tool} of session ${first.session} left in ${paths.join(', ')}, before a command run in the background changed it`,
        command: 'hook',
        lane: null,
        paths,
        session: { harness: first.harness, session: first.session, toolCall: first.toolCall },
      },
      { now: x.now, head: null, index: null, skipped: [] },
    );
    return {
      id: checkpointId(ref),
      paths,
      commit: { ref, parent: `${first.commit}^2`, message, changes: [] },
    };
  });
}

/** What the model is told when a background command took back what the session's own write left. */
function undoneMessage(
  bg: SessionEvent,
  undone: readonly Classification[],
  kept: ReadonlyArray<{ id: string; paths: string[] }>,
): string {
  const shown = oneLine(bg.command ?? '').slice(0, 80);
  const what = undone
    .slice(0, 10)
    .map((c) =>
      c.status === 'delete'
        ? `${c.path} is gone (${c.linesDeleted} lines)`
        : `${c.path} lost ${c.linesDeleted} of its ${c.existingLines} lines`,
    )
    .join('; ');
  const restores = kept
    .map((k) => `guard restore ${k.id} -- ${k.paths.map(shellWord).join(' ')}`)
    .join(', then ');
  return (
    `guard: files no longer hold what this session's own writes left in them: ${what}. ` +
    `The command \`${shown}\` (run in the background) changed them since, or the write did not run. ` +
    `guard kept what the writes left; to bring it back run: ${restores}. ` +
    `Do not carry on as if your edits were there: tell the user, and stop the background command if it keeps undoing them.`
  );
}

/**
 * What a background command took outside git's tree since it was last compared (ignored files,
 * nested repositories: shell-coverage.ts), as a shell call's after event finds it (adv8: the
 * background check compared git's tree alone). Lanes are the after event's alone.
 */
async function outsideSince(
  root: string,
  baseline: string,
  cp: Parameters<typeof coverageLoss>[2],
  accounted: ReadonlySet<string>,
): Promise<CoverageLoss> {
  const [pre] = await catFileBatch(root, [`${baseline}^`], READ_CAP);
  const found = await coverageLoss(root, pre?.type === 'commit' ? (pre.data ?? null) : null, cp);
  return {
    kept: found.kept.filter((k) => !accounted.has(k.path)),
    notKept: found.notKept.filter((n) => !accounted.has(n.path)),
    lanes: [],
  };
}

/** What the check of an earlier open command told at this call, left out (the lists only, not the records). */
function unTold(found: CoverageLoss, told: ReadonlySet<string>): CoverageLoss {
  return {
    ...found,
    kept: found.kept.filter((k) => !told.has(k.path)),
    notKept: found.notKept.filter((n) => !told.has(n.path)),
  };
}

/** When several background commands of the session are open: guard cannot tell which one took the files. */
function othersNote(others: readonly string[]): string {
  if (others.length === 0) return '';
  const shown = others.map((c) => `\`${c.length > 80 ? c.slice(0, 77) + '...' : c}\``);
  return ` ${others.length === 1 ? 'Another command' : 'Other commands'} of this session may still run in the background (${shown.join(', ')}): guard cannot tell which one did it.`;
}

/** A call's own answer with what background commands destroyed: told after a tool; before one, the call is refused once so the model reads it. */
export function withLate(r: HookResult, late: Late[], phase: 'pre' | 'post'): HookResult {
  if (late.length === 0) return r;
  const message = late.map((l) => l.message).join('\n\n');
  const o = r.outcome;
  let outcome: Outcome;
  if (phase === 'post' || o.kind === 'inform')
    outcome = {
      kind: 'inform',
      message: o.kind === 'inform' ? `${o.message}\n\n${message}` : message,
    };
  else if (o.kind === 'deny' || o.kind === 'ask')
    outcome = { ...o, reason: `${o.reason}\n\n${message}` };
  else
    outcome = {
      kind: 'deny',
      reason: `guard stopped this call to tell you first: ${message} This call did not run; run it again once you have told the user.`,
    };
  return {
    ...r,
    outcome,
    notes: [...r.notes, 'a background command of this session lost work since the last call'],
  };
}
