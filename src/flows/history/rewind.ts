import { GuardError } from '../../core/errors.js';
import { apply } from '../../apply/apply.js';
import type { Checkpoint } from '../../git/checkpoint.js';
import { openRepo } from '../../git/repo.js';
import type { RestoreChange } from '../../git/restore.js';
import {
  changedPathsOfPairs,
  ANY_LEFT,
  keptChangesOfPairs,
  keptOfCheckpoints,
  type KeptChange,
  type KeptGroup,
  type KeptOf,
  type PutBackGroup,
} from '../../git/rewind.js';
import { readRefStore } from '../../git/ref-list.js';
import {
  SESSION_REFS,
  readSessionEvents,
  sessionKey,
  sortEvents,
  type SessionEvent,
} from '../../git/session.js';
import { laneOf, type FlowOptions } from '../context.js';

export interface RewindOptions extends FlowOptions {
  /** The session id; the latest session in this work tree when absent. */
  session?: string;
  /** A checkpoint id of the session: rewind only what it wrote from there on. */
  to?: string;
}

export interface RewindResult {
  command: 'rewind';
  harness: string;
  session: string;
  /** The checkpoint the rewind starts from (the session's first, or --to). */
  from: string;
  changes: RestoreChange[];
  /** Paths the session wrote that already hold their earlier content. */
  unchanged: number;
  /** `guard restore UNDO` puts back the state from before the rewind. */
  undo: string;
  warnings: string[];
}

const LOCK_WAIT_MS = 10_000;

/**
 * Every event of one session (or of the latest one), oldest first, in the
 * work tree it wrote: this one when it wrote here, else its own (a lane's
 * `guard run` session rewound from the main tree).
 */
export async function sessionEvents(
  repo: { root: string; commonDir: string },
  session: string | undefined,
): Promise<SessionEvent[]> {
  const root = repo.root;
  const pattern =
    session === undefined ? SESSION_REFS : `${SESSION_REFS}*/${sessionKey(session)}/*`;
  const found = await journaledOnly(
    repo.commonDir,
    (session === undefined ? await latestSessions(repo) : null) ??
      (await readSessionEvents(root, pattern)),
  );
  const here = found.filter((e) => e.worktree === root);
  const all =
    here.length > 0 || session === undefined
      ? here
      : found.filter((e) => e.worktree === found[found.length - 1]!.worktree);
  if (all.length === 0) {
    throw new GuardError(
      'E_USAGE',
      session === undefined
        ? 'no agent session has written here yet'
        : `no session "${session}" in ${root}`,
      'guard log --session ID lists what a session did; the ids are in guard log',
    );
  }
  if (session !== undefined) return all;
  const last = all[all.length - 1]!;
  return all.filter((e) => e.harness === last.harness && e.session === last.session);
}

/** A step's ref name holds its time to the second, from the clock its message's time came from. */
const NAME_SLACK_MS = 10 * 60_000;

/**
 * Without a session named: the events here of the latest sessions only,
 * not every session's steps (at 100,000 refs under refs/guard/ reading them
 * all made `guard rewind` ~5x a repository without them). The session
 * folders come from the ref store's files (git/ref-list.ts, names only),
 * newest step first (names start with their time); they are read one, then two, four... at
 * a time until the next folder's newest step is older, by its name, than
 * the latest event found here (with NAME_SLACK_MS to spare). Null when only
 * git can list the refs: then every step is read, as before.
 */
/**
 * The events of the chains guard's journal names, when it names some of them: a chain planted by
 * hand (a session of its own, newer than the last real one, or the same session under another
 * harness's name) holds links guard never wrote, and rewinding them wrote what the agent forged
 * (adv9). When it names none (a chain compacted out of the journal, past its newest 5,000 refs, or
 * no journal), every chain is read, as before.
 */
async function journaledOnly(commonDir: string, events: SessionEvent[]): Promise<SessionEvent[]> {
  const chains = [...new Set(events.flatMap((e) => (e.chain ? [e.chain] : [])))];
  const out = await unjournaledChains(commonDir, chains);
  return out.size === 0 ? events : events.filter((e) => !e.chain || !out.has(e.chain));
}

/** Does guard's journal name this chain as live (its tail first)? True when there is no journal to ask. */
async function journaledHere(commonDir: string, chain: string): Promise<boolean> {
  const { journalFile, journaledUnder } = await import('../../git/journal.js');
  const { stat } = await import('node:fs/promises');
  if (!(await stat(journalFile(commonDir)).catch(() => null))) return true;
  return (await journaledUnder(commonDir, SESSION_REFS, [chain])).has(chain);
}

/** Of `chains`, those guard's journal has no word on while it names others (journaledOnly). */
async function unjournaledChains(commonDir: string, chains: string[]): Promise<Set<string>> {
  if (chains.length < 2) return new Set();
  // (one read of the journal, then a lookup per chain: a repository may hold thousands)
  const { journaledUnder } = await import('../../git/journal.js');
  const live = await journaledUnder(commonDir, SESSION_REFS, chains);
  const out = chains.filter((c) => !live.has(c));
  return out.length === 0 || out.length === chains.length ? new Set() : new Set(out);
}

async function latestSessions(here: {
  root: string;
  commonDir: string;
}): Promise<SessionEvent[] | null> {
  const store = await readRefStore(here.commonDir);
  if (!store) return null;
  const newest = new Map<string, number>();
  const chains: string[] = [];
  // folder by folder (two binary searches each), never every step: refs/guard/sessions/<harness>/<key>/
  const end = `${SESSION_REFS.slice(0, -1)}0`;
  for (let at = store.firstIn(SESSION_REFS, end); at !== null;) {
    const [harness, key] = at.slice(SESSION_REFS.length).split('/');
    if (key === undefined || !at.slice(SESSION_REFS.length + harness!.length + 1).includes('/')) {
      at = store.firstIn(`${at}\0`, end); // a ref that is no session's step
      continue;
    }
    const folder = `${SESSION_REFS}${harness}/${key}/`;
    const past = `${folder.slice(0, -1)}0`;
    // steps are named by their time (a digit first); the policy anchors are under policy/
    const step = store.lastIn(folder, `${folder}:`);
    // the session's chain (git/session-chain.ts): its newest step's time is its tip's, read below
    const chain = `${folder}chain`;
    if (store.firstIn(chain, `${chain}\0`) === chain) chains.push(folder);
    const odd =
      store.firstIn(`${folder}:`, chain) ??
      store.firstIn(`${chain}\0`, `${folder}policy/`) ??
      store.firstIn(`${folder}policy0`, past);
    const t = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z/.exec(step?.slice(folder.length) ?? '');
    // a step whose name does not start with a time (or another name there) is always read
    const ms =
      odd !== null || (step !== null && !t)
        ? Infinity
        : t
          ? Date.UTC(+t[1]!, +t[2]! - 1, +t[3]!, +t[4]!, +t[5]!, +t[6]!)
          : -Infinity;
    if (ms > -Infinity) newest.set(folder, ms);
    at = store.firstIn(past, end);
  }
  for (const [folder, ms] of await chainTimes(here.root, chains))
    newest.set(folder, Math.max(newest.get(folder) ?? -Infinity, ms));
  // the latest session is not one planted by hand beside guard's (journaledOnly): the newest
  // chain is in the journal's tail, so the whole journal is read only when it is not
  const newestChain = [...newest].sort((a, b) => b[1] - a[1]).find(([f]) => chains.includes(f));
  if (newestChain && !(await journaledHere(here.commonDir, `${newestChain[0]}chain`))) {
    const planted = await unjournaledChains(
      here.commonDir,
      chains.map((f) => `${f}chain`),
    );
    for (const f of chains) if (planted.has(`${f}chain`)) newest.delete(f);
  }
  const folders = [...newest].sort((a, b) => b[1] - a[1]);
  const found: SessionEvent[] = [];
  let latest = -Infinity;
  // one session, then two, four...: a few git processes however many sessions wrote elsewhere
  for (let i = 0, n = 1; i < folders.length; i += n, n *= 2) {
    if (folders[i]![1] < latest - NAME_SLACK_MS) break;
    const batch = folders.slice(i, i + n).map(([f]) => f);
    for (const e of await readSessionEvents(here.root, batch)) {
      if (e.worktree !== here.root) continue;
      found.push(e);
      latest = Math.max(latest, Date.parse(e.time) || Infinity);
    }
  }
  return sortEvents(found);
}

/** Each chained session folder's newest step time (its chain tip's commit time), with one for-each-ref. */
async function chainTimes(root: string, folders: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (folders.length === 0) return out;
  const { git } = await import('../../git/run.js');
  const r = await git(
    [
      'for-each-ref',
      '--format=%(refname) %(committerdate:unix)',
      ...folders.map((f) => `${f}chain`),
    ],
    { cwd: root },
  );
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [ref, t] = line.split(' ');
    if (ref?.endsWith('/chain') && t) out.set(ref.slice(0, -'chain'.length), Number(t) * 1000);
  }
  return out;
}

/**
 * Put back every path the session wrote (its file writes and whatever its
 * shell commands changed) as it was before the session first wrote it
 * from the chosen point on; no other file is touched. The work tree is
 * checkpointed first, so `guard restore UNDO` undoes the rewind.
 */
export async function rewind(opts: RewindOptions): Promise<RewindResult> {
  const here = await openRepo(opts.cwd);
  const all = await sessionEvents(here, opts.session);
  const repo = all[0]!.worktree === here.root ? here : await openRepo(all[0]!.worktree);
  let start = 0;
  if (opts.to !== undefined) {
    const id = opts.to.replace(/^refs\/guard\/checkpoints\//, '');
    start = all.findIndex((e) => e.checkpoint === id);
    if (start === -1)
      throw new GuardError(
        'E_NO_CHECKPOINT',
        `checkpoint "${opts.to}" is not one of session ${all[0]!.session}'s`,
        `guard log --session ${all[0]!.session} lists them`,
      );
  }
  const events = all.slice(start);
  const { harness, session } = events[0]!;

  const warnings: string[] = [];
  const lock = { holder: `guard rewind ${session}`, waitMs: LOCK_WAIT_MS };
  const groups = (undo: Checkpoint) => putBackGroups(repo.root, { events, harness, session, undo });
  const { checkpoint: undo, done } = await apply({
    gate: 'rewind',
    repo,
    now: new Date(),
    records: [],
    target: { kind: 'rewind', lock, warnings, session, lane: laneOf(repo.root), groups },
  });
  return {
    command: 'rewind',
    harness,
    session,
    from: events[0]!.checkpoint,
    changes: done.changes,
    unchanged: done.paths - done.changes.length,
    undo: undo!.id,
    warnings,
  };
}

interface PutBackInput {
  events: SessionEvent[];
  harness: string;
  session: string;
  undo: Checkpoint;
}

/**
 * Which paths go back to which checkpoint: per path, the earliest state the
 * session saw from its first event on. Each shell call's changes are its
 * checkpoint before vs after (its post event); without one (no after-event
 * came, or the command ran in the background and went on after it), vs
 * `undo` (now), but only files that were there before it, and none that
 * another session wrote or lost since.
 */
async function putBackGroups(
  root: string,
  { events, harness, session, undo }: PutBackInput,
): Promise<{ groups: PutBackGroup[]; kept: KeptGroup[]; paths: number }> {
  const shells = shellPairs(events);
  const unpaired = shells.some((s) => s.after === null);
  const others = unpaired
    ? (await readSessionEvents(root, SESSION_REFS)).filter(
        (x) => x.worktree === root && !(x.harness === harness && x.session === session),
      )
    : [];
  // what the other sessions' shell calls changed (before vs their after-event), in the same batch
  const theirShells = theirPairs(others);
  const [changed, keptChanged] = await Promise.all([
    changedPathsOfPairs(root, [
      ...shells.map((s): [string, string] | [string, string, 'existing'] =>
        s.after ? [s.e.commit, s.after] : [s.e.commit, undo.commit, 'existing'],
      ),
      ...theirShells.map((t) => t.pair),
    ]),
    keptChangesOf(root, shells, undo),
  ]);
  const theirChanges = theirShells.map((t, i) => ({
    time: t.x.time,
    paths: changed[shells.length + i]!,
  }));
  // an unpaired call's changes leave out what other sessions wrote or lost since it started
  const theirs = (s: { e: SessionEvent }) =>
    new Set([
      ...others
        .filter((x) => x.time >= s.e.time)
        .flatMap((x) => (x.kind === 'write' ? (x.paths ?? []) : (x.lost ?? []))),
      ...theirChanges.filter((t) => t.time >= s.e.time).flatMap((t) => t.paths),
    ]);
  const byEvent = new Map(
    shells.map((s, i) => {
      if (s.after) return [s.e, changed[i]!];
      const t = theirs(s);
      return [s.e, changed[i]!.filter((p) => !t.has(p))];
    }),
  );
  const keptBy = new Map(
    shells.map((s, i) => {
      const t = s.after ? null : theirs(s);
      return [s.e, keptChanged.changes[i]!.filter((c) => !t?.has(c.path))];
    }),
  );
  // per path, the earliest state the session saw from `start` on
  const owner = new Map<string, SessionEvent>();
  for (const e of events) {
    if (e.phase !== 'pre') continue;
    const paths = e.kind === 'write' ? (e.paths ?? []) : (byEvent.get(e) ?? []);
    for (const p of paths) if (!owner.has(p)) owner.set(p, e);
  }
  const forced = keptOverWrites(shells, keptBy, { owner, events });
  const groups = new Map<string, PutBackGroup>();
  for (const [p, e] of owner) {
    const g = groups.get(e.commit) ?? { commit: e.commit, paths: [] };
    g.paths.push(p);
    groups.set(e.commit, g);
  }
  const kept = keptGroupsOf(shells, { keptBy, sides: keptChanged.sides, owned: owner, forced });
  return {
    groups: [...groups.values()],
    kept,
    paths: owner.size + kept.reduce((n, g) => n + g.paths.length, 0),
  };
}

/**
 * Kept files (ignored, nested repositories') a command of the session took and a later write of
 * the session wrote (adv11: `rm .env`, then write_file .env): the command's checkpoint kept the
 * earlier state, the write's checkpoint holds only what the command left, so the kept copy goes
 * back whatever the write left there (the undo checkpoint keeps that). Taken out of `owner`.
 */
function keptOverWrites(
  shells: ReadonlyArray<{ e: SessionEvent }>,
  keptBy: ReadonlyMap<SessionEvent, KeptChange[]>,
  { owner, events }: { owner: Map<string, SessionEvent>; events: readonly SessionEvent[] },
): Set<string> {
  const forced = new Set<string>();
  for (const s of shells)
    for (const c of keptBy.get(s.e) ?? []) {
      const o = owner.get(c.path);
      if (o === undefined || events.indexOf(o) < events.indexOf(s.e)) continue;
      owner.delete(c.path);
      forced.add(c.path);
    }
  return forced;
}

/** Each shell call of the session with its after event's step (null: none came, or it ran in the background). */
function shellPairs(events: readonly SessionEvent[]) {
  return events.flatMap((e, i) => {
    if (e.kind !== 'shell' || e.phase !== 'pre') return [];
    const post = e.background
      ? undefined
      : events
          .slice(i + 1)
          .find(
            (x) =>
              x.kind === 'shell' &&
              x.phase === 'post' &&
              (e.toolCall === null || x.toolCall === e.toolCall),
          );
    return [{ e, after: post?.commit ?? null }];
  });
}

/** The other sessions' shell calls that have an after event: before and after. */
function theirPairs(others: readonly SessionEvent[]) {
  return others.flatMap((x, i) => {
    if (x.kind !== 'shell' || x.phase !== 'pre') return [];
    const post = others
      .slice(i + 1)
      .find(
        (y) =>
          y.kind === 'shell' &&
          y.phase === 'post' &&
          y.harness === x.harness &&
          y.session === x.session &&
          y.toolCall === x.toolCall,
      );
    return post ? [{ x, pair: [x.commit, post.commit] as [string, string] }] : [];
  });
}

/**
 * What each shell call did to the files its checkpoint kept beside the tree (ignored files,
 * nested repositories' files: git/kept.ts), against its after event's checkpoint, or the undo
 * checkpoint when it has none: one cat-file for the checkpoints, a diff-tree per call whose kept
 * side changed.
 */
async function keptChangesOf(
  root: string,
  shells: ReadonlyArray<{ e: SessionEvent; after: string | null }>,
  undo: Checkpoint,
): Promise<{ sides: KeptOf[]; changes: KeptChange[][] }> {
  const specs = shells.flatMap((s) => [`${s.e.commit}^`, ...(s.after ? [`${s.after}^`] : [])]);
  const read = await keptOfCheckpoints(root, specs);
  let at = 0;
  const pairs = shells.map((s) => {
    const before = read[at++]!;
    const after = s.after ? read[at++]!.kept : (undo.kept ?? null);
    return { before, after };
  });
  return {
    sides: pairs.map((p) => p.before),
    changes: await keptChangesOfPairs(root, pairs),
  };
}

/**
 * Per kept file, the earliest checkpoint of the session's commands that held it (as for git's
 * tree) and what the session's last command that changed it left: put back only over that
 * (planKeptBack). A path the session also wrote, or that git's tree holds, goes back with git's.
 */
function keptGroupsOf(
  shells: ReadonlyArray<{ e: SessionEvent }>,
  x: {
    keptBy: ReadonlyMap<SessionEvent, KeptChange[]>;
    sides: readonly KeptOf[];
    owned: ReadonlyMap<string, SessionEvent>;
    /** Written back whatever is there now (keptOverWrites). */
    forced: ReadonlySet<string>;
  },
): KeptGroup[] {
  const first = new Map<string, string>();
  const left = new Map<string, string | null>();
  for (const [i, s] of shells.entries())
    for (const c of x.keptBy.get(s.e) ?? []) {
      if (x.owned.has(c.path)) continue;
      if (!first.has(c.path)) first.set(c.path, x.sides[i]!.kept!);
      left.set(c.path, x.forced.has(c.path) ? ANY_LEFT : c.left);
    }
  const groups = new Map<string, KeptGroup>();
  for (const [p, commit] of first) {
    const g = groups.get(commit) ?? { commit, paths: [], left };
    g.paths.push(p);
    groups.set(commit, g);
  }
  return [...groups.values()];
}
