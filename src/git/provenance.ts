import { READ_CAP, catFileBatch } from './catfile.js';
import { git } from './run.js';
import { journalFile, readJournal, readJournalWithGone, readRegular } from './journal.js';
import {
  SESSION_REFS,
  isChainTip,
  isStepRef,
  parseSessionEvent,
  readSessionEvents,
  sortEvents,
  type SessionEvent,
} from './session.js';

/**
 * Provenance: which agent session wrote a path, read from the sessions' own
 * trail (refs/guard/sessions/, git/session.ts) that the harness hooks leave.
 * A session wrote a path when
 *   - one of its write tool calls names it (a call guard refused wrote
 *     nothing and left no step), or
 *   - the path changed during one of its shell calls: between the whole-tree
 *     checkpoint before the call and the session's next one in the same work
 *     tree (its post step, or whatever came next when the harness sent none,
 *     as on a failed command), or the staged content when nothing came since.
 *     A background command's window stays open: it may write at any time;
 *   - the path changed between two of its whole-tree steps (after one shell
 *     call, before the next): the session was at work, through a tool guard
 *     does not see (an MCP server's write) or not.
 * A path no hooked session wrote is of unknown origin: guard knows of no
 * agent, which is not the same as knowing that a person wrote it (an agent
 * run without guard's hooks leaves no trail). Errors lean towards "an agent
 * wrote it": a person's edit made during an agent's shell call counts as
 * the agent's, so it is judged, never waved through.
 *
 * Cost: the journal's entries, the session index's lines for the staged
 * paths (a session chain with a shell call walked back to the recent days
 * instead) and one cat-file of the recent step refs (readProvenance), then,
 * when there are shell calls, two cat-file batches of object ids
 * (attributeWindows); no work-tree scan.
 */
export interface Origin {
  harness: string;
  session: string;
  toolCall: string | null;
  tool: string;
  /** When the write or the shell call began (ISO). */
  time: string;
  /** session: changed between two of the session's tool calls, by no call guard saw. */
  kind: 'write' | 'shell' | 'session';
  /** The shell command (one line), for a shell call. */
  command?: string;
}

export interface Staged {
  path: string;
  /** The staged blob; null for a deletion. */
  oid: string | null;
}

export interface Provenance {
  /** Each staged path an agent session wrote: its writes, oldest first. */
  origins: Map<string, Origin[]>;
  /** A shell call of some session (in any work tree: `git -C ../.. commit`) began in the last OPEN_WINDOW_MS and has not ended: an agent may be the one committing. */
  agentRunning: boolean;
  /** The sessions' refs as read (ref -> commit), for trailIntact. */
  refs: Map<string, string>;
  /** Read from the whole trail (not only the recent days): what trailIntact and judge: agents need. */
  whole: boolean;
  /** Each session's time at work in one work tree: its first step to its last (writesWhileAtWork). */
  spans: Span[];
}

export interface Span {
  worktree: string;
  /** ISO times of the session's first and last step there. */
  from: string;
  to: string;
  origin: Origin;
}

/** The most recent steps read for the prompt and the trailers (a heavy day's worth). */
const RECENT_MAX = 4000;

/** The most recent writes of one staged path read from the session index (fromSessionIndex). */
const RECENT_WRITES = 100;

/**
 * The steps of the last `days` days, found in guard's journal (the refs guard
 * wrote, newest last, git/journal.ts) and read by id with one cat-file: no
 * walk over every ref (a for-each-ref over 100,000 refs costs ~100 ms, and
 * reading every step of the sessions still in the journal ~300 ms, on every
 * commit). What the journal lacks (an older guard wrote no journal; steps
 * past its newest few thousand refs) is read by date globs, or not named:
 * the prompt and the trailers only show, and judge: agents reads everything.
 */
async function recentEvents(
  repo: { root: string; commonDir: string },
  now: Date,
  days: number,
  staged: readonly Staged[],
): Promise<SessionEvent[]> {
  const since = new Date(now.getTime() - days * 86_400_000).toISOString();
  const day = since.slice(0, 10).replace(/-/g, '');
  const { stat } = await import('node:fs/promises');
  if (!(await stat(journalFile(repo.commonDir)).catch(() => null))) {
    // the date-named step refs, and every session chain (git/session-chain.ts), walked whole
    const chains = `${SESSION_REFS}*/*/chain`;
    return (await readSessionEvents(repo.root, [...recentPatterns(now, days), chains])).filter(
      (e) => e.time >= since,
    );
  }
  const live = await readJournal(repo.commonDir);
  const tips = live.filter((t) => isStepRef(t.ref) && stepDay(t.ref) >= day).slice(-RECENT_MAX);
  // the session chains (git/session-chain.ts): what their session index says of the staged paths,
  // and the rest walked from its journaled tip back to `since`
  const chains = live.filter((t) => isChainTip(t.ref)).map((t) => ({ chain: t.ref, tip: t.oid }));
  const { indexed, walk } = await fromSessionIndex(repo, chains, staged, since);
  const chained = [...indexed, ...(await recentLinks(repo.root, walk, since))];
  if (tips.length === 0) return sortEvents(chained);
  const objects = await catFileBatch(
    repo.root,
    tips.map((t) => t.oid),
    READ_CAP,
  );
  const out: SessionEvent[] = [];
  tips.forEach((t, i) => {
    const o = objects[i];
    if (o?.type !== 'commit' || !o.data) return;
    const text = o.data.toString('utf8');
    const e = parseSessionEvent(
      t.ref,
      t.oid,
      text.slice(text.indexOf('\n\n') + 2).replace(/\n$/, ''),
    );
    if (e && e.time >= since) out.push(e);
  });
  return sortEvents([...out, ...chained]);
}

/**
 * The writes of the staged paths since `since` by the sessions whose index
 * (git/session-index.ts, `ready.3`) can say: its `f-<h(path)>` lines, file
 * reads only. A session with a whole-tree step (`w-`: a shell call, whose
 * window may have changed any path) or without an index of this version is
 * left to `walk` (its chain's links read, as before). So a commit reads what
 * concerns its paths: no step of a session that neither wrote them nor ran a
 * shell call, however many there are. A `w-` the agent removed is no way out: the chain's journaled
 * tip witnesses every whole-tree step (`touched/w`, git/session-index.ts witnessPath), looked up
 * for the sessions read from their lines, in one cat-file (holes8). The index is a cache the agent can
 * write: a line removed hides a write from the prompt and the trailers only
 * (what decides, `judge: agents`, reads the whole trail from the refs); a
 * line added names an agent more.
 */
async function fromSessionIndex(
  repo: { root: string; commonDir: string },
  chains: ReadonlyArray<{ chain: string; tip: string }>,
  staged: readonly Staged[],
  since: string,
): Promise<{ indexed: SessionEvent[]; walk: Array<{ chain: string; tip: string }> }> {
  if (chains.length === 0) return { indexed: [], walk: [] };
  const { readdir } = await import('node:fs/promises');
  const { READY, WHOLE_WITNESSES, indexRoot, names } = await import('./session-index.js');
  const path = await import('node:path');
  const wanted = new Map(staged.map((s) => [names.writes(s.path), s.path]));
  const walk: Array<{ chain: string; tip: string }> = [];
  const byPath = new Map<string, SessionEvent[]>();
  // refs/guard/sessions/<harness>/<key>/chain -> <commonDir>/guard-sessions/<harness>/<key>
  const dirOf = (c: { chain: string }) =>
    path.join(indexRoot(repo), ...c.chain.slice(SESSION_REFS.length).split('/').slice(0, 2));
  const listed = await Promise.all(
    chains.map((c) => readdir(dirOf(c)).catch(() => [] as string[])),
  );
  const byIndex = chains.filter((c, i) => {
    const files = listed[i]!;
    if (files.includes(READY) && !files.some((f) => f.startsWith('w-'))) return true;
    walk.push(c);
    return false;
  });
  // a session whose chain witnesses a whole-tree step its index no longer lists (a `w-` removed:
  // holes8) is walked too: one cat-file for them all
  const shelled = await catFileBatch(
    repo.root,
    byIndex.map((c) => `${c.tip}:${WHOLE_WITNESSES}`),
    0,
    () => true,
  );
  await Promise.all(
    byIndex.map(async (c, i) => {
      if (shelled[i]?.type === 'tree') return void walk.push(c);
      const [harness] = c.chain.slice(SESSION_REFS.length).split('/');
      const dir = dirOf(c);
      const files = listed[chains.indexOf(c)]!;
      for (const f of files) {
        const rel = wanted.get(f);
        if (rel === undefined) continue;
        // a regular file only (a FIFO planted here would hang the commit)
        const text = (await readRegular(path.join(dir, f)))?.toString('utf8') ?? '';
        const found = indexedWrites(text, { harness: harness!, chain: c.chain, rel, since });
        byPath.set(rel, [...(byPath.get(rel) ?? []), ...found]);
      }
    }),
  );
  return { indexed: [...byPath.values()].flatMap(newestWrites), walk };
}

/**
 * The newest RECENT_WRITES writes of one path (as the walk reads the newest RECENT_MAX steps), and
 * the newest of every other session that wrote it: a session's 101st write must not hide that
 * another session wrote the path too (adv9: its `Guard-Agent:` trailer was left out).
 */
function newestWrites(l: SessionEvent[]): SessionEvent[] {
  l.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
  const kept = l.slice(0, RECENT_WRITES);
  const named = new Set(kept.map((e) => `${e.harness}\0${e.session}`));
  for (const e of l.slice(RECENT_WRITES)) {
    const who = `${e.harness}\0${e.session}`;
    if (named.has(who)) continue;
    named.add(who);
    kept.push(e);
  }
  return kept;
}

/** The `f-` lines of one path as session events (a write of `rel` each), those since `since`. */
function indexedWrites(
  text: string,
  at: { harness: string; chain: string; rel: string; since: string },
): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const line of text.split('\n')) {
    let w: Record<string, unknown>;
    try {
      w = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue; // torn or edited: what the index cannot say, it does not say
    }
    if (typeof w.session !== 'string' || typeof w.time !== 'string' || w.time < at.since) continue;
    out.push({
      ...{ ref: at.chain, commit: '', harness: at.harness, session: w.session },
      ...{ toolCall: typeof w.toolCall === 'string' ? w.toolCall : null, phase: 'pre' },
      ...{ tool: typeof w.tool === 'string' ? w.tool : '', kind: 'write', checkpoint: '' },
      ...{ paths: [at.rel], worktree: '', time: w.time },
    });
  }
  return out;
}

/** The steps of the session chains `chains` since `since` (ISO), newest RECENT_MAX, with one `git log`. */
async function recentLinks(
  root: string,
  chains: ReadonlyArray<{ chain: string; tip: string }>,
  since: string,
): Promise<SessionEvent[]> {
  if (chains.length === 0) return [];
  const { readLinks } = await import('./session-chain.js');
  // (a minute of slack: a link's commit time is whole seconds)
  const links = await readLinks(root, chains, {
    since: Math.floor(Date.parse(since) / 1000) - 60,
    limit: RECENT_MAX,
  });
  return links.map((l) => l.event).filter((e) => e.time >= since);
}

/** One for-each-ref glob per day from `days` ago to tomorrow (a clock a little ahead): refs/guard/sessions/<harness>/<key>/<YYYYMMDD>* */
export function recentPatterns(now: Date, days: number): string[] {
  const out: string[] = [];
  for (let d = -days; d <= 1; d++) {
    const day = new Date(now.getTime() + d * 86_400_000)
      .toISOString()
      .slice(0, 10)
      .replace(/-/g, '');
    out.push(`${SESSION_REFS}*/*/${day}*`);
  }
  return out;
}

/** How long a shell call without its post step counts as still running (the commit itself may be that call). */
export const OPEN_WINDOW_MS = 30 * 60 * 1000;

/** What the prompt and the trailers name: the sessions' steps of the last RECENT_DAYS days (the whole trail for judge: agents). */
export const RECENT_DAYS = 14;

/**
 * `days`: read only the steps of the last `days` days that guard's journal
 * names (recentEvents); null: every step of every session.
 */
export async function readProvenance(
  repo: { root: string; commonDir: string },
  staged: readonly Staged[],
  now: Date,
  days: number | null = RECENT_DAYS,
): Promise<Provenance> {
  const origins = new Map<string, Origin[]>();
  if (staged.length === 0)
    return { origins, agentRunning: false, refs: new Map(), whole: days === null, spans: [] };
  const root = repo.root;
  // every work tree's sessions, not only this one's: a lane's agent wrote the same paths that a
  // merge, a `git checkout lane -- f` or a copy brings here (careful: more is the agent's, never less)
  const events =
    days === null
      ? await readSessionEvents(root, SESSION_REFS)
      : await recentEvents(repo, now, days, staged);
  const refs = new Map(events.map((e) => [e.ref, e.commit]));
  // a chain's tip as read: its newest link (events are oldest first)
  for (const e of events) if (e.chain && e.link) refs.set(e.chain, e.link);
  const wanted = new Set(staged.map((s) => s.path));
  const add = (path: string, o: Origin) => {
    const list = origins.get(path) ?? [];
    if (
      !list.some(
        (x) =>
          x.session === o.session &&
          x.harness === o.harness &&
          x.toolCall === o.toolCall &&
          x.time === o.time &&
          x.kind === o.kind,
      )
    )
      list.push(o);
    origins.set(path, list);
  };
  for (const e of events) {
    if (e.kind === 'write' && e.paths)
      for (const p of e.paths) if (wanted.has(p)) add(p, originOf(e));
  }
  const windows = shellWindows(events);
  const agentRunning = windows.some(
    (w) => w.shell && w.end === null && now.getTime() - Date.parse(w.start.time) < OPEN_WINDOW_MS,
  );
  await attributeWindows(root, staged, windows, add);
  for (const list of origins.values())
    list.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return { origins, agentRunning, refs, whole: days === null, spans: sessionSpans(events) };
}

function sessionSpans(events: readonly SessionEvent[]): Span[] {
  const spans = new Map<string, Span>();
  for (const e of events) {
    const key = `${e.harness}\0${e.session}\0${e.worktree}`;
    const s = spans.get(key);
    if (!s)
      spans.set(key, {
        worktree: e.worktree,
        from: e.time,
        to: e.time,
        origin: originOf(e, 'session'),
      });
    else if (e.time > s.to) s.to = e.time; // (events come oldest first)
  }
  return [...spans.values()];
}

/**
 * The files of `paths` (in the work tree at `root`) last written while a
 * hooked session was at work there: between its first step and its last.
 * Between two write calls guard holds no whole tree to compare (a write's
 * checkpoint holds its own paths only), so a tool guard does not see (an MCP
 * server's write) is found by the file's time: one lstat each, no git. A
 * file changed after the session's last step is not found (a person's edit
 * after a session ends is theirs), nor a deletion (no file, no time).
 */
export async function writtenWhileAtWork(
  root: string,
  paths: readonly string[],
  spans: readonly Span[],
): Promise<Map<string, Origin>> {
  const found = new Map<string, Origin>();
  const here = spans.filter((s) => s.worktree === root);
  if (here.length === 0) return found;
  const { lstat } = await import('node:fs/promises');
  const path = await import('node:path');
  await Promise.all(
    paths.map(async (p) => {
      const st = await lstat(path.join(root, p)).catch(() => null);
      if (!st) return;
      const t = st.mtimeMs;
      const s = here.find((x) => Date.parse(x.from) <= t && t <= Date.parse(x.to));
      if (s) found.set(p, s.origin);
    }),
  );
  return found;
}

/**
 * Whether the sessions' trail is whole: every session ref guard's journal
 * (git/journal.ts) says it wrote is there, at the commit it wrote. A trail
 * someone pruned or moved (`git update-ref -d refs/guard/sessions/...`) cannot
 * say that nobody wrote a path: callers then trust no absence of an agent.
 * Nor can one whose steps of the last RECENT_DAYS days guard itself removed
 * (`guard log --prune --keep 0`, a command an agent can run as well as a
 * person: the journal then notes them as removed, not as gone).
 */
export async function trailIntact(
  commonDir: string,
  prov: Provenance,
  now: Date,
): Promise<boolean> {
  if (!prov.whole) return false; // a partial read cannot vouch for the refs it did not read
  const { live, gone } = await readJournalWithGone(commonDir);
  for (const t of live) {
    if ((isStepRef(t.ref) || isChainTip(t.ref)) && prov.refs.get(t.ref) !== t.oid) return false;
  }
  const since = new Date(now.getTime() - RECENT_DAYS * 86_400_000)
    .toISOString()
    .slice(0, 10)
    .replace(/-/g, '');
  return !gone.some((ref) => isStepRef(ref) && stepDay(ref) >= since);
}

/** The YYYYMMDD a session step's ref name starts its last part with (refs/guard/sessions/<harness>/<key>/<YYYYMMDD>T...). */
function stepDay(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1, ref.lastIndexOf('/') + 9);
}

/**
 * Of `wanted` (staged paths and what is staged there: a blob, or null for a
 * deletion), those whose staged content is not what the work tree holds: a
 * blob git would store differently from the file (filters applied, as `git
 * add` would), a file that is not a regular file, or a deletion of a path
 * still on disk. A shell call's window is measured on the work tree, so a
 * change made in the index alone (`git apply --cached`, `git update-index`,
 * `git rm --cached`) leaves no trace there: such a path cannot be vouched
 * for as nobody's. Read with one `git hash-object` (not `git diff`, which an
 * agent can blind with `--assume-unchanged` or `--skip-worktree`).
 */
export async function stagedOffDisk(
  root: string,
  wanted: ReadonlyArray<{ path: string; oid: string | null }>,
): Promise<Set<string>> {
  const { lstat } = await import('node:fs/promises');
  const path = await import('node:path');
  const off = new Set<string>();
  const files: Array<{ path: string; oid: string }> = [];
  await Promise.all(
    wanted.map(async (w) => {
      const st = await lstat(path.join(root, w.path)).catch(() => null);
      if (w.oid === null) {
        if (st) off.add(w.path);
      } else if (!st?.isFile() || w.path.includes('\n')) off.add(w.path);
      else files.push({ path: w.path, oid: w.oid });
    }),
  );
  if (files.length === 0) return off;
  const r = await git(['hash-object', '--stdin-paths'], {
    cwd: root,
    input: files.map((f) => f.path).join('\n') + '\n',
    okCodes: [128],
  });
  const oids = r.code === 0 ? r.stdout.toString('utf8').split('\n') : [];
  files.forEach((f, i) => {
    if (oids[i] !== f.oid) off.add(f.path);
  });
  return off;
}

function originOf(e: SessionEvent, kind: Origin['kind'] = e.kind): Origin {
  return {
    harness: e.harness,
    session: e.session,
    toolCall: kind === 'session' ? null : e.toolCall,
    tool: kind === 'session' ? '' : e.tool,
    time: e.time,
    kind,
    ...(e.command && kind === 'shell' ? { command: e.command } : {}),
  };
}

/** A window of a session: from a whole-tree step to the session's next one (null: none yet, up to the staged content). */
interface Window {
  start: SessionEvent;
  end: SessionEvent | null;
  /** A shell call's own window; else the time between two of the session's calls. */
  shell: boolean;
}

export function shellWindows(events: readonly SessionEvent[]): Window[] {
  const bySession = new Map<string, SessionEvent[]>();
  for (const e of events) {
    if (e.paths !== null) continue; // a write's checkpoint holds only its paths: no whole tree to compare
    // a session's steps in one work tree: trees of two work trees are not compared
    const key = `${e.harness}\0${e.session}\0${e.worktree}`;
    bySession.set(key, [...(bySession.get(key) ?? []), e]);
  }
  const out: Window[] = [];
  for (const seq of bySession.values()) {
    seq.forEach((e, i) => {
      const next = seq[i + 1] ?? null;
      if (e.kind === 'shell' && e.phase === 'pre') {
        // a background command runs on after its post step, for as long as it likes: open to the staged content
        out.push({ start: e, end: e.background ? null : next, shell: true });
      } else if (next) {
        // after a step and before the session's next one: the session is at work
        out.push({ start: e, end: next, shell: false });
      }
    });
  }
  return out;
}

/** Past this many object names, the second pass names the session, not each window (a commit of many paths after a long session). */
const LABEL_NAMES_MAX = 20_000;

/**
 * Which staged paths changed within each window: the path's object id at the
 * window's start against its end (the staged blob when the window is open).
 * Two cat-file batches, whatever the session's length: first each session's
 * first step against its last (or the staged blob while a window is open), so
 * that only the paths a session changed at all are looked at window by
 * window. A name cat-file cannot take (a newline in the path) counts as
 * changed: the careful answer.
 */
async function attributeWindows(
  root: string,
  staged: readonly Staged[],
  windows: readonly Window[],
  add: (path: string, o: Origin) => void,
): Promise<void> {
  if (windows.length === 0) return;
  const chains = new Map<string, Window[]>();
  for (const w of windows) {
    const key = `${w.start.harness}\0${w.start.session}\0${w.start.worktree}`;
    chains.set(key, [...(chains.get(key) ?? []), w]);
  }
  const ids = new NameIds();
  const label = (w: Window) => originOf(w.start, w.shell ? 'shell' : 'session');
  // pass 1: did the session change the path at all?
  const firstPass: Array<{ chain: Window[]; s: Staged; before: number; after: number | null }> = [];
  for (const chain of chains.values()) {
    const first = chain[0]!.start;
    const open = chain.some((w) => w.end === null);
    const last = chain.reduce<SessionEvent>(
      (at, w) => (w.end && w.end.time > at.time ? w.end : at),
      first,
    );
    for (const s of staged) {
      if (s.path.includes('\n')) {
        add(s.path, label(chain[0]!));
        continue;
      }
      firstPass.push({
        chain,
        s,
        before: ids.of(`${first.commit}:${s.path}`),
        after: open ? null : ids.of(`${last.commit}:${s.path}`),
      });
    }
  }
  const seen = await ids.read(root);
  const changed = firstPass.filter(
    (x) => seen[x.before] !== (x.after === null ? x.s.oid : seen[x.after]),
  );
  if (changed.length === 0) return;
  // pass 2: in which of its windows
  const windowIds = new NameIds();
  const asks = changed.flatMap(({ chain, s }) =>
    chain.map((w) => ({
      w,
      s,
      before: windowIds.of(`${w.start.commit}:${s.path}`),
      after: w.end ? windowIds.of(`${w.end.commit}:${s.path}`) : null,
    })),
  );
  if (windowIds.size > LABEL_NAMES_MAX) {
    for (const { chain, s } of changed)
      add(s.path, { ...label(chain[0]!), kind: 'session', toolCall: null, tool: '' });
    return;
  }
  const objects = await windowIds.read(root);
  for (const { w, s, before, after } of asks) {
    if (objects[before] !== (after === null ? s.oid : objects[after])) add(s.path, label(w));
  }
}

/** Object names asked once each (consecutive windows share their ends), read in one cat-file batch as ids (null: none). */
class NameIds {
  private readonly names: string[] = [];
  private readonly at = new Map<string, number>();
  get size(): number {
    return this.names.length;
  }
  of(name: string): number {
    let i = this.at.get(name);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(name);
      this.at.set(name, i);
    }
    return i;
  }
  async read(root: string): Promise<Array<string | null>> {
    const objects = await catFileBatch(root, this.names, READ_CAP, () => true);
    return this.names.map((_, i) => objects[i]?.oid ?? null);
  }
}

/** "claude session 3f2a1b9c, 12:03, tool call Write" for the prompt. */
export function describeOrigin(o: Origin): string {
  const time = o.time.slice(11, 16);
  const what =
    o.kind === 'write'
      ? `tool call ${o.tool || 'write'}`
      : o.kind === 'shell'
        ? `shell ${JSON.stringify(clip(o.command ?? '', 60))}`
        : 'between or beside its tool calls';
  return `${o.harness} session ${shortSession(o.session)}, ${o.time.slice(0, 10)} ${time} UTC, ${what}`;
}

export function shortSession(id: string): string {
  // a UUID (Claude, Codex) is known by its first 8 characters, as git knows a commit by its first 7
  return id.length > 16 ? id.slice(0, 8) : id;
}

function clip(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 3) + '...' : s;
}

/** One `Guard-Agent:` trailer per session whose writes the commit holds: "<harness> <session id>". */
export function agentTrailers(origins: ReadonlyMap<string, readonly Origin[]>): string[] {
  const seen = new Set<string>();
  // one line each, printable: a session id is the harness's, not guard's
  for (const list of origins.values())
    for (const o of list)
      seen.add(`${o.harness} ${o.session.replace(/\s+/g, ' ').replace(/[\x00-\x1f\x7f]/g, '?')}`);
  return [...seen].sort().map((s) => `Guard-Agent: ${s}`);
}

/** A commit whose message names an agent session (Guard-Agent:), as guard ci reads it. */
export interface AgentCommit {
  harness: string;
  session: string;
  commit: string;
}

export const AGENT_TRAILER = 'Guard-Agent';

/** The sessions a commit's `Guard-Agent:` trailer values name ("<harness> <session>" per line), printable only. */
export function parseAgentTrailers(block: string): Array<{ harness: string; session: string }> {
  return block
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .flatMap((l) => {
      // printable only: a trailer is whatever a commit message says, and this is shown in CI logs
      const m = /^(\S+) (.+)$/.exec(l.replace(/[\x00-\x1f\x7f]/g, '?'));
      return m ? [{ harness: m[1]!, session: m[2]! }] : [];
    });
}
