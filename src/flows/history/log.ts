import { GuardError } from '../../core/errors.js';
import { agentShellWhy } from '../../ui/auto-mode.js';
import { parseRecordMessage, type DecisionRecord } from '../../core/record.js';
import { checkpointId } from '../../git/checkpoint.js';
import { REFS, listRecords, type RefRecord } from '../../git/records.js';
import { apply } from '../../apply/apply.js';
import { openRepo } from '../../git/repo.js';
import { READ_CAP, catFileBatch } from '../../git/catfile.js';
import { git } from '../../git/run.js';
import { readRefStore, type RefName } from '../../git/ref-list.js';
import type { FlowOptions } from '../context.js';
import { isChainTip } from '../../git/session.js';
import { allLinks, chainedRecordsOf, cutChainsOf } from './prune-chains.js';

export interface CheckpointEntry {
  /** What `guard restore` takes. */
  id: string;
  kind: 'checkpoint';
  time: string;
  ref: string;
  commit: string;
  reason: string;
  command: string | null;
  lane: string | null;
  /** For a partial checkpoint (guard write's): the only paths it holds as they were. */
  paths?: string[];
  /** A hook call's checkpoint held by its session's chain (no ref of its own): the chain's ref and the link commit that holds it. */
  chain?: string;
  link?: string;
  /** Untracked files the checkpoint left out, with why (over the size cap, past the time budget, a name git refuses, a nested repository). */
  skipped?: Array<{ path: string; reason: string; bytes?: number }>;
  /** How many were left out (the list above may be cut). */
  skippedCount?: number;
}

export interface DecisionEntry extends Omit<DecisionRecord, 'ref'> {
  /** `<record id>:<n>`: the n-th decision of one recorded batch. */
  id: string;
  kind: 'decision';
  time: string;
  command: string | null;
  lane: string | null;
  /** The record holding this decision. */
  record: string;
  /** The rejected ref holding the refused proposal, if one was made. */
  ref?: string;
  /** A hook call's decision record held by its session's chain (no ref of its own): the chain's ref and the link commit that holds it. */
  chain?: string;
  link?: string;
  /** guard hook: the harness, session and tool call the decision was for. */
  harness?: string;
  session?: string;
  toolCall?: string | null;
}

/** One step of an agent session (`log --session`): the checkpoint a hook call took. */
export interface SessionCheckpointEntry extends CheckpointEntry {
  harness: string;
  session: string;
  toolCall: string | null;
  tool: string;
  phase: 'pre' | 'post';
  /** After a shell call: the paths it destroyed. */
  lost?: string[];
  /** Gone after a shell call and in no checkpoint (over the cap or the budget). */
  notKept?: string[];
}

export type LogEntry = CheckpointEntry | DecisionEntry;

export interface LogResult {
  command: 'log';
  entries: LogEntry[];
  /** Entries left out by --limit. */
  truncated: boolean;
  total: number;
  /** Refs under refs/guard/ that are not readable records (hand-edited?), skipped. */
  skipped: string[];
  /** Set when only the newest records were read (thousands of them): `total` counts each record not read as one entry. */
  totalAtLeast?: boolean;
}

function isoOf(rec: RefRecord, parsed: { time?: unknown }): string {
  if (typeof parsed.time === 'string' && !Number.isNaN(Date.parse(parsed.time)))
    return new Date(parsed.time).toISOString();
  return new Date(rec.time * 1000).toISOString();
}

const optionalString = (v: unknown) => v === undefined || v === null || typeof v === 'string';

/** Every checkpoint and decision from ONE for-each-ref, newest first. */
export async function readLog(cwd: string): Promise<{ entries: LogEntry[]; skipped: string[] }> {
  return entriesOf(await listRecords(cwd, REFS.root));
}

/** Above this many records `guard log` reads only the newest (issue 22: 100,000 refs under refs/guard/). */
const READ_ALL_MAX = 2000;

/**
 * The log for `guard log --limit N`: the names of the records first, then
 * the messages with one cat-file: all of them up to READ_ALL_MAX records,
 * else the newest N checkpoints and N decision records (names start with
 * their time; each record holds one decision or more), and `total` counts
 * each record not read as one entry (`atLeast`). The names come from the
 * ref store's files (git/ref-list.ts: a binary search of packed-refs and
 * the loose folders, no process, nothing split per ref), else from one
 * for-each-ref of names only: at 100,000 refs listing and sorting them in
 * node was most of what was left (~3x a repository without them).
 */
async function readLogNewest(
  repo: { root: string; commonDir: string },
  limit: number,
): Promise<{ entries: LogEntry[]; skipped: string[]; atLeast: boolean; total: number }> {
  const [{ chosen: byRef, count: refCount }, chained] = await Promise.all([
    (async () =>
      (await newestFromStore(repo.commonDir, limit)) ?? (await newestFromGit(repo.root, limit)))(),
    chainedRecords(repo, limit),
  ]);
  const chosen = [...byRef, ...chained.chosen];
  const count = refCount + chained.count;
  const atLeast = refCount > READ_ALL_MAX || chained.more;
  const objs = await catFileBatch(
    repo.root,
    chosen.map((x) => x.oid),
    READ_CAP,
  );
  const records: RefRecord[] = chosen.map((x, i) => {
    const raw = objs[i]?.type === 'commit' && objs[i]!.data ? objs[i]!.data!.toString('utf8') : '';
    // "tree <oid>\nparent <oid>\n...committer <name> <email> <unix> <tz>\n\n<message>"
    const head = raw.slice(0, Math.max(0, raw.indexOf('\n\n')));
    const time = Number(/^committer .* (\d+) [+-]\d{4}$/m.exec(head)?.[1] ?? 0);
    const parent = /^parent ([0-9a-f]+)$/m.exec(head)?.[1] ?? null;
    const oid = objs[i]?.oid ?? x.oid;
    return { ref: x.ref, oid, time, parent, message: raw ? raw.slice(head.length + 2) : '' };
  });
  const { entries, skipped } = entriesOf(records);
  placeChained(entries, chained.chosen);
  placeLost(entries, chained.lost);
  return { entries, skipped, atLeast, total: entries.length + (count - chosen.length) };
}

type Chosen = { chosen: RefName[]; count: number };

/**
 * A chained record's entry names its chain and link: its `ref` (checkpoint) or `record`
 * (decision) is a name guard takes, not a ref git resolves; `git show LINK` shows the link, whose
 * parents are the previous link, the step (whose parent is the checkpoint) and the decision records.
 */
function placeChained(
  entries: LogEntry[],
  chosen: ReadonlyArray<{ ref: string; chain: string; link: string }>,
): void {
  const at = new Map(chosen.map((c) => [c.ref, c]));
  for (const e of entries) {
    const c = at.get(e.kind === 'checkpoint' ? e.ref : e.record);
    if (c) Object.assign(e, { chain: c.chain, link: c.link });
  }
}

/** What a session step's shell command destroyed, named beside its checkpoint (as `log --session` does). */
type LostNote = { ref: string; lost?: string[]; notKept?: string[] };

function placeLost(entries: LogEntry[], notes: readonly LostNote[]): void {
  const at = new Map(notes.map((n) => [n.ref, n]));
  for (const e of entries) {
    const n = e.kind === 'checkpoint' ? at.get(e.ref) : undefined;
    if (n?.lost) Object.assign(e, { lost: n.lost });
    if (n?.notKept) Object.assign(e, { notKept: n.notKept });
  }
}

/** A chained record's place: its session's chain and the link that holds it (`guard log --json`). */
type ChainedName = RefName & { chain: string; link: string };

/**
 * The records of hook calls reached through the session chains (git/session-chain.ts), named as
 * their refs would have been: each link's checkpoint (`<step>^`) and decision records, of the
 * newest `limit` + 1 links that hold one (chosen by git: `holding`), so `--limit N` reads O(N)
 * links however long the chains are. `more`: older links were not read (the count is at least).
 * Counting them would read them all: guard keeps no count of a chain's records.
 */
async function chainedRecords(
  repo: { root: string; commonDir: string },
  limit: number,
): Promise<{ chosen: ChainedName[]; count: number; more: boolean; lost: LostNote[] }> {
  const { chainTips, readLinks } = await import('../../git/session-chain.js');
  const tips = await chainTips(repo);
  if (tips.length === 0) return { chosen: [], count: 0, more: false, lost: [] };
  const links = await readLinks(repo.root, tips, { limit: limit + 1, holding: true });
  const chosen = links.flatMap((l) =>
    [
      ...(l.held
        ? [{ ref: REFS.checkpoints + l.event.checkpoint, oid: `${l.event.commit}^` }]
        : []),
      ...l.records.map((r) => ({ ref: REFS.decisions + r.name, oid: r.commit })),
    ].map((x) => ({ ...x, chain: l.chain, link: l.link })),
  );
  const lost = links.flatMap(({ event: e }) =>
    e.lost?.length || e.notKept?.length
      ? [
          {
            ref: REFS.checkpoints + e.checkpoint,
            ...(e.lost?.length ? { lost: e.lost } : {}),
            ...(e.notKept?.length ? { notKept: e.notKept } : {}),
          },
        ]
      : [],
  );
  return { chosen, count: chosen.length, more: links.length > limit, lost };
}

/** The records to read, from the ref store's files; null when only git can list them. */
async function newestFromStore(commonDir: string, limit: number): Promise<Chosen | null> {
  const store = await readRefStore(commonDir);
  if (!store) return null;
  const count = store.count(REFS.checkpoints) + store.count(REFS.decisions);
  const kinds = [REFS.checkpoints, REFS.decisions];
  const chosen =
    count > READ_ALL_MAX
      ? kinds.flatMap((k) => store.newest(k, limit))
      : kinds.flatMap((k) => store.all(k));
  return { chosen, count };
}

/** The same from one for-each-ref of names (reftable, or a ref store git wrote otherwise). */
async function newestFromGit(cwd: string, limit: number): Promise<Chosen> {
  const r = await git(
    ['for-each-ref', '--format=%(refname) %(objectname)', REFS.checkpoints, REFS.decisions],
    { cwd },
  );
  const refs = r.stdout
    .toString('utf8')
    .split('\n')
    .flatMap((l) => {
      const [ref, oid] = l.split(' ');
      return ref && oid ? [{ ref, oid }] : [];
    });
  if (refs.length <= READ_ALL_MAX) return { chosen: refs, count: refs.length };
  const newest = (prefix: string) =>
    refs
      .filter((x) => x.ref.startsWith(prefix))
      .sort((a, b) => (a.ref < b.ref ? 1 : -1))
      .slice(0, limit);
  return { chosen: [...newest(REFS.checkpoints), ...newest(REFS.decisions)], count: refs.length };
}

function entriesOf(records: RefRecord[]): { entries: LogEntry[]; skipped: string[] } {
  const entries: LogEntry[] = [];
  const skipped: string[] = [];
  for (const rec of records) {
    const isCheckpoint = rec.ref.startsWith(REFS.checkpoints);
    // rejected refs are reached from their decision; other prefixes (lanes) are not records
    if (!isCheckpoint && !rec.ref.startsWith(REFS.decisions)) continue;
    const parsed = parseRecordMessage(rec.message.replace(/\n$/, ''));
    const read = parsed
      ? isCheckpoint
        ? [checkpointEntry(rec, parsed)]
        : decisionEntries(rec, parsed)
      : null;
    if (read) entries.push(...read);
    else skipped.push(rec.ref);
  }
  // Newest first; ref names sort by time too (ids start with a timestamp), decisions of a batch in their order.
  const order = new Map(entries.map((e, i) => [e, i]));
  entries.sort((a, b) =>
    a.time !== b.time
      ? a.time < b.time
        ? 1
        : -1
      : refOf(b).localeCompare(refOf(a)) || order.get(a)! - order.get(b)!,
  );
  return { entries, skipped };
}

type Parsed = NonNullable<ReturnType<typeof parseRecordMessage>>;

function checkpointEntry(rec: RefRecord, parsed: Parsed): CheckpointEntry {
  const p = parsed as typeof parsed & {
    paths?: unknown;
    partial?: unknown;
    skipped?: unknown;
    skippedCount?: unknown;
  };
  const e: CheckpointEntry = {
    id: checkpointId(rec.ref),
    kind: 'checkpoint',
    time: isoOf(rec, parsed),
    ref: rec.ref,
    commit: rec.oid,
    reason: typeof parsed.reason === 'string' ? parsed.reason : rec.message.split('\n')[0]!,
    command: parsed.command ?? null,
    lane: parsed.lane ?? null,
  };
  if (p.partial && Array.isArray(p.paths))
    e.paths = p.paths.filter((x): x is string => typeof x === 'string');
  if (Array.isArray(p.skipped)) {
    e.skipped = p.skipped.filter(
      (x): x is { path: string; reason: string; bytes?: number } =>
        typeof x?.path === 'string' && typeof x?.reason === 'string',
    );
    e.skippedCount = typeof p.skippedCount === 'number' ? p.skippedCount : e.skipped.length;
  }
  return e;
}

/** A decision record's entries, one per file; null when the record is not one guard could have written. */
function decisionEntries(rec: RefRecord, parsed: Parsed): LogEntry[] | null {
  if (!Array.isArray(parsed.decisions)) return null;
  const recordId = rec.ref.slice(REFS.decisions.length);
  // A hand-edited record with wrong types is reported, not dropped in silence.
  const wellTyped = parsed.decisions.every(
    (d) =>
      typeof d === 'object' &&
      d !== null &&
      typeof d.path === 'string' &&
      typeof d.decision === 'string',
  );
  if (!wellTyped || !optionalString(parsed.command) || !optionalString(parsed.lane)) return null;
  const who = parsed as typeof parsed & {
    harness?: unknown;
    session?: unknown;
    toolCall?: unknown;
  };
  const sessionOf =
    typeof who.session === 'string'
      ? {
          harness: String(who.harness ?? ''),
          session: who.session,
          toolCall: typeof who.toolCall === 'string' ? who.toolCall : null,
        }
      : {};
  return parsed.decisions.map((d, n) => ({
    ...d,
    ...sessionOf,
    id: `${recordId}:${n}`,
    kind: 'decision' as const,
    time: isoOf(rec, parsed),
    command: parsed.command ?? null,
    lane: parsed.lane ?? null,
    record: rec.ref,
  }));
}

function refOf(e: LogEntry): string {
  return e.kind === 'checkpoint' ? e.ref : e.record;
}

export async function log(
  opts: FlowOptions & { limit: number; session?: string },
): Promise<LogResult> {
  const repo = await openRepo(opts.cwd);
  const limit = Math.max(0, Math.floor(opts.limit));
  if (opts.session === undefined) {
    const r = await readLogNewest(repo, limit);
    return {
      command: 'log',
      entries: r.entries.slice(0, limit),
      truncated: r.total > limit,
      total: r.total,
      skipped: r.skipped,
      ...(r.atLeast ? { totalAtLeast: true } : {}),
    };
  }
  const { entries, skipped } = await readSessionLog(repo.root, opts.session);
  return {
    command: 'log',
    entries: entries.slice(0, limit),
    truncated: entries.length > limit,
    total: entries.length,
    skipped,
  };
}

export interface PruneOptions extends FlowOptions {
  /** Delete what is older than this many milliseconds. */
  olderThanMs?: number;
  /** Keep the newest N (of each kind pruned). */
  keep?: number;
  includeRejected: boolean;
}

export interface PruneResult {
  command: 'log';
  pruned: { checkpoints: number; rejected: number; decisions: number };
  refs: string[];
}

const UNITS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 };

/** "30d", "12h", "90m", "2w" -> milliseconds. */
export function parseAge(text: string): number {
  const m = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!m)
    throw new GuardError(
      'E_USAGE',
      `--older-than "${text}" is not an age`,
      'write a number and a unit: 30d, 12h, 90m, 2w',
    );
  return Number(m[1]) * UNITS[m[2]!]!;
}

/** What refuses a prune before it reads anything: an agent's shell, no limit, a bad count. */
async function pruneAllowed(opts: PruneOptions): Promise<void> {
  // guard's own removal is noted in its journal, so nothing says anything after it: from an agent's
  // command tool, `--prune --keep 0 --include-rejected` took every refused change's ref and record
  // and every checkpoint with no word (adv5). Only a person prunes. Read from the processes above
  // too: the agent unsets CLAUDECODE in its own command (holes6).
  const agent = agentShellWhy();
  if (agent)
    throw new GuardError(
      'E_USAGE',
      `guard log --prune removes guard's checkpoints and records: a person runs it, not an agent's command tool (${agent})`,
      'ask the user to run it in their own terminal',
    );
  if (opts.olderThanMs === undefined && opts.keep === undefined) {
    throw new GuardError(
      'E_USAGE',
      '--prune needs --older-than AGE or --keep N',
      'for example: guard log --prune --older-than 30d',
    );
  }
  if (opts.keep !== undefined && (!Number.isInteger(opts.keep) || opts.keep < 0)) {
    throw new GuardError(
      'E_USAGE',
      `--keep ${opts.keep} is not a count`,
      'give a whole number, 0 or more',
    );
  }
}

/**
 * Delete old checkpoint refs (and with includeRejected, rejected refs and
 * decision records too) in ONE `update-ref --stdin` transaction; each delete
 * names the value it saw, so a ref moved meanwhile is not lost.
 */
export async function prune(opts: PruneOptions): Promise<PruneResult> {
  await pruneAllowed(opts);
  const repo = await openRepo(opts.cwd);
  const [refs, links] = await Promise.all([listRecords(repo.root, REFS.root), allLinks(repo)]);
  // a hook call's checkpoint and decisions that only a session chain holds count as records too
  const chained = chainedRecordsOf(links);
  const all = [...refs, ...chained.keys()];
  const kinds = [
    REFS.checkpoints,
    ...(opts.includeRejected ? [REFS.rejected, REFS.decisions] : []),
  ];
  const now = (opts.now ?? new Date()).getTime();
  const doomed: RefRecord[] = [];
  for (const prefix of kinds) {
    // newest first: by committer time, then by name (which starts with the time)
    const mine = all
      .filter((r) => r.ref.startsWith(prefix))
      .sort((a, b) => b.time - a.time || b.ref.localeCompare(a.ref));
    mine.forEach((r, i) => {
      const tooMany = opts.keep !== undefined && i >= opts.keep;
      const tooOld = opts.olderThanMs !== undefined && now - r.time * 1000 > opts.olderThanMs;
      if (tooMany || tooOld) doomed.push(r);
    });
  }
  // A session's step (refs/guard/sessions/, guard hook) goes with its checkpoint, or with age:
  // left behind, it would keep the pruned checkpoint's objects alive.
  const gone = new Set(
    doomed.filter((r) => r.ref.startsWith(REFS.checkpoints)).map((r) => checkpointId(r.ref)),
  );
  const sessions = refs.filter((r) => r.ref.startsWith(`${REFS.root}sessions/`));
  for (const r of sessions.filter((x) => !isChainTip(x.ref))) {
    const step = parseRecordMessage(r.message.replace(/\n$/, '')) as {
      checkpoint?: unknown;
    } | null;
    const tooOld = opts.olderThanMs !== undefined && now - r.time * 1000 > opts.olderThanMs;
    if (tooOld || (typeof step?.checkpoint === 'string' && gone.has(step.checkpoint)))
      doomed.push(r);
  }
  const cuts = cutChainsOf(links, {
    doomed: new Set(doomed.filter((r) => chained.has(r)).map((r) => r.ref)),
    gone,
    tooOld: (t) => opts.olderThanMs !== undefined && now - t * 1000 > opts.olderThanMs,
  });
  const dead = new Set([
    ...doomed.map((r) => r.ref),
    ...cuts.chains.filter((c) => c.keep.length === 0).map((c) => c.ref),
  ]);
  doomed.push(...orphanAnchors(sessions, dead));
  await apply({
    gate: 'log',
    repo,
    now: new Date(now),
    records: [],
    target: { kind: 'prune', refs: doomed.filter((r) => !chained.has(r)), chains: cuts },
  });
  const count = (prefix: string) => doomed.filter((r) => r.ref.startsWith(prefix)).length;
  return {
    command: 'log',
    pruned: {
      checkpoints: count(REFS.checkpoints),
      rejected: count(REFS.rejected),
      decisions: count(REFS.decisions),
    },
    refs: doomed.map((r) => r.ref),
  };
}

/**
 * One agent session: the checkpoint of each of its hook calls (from its
 * events under refs/guard/sessions/, whichever checkpoint they reused) and
 * the decisions recorded for it, newest first.
 */
export async function readSessionLog(
  root: string,
  session: string,
): Promise<{ entries: LogEntry[]; skipped: string[] }> {
  const { readSessionEvents, SESSION_REFS, sessionKey } = await import('../../git/session.js');
  const [events, all] = await Promise.all([
    readSessionEvents(root, `${SESSION_REFS}*/${sessionKey(session)}/*`),
    readLog(root),
  ]);
  if (
    events.length === 0 &&
    !all.entries.some((e) => e.kind === 'decision' && e.session === session)
  ) {
    throw new GuardError(
      'E_USAGE',
      `no session "${session}"`,
      'guard log lists every decision with its session',
    );
  }
  const steps: SessionCheckpointEntry[] = events.map((e) => ({
    id: e.checkpoint,
    kind: 'checkpoint',
    time: e.time,
    ref: REFS.checkpoints + e.checkpoint,
    commit: e.commit,
    reason:
      e.kind === 'shell'
        ? `${e.phase === 'pre' ? 'before' : 'after'} shell: ${e.command ?? ''}`
        : `before ${e.tool} (${e.outcome ?? 'allow'})`,
    command: 'hook',
    lane: null,
    ...(e.paths ? { paths: e.paths } : {}),
    harness: e.harness,
    session: e.session,
    toolCall: e.toolCall,
    tool: e.tool,
    phase: e.phase,
    ...(e.lost?.length ? { lost: e.lost } : {}),
    ...(e.notKept?.length ? { notKept: e.notKept } : {}),
    ...(e.chain && e.link ? { chain: e.chain, link: e.link } : {}),
  }));
  const decisions = all.entries.filter((e) => e.kind === 'decision' && e.session === session);
  const entries: LogEntry[] = [...steps, ...decisions, ...(await chainedDecisions(root, events))];
  entries.sort((a, b) => (a.time !== b.time ? (a.time < b.time ? 1 : -1) : 0));
  return { entries, skipped: all.skipped };
}

/** The decisions recorded with a session's chained steps (git/session-chain.ts): one cat-file. */
async function chainedDecisions(
  root: string,
  events: ReadonlyArray<{
    records?: Array<{ name: string; commit: string }>;
    chain?: string;
    link?: string;
  }>,
): Promise<LogEntry[]> {
  const recs = events.flatMap((e) =>
    (e.records ?? []).map((r) => ({ ...r, chain: e.chain ?? '', link: e.link ?? '' })),
  );
  if (recs.length === 0) return [];
  const objs = await catFileBatch(
    root,
    recs.map((r) => r.commit),
    READ_CAP,
  );
  const records: RefRecord[] = recs.map((r, i) => {
    const raw = objs[i]?.type === 'commit' && objs[i]!.data ? objs[i]!.data!.toString('utf8') : '';
    const at = raw.indexOf('\n\n');
    const time = Number(/^committer .* (\d+) [+-]\d{4}$/m.exec(raw.slice(0, at))?.[1] ?? 0);
    const message = at >= 0 ? raw.slice(at + 2) : '';
    return { ref: REFS.decisions + r.name, oid: r.commit, time, parent: null, message };
  });
  const entries = entriesOf(records).entries.filter((e) => e.kind === 'decision');
  placeChained(
    entries,
    recs.map((r) => ({ ref: REFS.decisions + r.name, chain: r.chain, link: r.link })),
  );
  return entries;
}

/** A session's policy anchors (git/session-policy.ts) go with the last of its steps. */
function orphanAnchors(sessions: readonly RefRecord[], doomed: ReadonlySet<string>): RefRecord[] {
  const anchor = /^(refs\/guard\/sessions\/[^/]+\/[^/]+\/)policy\//;
  const live = new Set(
    sessions
      .filter((r) => !anchor.test(r.ref) && !doomed.has(r.ref))
      .map((r) => r.ref.slice(0, r.ref.lastIndexOf('/') + 1)),
  );
  return sessions.filter((r) => {
    const m = anchor.exec(r.ref);
    return m !== null && !doomed.has(r.ref) && !live.has(m[1]!);
  });
}
