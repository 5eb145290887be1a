import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { catFileBatch, type CatResult } from './catfile.js';
import { packedLookup, packedRefsBytes } from './packed-refs.js';
import type { Repo } from './repo.js';
import {
  baseEventFor,
  readSessionEvents,
  sessionKey,
  sessionPrefix,
  type SessionEvent,
} from './session.js';
import { randomHex, sha256Hex } from '../core/digest.js';

/**
 * The session index: what a hook call needs to know about the earlier calls
 * of its session, answered without reading them. The events themselves stay
 * under refs/guard/sessions/ (the record; `guard log --session` and `guard
 * rewind` read them all); the index only points into them, so the cost of a
 * call does not grow with the session's history (issue 22, S1):
 *
 *   <common git dir>/guard-sessions/<harness>/<session key>/
 *     ready.3                     the index holds every event written before it appeared
 *     w-<h(worktree)>             the session's first whole-tree checkpoint there  } first writer wins
 *     p-<h(worktree, path)>       the first checkpoint there that holds the path   } (O_EXCL)
 *     s-<h(worktree, tool call)>  the step of that shell call's pre event
 *     s-<h(worktree)>             the step of the latest shell call's pre event (a call without an id)
 *     a-<h(tool call)>            the step of a write put to the person (read by its post event)
 *     c-<h(worktree)>             the session's policy anchors there, as last read: [{"ref", "oid"}]
 *     hd-<h(worktree)>            the HEAD a shell call last anchored (a hint: git/session-policy.ts)
 *     background-open             the time the session last started a background command
 *     f-<h(path)>                 every write of the path (any work tree), a line each, appended:
 *                                 `{"session", "toolCall", "tool", "time"}` (git/provenance.ts)
 *
 * each of w-, p-, s-, a- a line of JSON: `{"commit", "checkpoint", "time",
 * "ref"}`, where commit's tree is the checkpoint's (commit may be the step's
 * ref name: a write indexes its step before writing it, a shell call right
 * after). A session base is the earlier of `w-` and `p-`.
 *
 * What reads it: a write's pre event (its session bases: `w-`, `p-`, one
 * cat-file), a shell call's post event (the step before it: `s-`), the post
 * event of a write (`a-`, askedStep: no git process), and both of the first
 * (`c-`: whether the session's policy anchors are all still there;
 * flows/hook/hook-common.ts readSessionPolicy).
 *
 * The agent can write all of it. So it may only ever make the gate
 * stricter or send a call back to the refs: a session base is measured
 * beside the disk, the stricter counts (flows/hook/hook-write.ts
 * judgeTargets); the policy is never read from here, only from the
 * anchors (refs: a forged one only adds a config) and, when `c-` is
 * missing or names an anchor that is gone or moved, from every step of the
 * session as well. What is left: an agent that removes an anchor AND its
 * line in `c-` AND hides the removal from guard's journal (the net that
 * notices guard's refs going, flows/doctor/integrity.ts) drops that config
 * from the policy, as removing the steps themselves did before.
 *
 * What reads `f-`: a commit's provenance (git/provenance.ts recentEvents): which sessions wrote
 * the staged paths, read for those paths alone instead of every recent step. It only names
 * writes (shown at the prompt and in the trailers); what decides (`judge: agents`) reads the refs.
 *
 * A first-writer entry (`w-`, `p-`) removed, or rewritten to name another commit, is not the
 * session's base: the step that made it (O_EXCL: a write's before its import, a shell call's
 * told by firstWhole) is witnessed in its link's tree by a gitlink to that step (witnessPath:
 * `touched/w/<name>`, `touched/<xx>/<name>`), which every later link keeps. So the chain's tip names
 * the step of every first touch, and an entry that is missing or names another commit than its
 * witness sends the call to the refs (sessionBases: the witnesses are looked up in the cat-file
 * the call runs anyway, or in one of its own when the call's paths have no entry at all). The
 * chain's ref is guard's own, journaled and sealed: moving it back is what the net notices (holes8).
 *
 * It is a cache of the refs and is treated as one: no `ready.3` file (a
 * session of an older guard, an index removed by `guard log --prune`) or a
 * commit that is gone means one full read of the session's refs, which
 * builds it again (an older guard's index is replaced). Whoever builds it
 * (from one read of the refs, put in place with one rename) and every call
 * that writes an event after finding it there add their own events; a call
 * that wrote its event before an index appeared (a race at a session's
 * start) builds its own, and when another was put in place first adds its
 * event to that one: no event is left out.
 */
export interface Indexed {
  /** What cat-file reads the checkpoint's tree from: the step's ref name (a write's, indexed before its records are written), or a commit id. */
  commit: string;
  checkpoint: string;
  time: string;
  ref: string;
}

const ROOT_DIR = 'guard-sessions';
/** Versioned: an index an older guard built (no `c-` entries, shell steps not added; no `f-` lines) is built again. */
export const READY = 'ready.3';

const h = (...parts: string[]) => sha256Hex(parts.join('\0')).slice(0, 32);

export function indexDir(repo: Pick<Repo, 'commonDir'>, harness: string, session: string): string {
  return path.join(repo.commonDir, ROOT_DIR, harness, sessionKey(session));
}

/** The whole index of every session (removed by `guard log --prune`: rebuilt on next use). */
export function indexRoot(repo: Pick<Repo, 'commonDir'>): string {
  return path.join(repo.commonDir, ROOT_DIR);
}

export const names = {
  whole: (worktree: string) => `w-${h(worktree)}`,
  path: (worktree: string, rel: string) => `p-${h(worktree, rel)}`,
  shell: (worktree: string, toolCall: string | null) =>
    toolCall === null ? `s-${h(worktree)}` : `s-${h(worktree, toolCall)}`,
  asked: (toolCall: string) => `a-${h(toolCall)}`,
  policy: (worktree: string) => `c-${h(worktree)}`,
  writes: (rel: string) => `f-${h(rel)}`,
  anchoredHead: (worktree: string) => `hd-${h(worktree)}`,
};

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The folder of a link's tree that holds the witnesses of whole-tree entries (`w-`): a session that ran a shell call. */
export const WHOLE_WITNESSES = 'touched/w';

/** Where a link's tree holds the witness of a first-writer entry: `touched/w/<w-name>`, `touched/<xx>/<p-name>` (256 folders). */
export function witnessPath(name: string): string {
  return name.startsWith('w-')
    ? `${WHOLE_WITNESSES}/${name}`
    : `touched/${name.slice(2, 4)}/${name}`;
}

/** The first-writer entries (w-, p-) an event makes, as entriesOf names them (`guard log --prune`'s kept links witness the first of each). */
export function witnessNames(e: Pick<SessionEvent, 'worktree' | 'paths'>): string[] {
  return e.paths === null
    ? [names.whole(e.worktree)]
    : e.paths.map((p) => names.path(e.worktree, p));
}

/** The session chain's tip from the ref store's files (null: no chain, or not readable so). */
async function chainTip(
  commonDir: string,
  harness: string,
  session: string,
): Promise<string | null> {
  const ref = `${sessionPrefix(harness, session)}chain`;
  const loose = await readFile(path.join(commonDir, ref), 'utf8').catch(() => null);
  if (loose !== null) return OID.test(loose.trim()) ? loose.trim() : null;
  const packed = packedRefsBytes(commonDir);
  return packed ? packedLookup(packed, ref) : null;
}

async function readEntry(dir: string, name: string): Promise<Indexed | null> {
  const text = await readFile(path.join(dir, name), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as Partial<Indexed>;
    if (
      typeof v.commit === 'string' &&
      (OID.test(v.commit) || /^refs\/guard\/sessions\/[^\s:]+$/.test(v.commit)) &&
      !v.commit.includes('..') &&
      typeof v.checkpoint === 'string' &&
      typeof v.time === 'string' &&
      typeof v.ref === 'string'
    ) {
      return { commit: v.commit, checkpoint: v.checkpoint, time: v.time, ref: v.ref };
    }
  } catch {
    // a torn or edited entry: as if absent below, and the caller's check of `ready` decides
  }
  return null;
}

/** Is the index of this session there (built, or grown from the session's first call)? */
export async function isReady(dir: string): Promise<boolean> {
  return (await readFile(path.join(dir, READY), 'utf8').catch(() => null)) !== null;
}

/** Entries by name; null when the index is not ready (read the refs instead). */
export async function readEntries(
  dir: string,
  wanted: readonly string[],
): Promise<Map<string, Indexed | null> | null> {
  const [ready, ...found] = await Promise.all([
    isReady(dir),
    ...wanted.map((n) => readEntry(dir, n)),
  ]);
  if (!ready) return null;
  return new Map(wanted.map((n, i) => [n, found[i]!]));
}

/** True when this call made the entry (the first writer). */
async function writeFirst(dir: string, name: string, e: Indexed): Promise<boolean> {
  // 'wx': O_CREAT|O_EXCL, so the first of two racing calls stays
  return writeFile(path.join(dir, name), JSON.stringify(e), { flag: 'wx' }).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      return false;
    },
  );
}

async function writeLast(dir: string, name: string, e: Indexed | string): Promise<void> {
  const tmp = path.join(dir, `.${name}.${randomHex(4)}`);
  await writeFile(tmp, typeof e === 'string' ? e : JSON.stringify(e));
  await rename(tmp, path.join(dir, name));
}

/** What one event adds to the index. */
function entriesOf(
  e: Pick<SessionEvent, 'worktree' | 'paths' | 'kind' | 'phase' | 'toolCall' | 'outcome'>,
  at: Indexed,
  step: Indexed | null,
): Array<{ name: string; e: Indexed; last?: true }> {
  const out: Array<{ name: string; e: Indexed; last?: true }> = [];
  if (e.paths === null) out.push({ name: names.whole(e.worktree), e: at });
  else for (const p of e.paths) out.push({ name: names.path(e.worktree, p), e: at });
  if (e.kind === 'shell' && e.phase === 'pre') {
    out.push({ name: names.shell(e.worktree, null), e: at, last: true });
    if (e.toolCall !== null)
      out.push({ name: names.shell(e.worktree, e.toolCall), e: at, last: true });
  }
  if (e.outcome === 'ask' && e.toolCall !== null && step)
    out.push({ name: names.asked(e.toolCall), e: step });
  return out;
}

/** The first-writer entries this call made (w-, p-: what its link witnesses). */
async function writeEntries(dir: string, entries: ReturnType<typeof entriesOf>): Promise<string[]> {
  const made: string[] = [];
  // first-writer entries in order (the earliest event of a path wins), the "latest" ones by rename
  for (const x of entries)
    if (x.last) await writeLast(dir, x.name, x.e);
    else if ((await writeFirst(dir, x.name, x.e)) && /^[wp]-/.test(x.name)) made.push(x.name);
  return made;
}

/** A write as `f-<h(path)>` keeps it (git/provenance.ts reads it back). */
export interface IndexedWrite {
  session: string;
  toolCall: string | null;
  tool: string;
  time: string;
}

type WriteEvent = Pick<SessionEvent, 'session' | 'paths' | 'kind' | 'toolCall'> & { tool?: string };

/** The `f-` lines of a write event (none for a whole-tree step), by file name. */
function writeLines(e: WriteEvent, time: string): Map<string, string> {
  const out = new Map<string, string>();
  if (e.kind !== 'write' || e.paths === null) return out;
  const w: IndexedWrite = { session: e.session, toolCall: e.toolCall, tool: e.tool ?? '', time };
  const line = JSON.stringify(w) + '\n';
  for (const p of e.paths) out.set(names.writes(p), (out.get(names.writes(p)) ?? '') + line);
  return out;
}

async function appendWrites(dir: string, lines: ReadonlyMap<string, string>): Promise<void> {
  for (const [name, text] of lines) await writeFile(path.join(dir, name), text, { flag: 'a' });
}

/**
 * Build a session's index from its refs (oldest first) into a folder of its
 * own, then put it in place with one rename: a reader sees all of it or none.
 * False when another call put one in place first.
 */
export async function build(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  harness: string,
  session: string,
  read?: SessionEvent[],
): Promise<boolean> {
  const dir = indexDir(repo, harness, session);
  const events = read ?? (await readSessionEvents(repo.root, sessionPrefix(harness, session)));
  const tmp = `${dir}.${process.pid}-${randomHex(4)}`;
  await mkdir(tmp, { recursive: true });
  try {
    const writes = new Map<string, string>();
    for (const ev of events) {
      const at = { commit: ev.commit, checkpoint: ev.checkpoint, time: ev.time, ref: ev.ref };
      await writeEntries(tmp, entriesOf(ev, at, at));
      for (const [name, text] of writeLines(ev, ev.time))
        writes.set(name, (writes.get(name) ?? '') + text);
    }
    await appendWrites(tmp, writes);
    await writeFile(path.join(tmp, READY), '');
    return await putInPlace(tmp, dir);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Rename a built index into place; an older guard's index there (no READY of this version) is replaced once. */
async function putInPlace(tmp: string, dir: string): Promise<boolean> {
  for (let tries = 0; ; tries++) {
    try {
      await rename(tmp, dir);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      if (tries > 0 || (await isReady(dir))) return false;
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/**
 * Add a hook call's event to the index (a write's before its records are
 * written, named by its step's ref; a shell call's after). When the index
 * is not there yet, build it from the refs first. Returns the first-writer
 * entries (w-, p-) it made: a write's step witnesses them in its link.
 * Never fails the call: the refs are the record, the index only a shortcut.
 */
export async function noteEvent(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  e: Pick<
    SessionEvent,
    'harness' | 'session' | 'worktree' | 'paths' | 'kind' | 'phase' | 'toolCall' | 'outcome'
  > & { tool?: string },
  at: Indexed,
  step: Indexed | null = null,
): Promise<string[]> {
  const dir = indexDir(repo, e.harness, e.session);
  try {
    // (a call that indexes its event before writing it builds without it, then adds it)
    if (!(await isReady(dir))) await build(repo, e.harness, e.session);
    const made = await writeEntries(dir, entriesOf(e, at, step));
    await appendWrites(dir, writeLines(e, at.time));
    return made;
  } catch {
    // a read-only or full git dir: the next call reads the refs
    return [];
  }
}

/**
 * Before a shell call's step is written (its entries are noted after): whether it will be the
 * session's first whole-tree step in this work tree, so that its link witnesses `w-`. Not when
 * the index lists one, nor when the chain's tip witnesses one the index lost (then the index is
 * dropped: the next call reads the refs). One cat-file only when the index has no `w-` and the
 * session has a chain.
 */
export async function firstWhole(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  harness: string,
  session: string,
): Promise<string[]> {
  const dir = indexDir(repo, harness, session);
  const name = names.whole(repo.root);
  try {
    if (!(await isReady(dir))) await build(repo, harness, session);
    const found = await readEntries(dir, [name]);
    if (!found || found.get(name)) return [];
    const tip = await chainTip(repo.commonDir, harness, session);
    if (!tip) return [name];
    const [w] = await catFileBatch(repo.root, [`${tip}:${witnessPath(name)}`], 0, () => true);
    if (!w) return [name];
    await dropIndex(dir);
    return [];
  } catch {
    return [];
  }
}

/**
 * A chained step written (git/session-chain.ts): the entries noted with the name its ref would
 * have had, before the import (which alone tells its id), name its commit from now on. An entry
 * left naming the name (killed in between) reads as a step in flight, then stale: the index is
 * rebuilt from the chain.
 */
export async function settleEvent(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  e: Parameters<typeof noteEvent>[1],
  step: { ref: string; commit: string },
): Promise<void> {
  const dir = indexDir(repo, e.harness, e.session);
  const named = { commit: step.ref, checkpoint: '', time: '', ref: step.ref };
  for (const x of entriesOf(e, named, named)) {
    const cur = await readEntry(dir, x.name).catch(() => null);
    if (cur?.commit === step.ref)
      await writeLast(dir, x.name, { ...cur, commit: step.commit }).catch(() => undefined);
  }
}

/** Forget a session's index (a commit it names is gone): the next call reads the refs. */
export async function dropIndex(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Whether the index's entries agree with their witnesses in the chain's tip (`seen`: the cat-file's
 * answers, in the entries' order; none: no chain). A witness names the step of the session's first
 * touch (a gitlink); an entry without one is from before witnesses, or not yet settled.
 */
function witnessed(
  found: Map<string, Indexed | null>,
  seen: ReadonlyArray<CatResult | null>,
  commits: ReadonlyMap<string, CatResult | undefined>,
): boolean {
  return [...found.values()].every((e, i) => {
    const w = seen[i];
    if (!w) return true;
    if (!e) return false;
    if (!OID.test(e.commit) || w.type !== 'commit') return true;
    // the entry's time too (earlier() takes the earlier of w- and p- by it): the step's own
    const step = commits.get(e.commit)?.data;
    return w.oid === e.commit && (!step || step.includes(`"time":${JSON.stringify(e.time)}`));
  });
}

/** Longer than any hook call runs (its budget is 20 s): an entry this young whose step is missing is still being written. */
const IN_FLIGHT_MS = 60_000;

function earlier(a: Indexed | null, b: Indexed | null): Indexed | null {
  if (!a || !b) return a ?? b;
  return a.time !== b.time ? (a.time < b.time ? a : b) : a.ref < b.ref ? a : b;
}

/** A path's session base: the commit of the session's earliest event that holds it, and the file there (null: absent then). */
export interface SessionBaseOf {
  at: Indexed;
  data: Buffer | null;
}

export interface BasesQuery {
  harness: string;
  session: string;
  rels: readonly string[];
  maxBytes: number;
  /** The session's events, read once per call (flows/hook/hook-common.ts): only when the index cannot answer. */
  events: () => Promise<SessionEvent[]>;
}

/**
 * The session base of each path (null: the session has not touched it in
 * this work tree), from the index and ONE cat-file, whatever the length of
 * the session; from the refs when the index is not there or names a commit
 * that is gone (then it is dropped, and the next call builds it again).
 * What the index names may be forged (the agent can write it): a session
 * base only ever makes the gate stricter (flows/hook/hook-write.ts
 * judgeTargets measures against the disk too).
 */
export async function sessionBases(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  q: BasesQuery,
  useIndex = true,
): Promise<Array<SessionBaseOf | null>> {
  const dir = indexDir(repo, q.harness, q.session);
  const whole = names.whole(repo.root);
  const found = useIndex
    ? await readEntries(dir, [whole, ...q.rels.map((r) => names.path(repo.root, r))])
    : null;
  let ats: Array<Indexed | null>;
  // the entries of this call's paths, each looked for in the chain's tip (its first touch's step)
  let witnesses: string[] = [];
  if (found) {
    ats = q.rels.map((r) => earlier(found.get(whole)!, found.get(names.path(repo.root, r))!));
    const tip = await chainTip(repo.commonDir, q.harness, q.session);
    if (tip) witnesses = [...found.keys()].map((n) => `${tip}:${witnessPath(n)}`);
  } else {
    const events = await q.events();
    // built here too (a call that is denied writes no event to build it), so the next call reads no refs
    if (useIndex) await build(repo, q.harness, q.session, events).catch(() => false);
    ats = q.rels.map((r) => {
      const ev = baseEventFor(events, repo.root, r);
      return ev
        ? { commit: ev.commit, checkpoint: ev.checkpoint, time: ev.time, ref: ev.ref }
        : null;
    });
  }
  const commits = [...new Set(ats.flatMap((a) => (a ? [a.commit] : [])))];
  if (commits.length === 0 && witnesses.length === 0) return q.rels.map(() => null);
  // "<commit>:<path>" is missing when the file did not exist then, and when the commit is gone: the commits themselves say which
  const files = ats.flatMap((a, i) => (a ? [`${a.commit}:${q.rels[i]}`] : []));
  const wanted = [...commits, ...witnesses, ...files];
  // (the commits read whole: a step's message holds its time, which an entry must repeat)
  const infoOnly = (i: number) => i >= commits.length && i < commits.length + witnesses.length;
  const objs = await catFileBatch(repo.root, wanted, q.maxBytes, infoOnly);
  const seen = witnesses.length > 0 ? objs.slice(commits.length) : [];
  if (found && !witnessed(found, seen, new Map(commits.map((c, i) => [c, objs[i]])))) {
    // an entry the session's chain witnesses was removed or names another commit (holes8): read
    // the refs, build it again
    await dropIndex(dir);
    return sessionBases(repo, q, true);
  }
  if (commits.length === 0) return q.rels.map(() => null);
  const gone = new Set(commits.filter((_, i) => objs[i]?.type !== 'commit'));
  if (found && gone.size > 0) {
    // a write indexes its step before writing it: a recent entry whose ref is not there yet is a
    // call in flight (this call reads the refs); an old one is stale (dropped, rebuilt from the refs)
    const stale = ats.some(
      (a) => a && gone.has(a.commit) && !(Date.now() - Date.parse(a.time) < IN_FLIGHT_MS),
    );
    if (stale) await dropIndex(dir);
    return sessionBases(repo, q, stale);
  }
  let k = commits.length + witnesses.length;
  return ats.map((a) => {
    if (!a) return null;
    const b = objs[k++];
    return { at: a, data: b && b.type === 'blob' ? (b.data ?? null) : null };
  });
}

/** The step before a shell call (this tool call's, or the latest one's when the call has no id); undefined: ask the refs. */
export async function shellPre(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  harness: string,
  session: string,
  toolCall: string | null,
): Promise<Indexed | null | undefined> {
  const name = names.shell(repo.root, toolCall);
  const found = await readEntries(indexDir(repo, harness, session), [name]);
  return found ? found.get(name)! : undefined;
}

/* ------------------------------------------- the policy the session saw */

/** An anchor as the note holds it. */
export interface NotedAnchor {
  ref: string;
  oid: string;
}

/**
 * `c-<h(worktree)>`: the session's policy anchors in this work tree
 * (git/session-policy.ts), each ref with its commit, as the last call that
 * read them found them (flows/hook/hook-common.ts readSessionPolicy). Not
 * the policy: a check on the anchors, so that one removed or moved is
 * noticed and the session's steps are read again. Null when the index is
 * not ready or holds no such entry (read the steps).
 */
export async function readPolicyNote(
  repo: Pick<Repo, 'commonDir'>,
  q: { harness: string; session: string; worktree: string },
): Promise<NotedAnchor[] | null> {
  const dir = indexDir(repo, q.harness, q.session);
  const [ready, text] = await Promise.all([
    isReady(dir),
    readFile(path.join(dir, names.policy(q.worktree)), 'utf8').catch(() => null),
  ]);
  if (!ready || text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    const ok = (x: unknown): x is NotedAnchor =>
      typeof x === 'object' &&
      x !== null &&
      typeof (x as NotedAnchor).ref === 'string' &&
      typeof (x as NotedAnchor).oid === 'string' &&
      OID.test((x as NotedAnchor).oid);
    if (Array.isArray(v) && v.every(ok)) return v.map((x) => ({ ref: x.ref, oid: x.oid }));
  } catch {
    // torn or edited: as if absent
  }
  return null;
}

/** Note the anchors as this call found them (the ones it adds are noted by the next call that reads them). */
export async function notePolicy(
  repo: Pick<Repo, 'root' | 'commonDir'>,
  q: { harness: string; session: string; worktree: string; events?: SessionEvent[] },
  anchors: readonly NotedAnchor[],
): Promise<void> {
  const dir = indexDir(repo, q.harness, q.session);
  try {
    if (!(await isReady(dir))) await build(repo, q.harness, q.session, q.events);
    const text = JSON.stringify(anchors.map((a) => ({ ref: a.ref, oid: a.oid })));
    const tmp = path.join(dir, `.c.${randomHex(4)}`);
    await writeFile(tmp, text);
    await rename(tmp, path.join(dir, names.policy(q.worktree)));
  } catch {
    // a read-only or full git dir: the next call reads the steps
  }
}

/** The HEAD a shell call's step last anchored in this work tree (a hint: a wrong one costs an anchor, or one is left to the next call that reads the policy). */
export async function anchoredHead(
  repo: Pick<Repo, 'commonDir'>,
  q: { harness: string; session: string; worktree: string },
): Promise<string | null> {
  const file = path.join(indexDir(repo, q.harness, q.session), names.anchoredHead(q.worktree));
  return (await readFile(file, 'utf8').catch(() => null))?.trim() ?? null;
}

export async function noteAnchoredHead(
  repo: Pick<Repo, 'commonDir'>,
  q: { harness: string; session: string; worktree: string },
  head: string,
): Promise<void> {
  const dir = indexDir(repo, q.harness, q.session);
  try {
    if (!(await isReady(dir))) return;
    await writeLast(dir, names.anchoredHead(q.worktree), head);
  } catch {
    // the next shell call anchors again
  }
}

/** The step of a write this tool call put to the person; null: none; undefined: ask the refs. */
export async function askedStep(
  repo: Pick<Repo, 'commonDir'>,
  harness: string,
  session: string,
  toolCall: string,
): Promise<Indexed | null | undefined> {
  const name = names.asked(toolCall);
  const found = await readEntries(indexDir(repo, harness, session), [name]);
  return found ? found.get(name)! : undefined;
}

/** The session's marker that a background command may still be open (the time it started): without it, no call reads the session's steps for background reports (flows/hook/hook.ts). */
export function backgroundMarker(
  repo: Pick<Repo, 'commonDir'>,
  harness: string,
  session: string,
): string {
  return path.join(indexDir(repo, harness, session), 'background-open');
}

/** A command of the session runs in the background from `now`: the marker, and the journal's note (the marker alone is one rm away, git/journal.ts). */
export async function markBackgroundOpen(
  repo: Pick<Repo, 'commonDir'>,
  harness: string,
  session: string,
  now: Date,
): Promise<void> {
  const file = backgroundMarker(repo, harness, session);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, now.toISOString() + '\n');
  const { noteBackground } = await import('./journal.js');
  noteBackground(repo.commonDir, harness, path.basename(path.dirname(file)), now);
}
