import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseRecordMessage } from '../core/record.js';
import { packedLookup, packedRefsBytes } from './packed-refs.js';
import {
  commonDirOf,
  journaledRefWrite,
  journaledUnder,
  journalNames,
  noteChainLinks,
  noteGone,
} from './journal.js';
import { MODE } from '../core/modes.js';
import { REFS, type RecordCommit, type Written } from './records.js';
import { git } from './run.js';
import { SESSION_REFS, parseSessionEvent, type SessionEvent } from './session.js';
import { witnessNames, witnessPath } from './session-index.js';

/**
 * One ref per agent session whose steps chain (docs/refs.md, docs/performance.md "At scale"):
 *
 *   refs/guard/sessions/<harness>/<session key>/chain
 *
 * Its tip is a **link** commit per hook call: first parent the session's previous link (none for
 * the first), then the call's step commit (exactly what a step ref pointed at before: parent the
 * checkpoint, the checkpoint's tree, the event in its message), then the call's decision records.
 * The link's message is the step's event plus `step` (the name the step's ref would have had) and
 * `records` (the decision records' names, in parent order). So a hook call adds no ref of its own:
 * its step, checkpoint and decisions are reachable from the chain (gc keeps them), and a session
 * is read with one `git log --first-parent` of its tip. Every reader of a step (`step^` the
 * checkpoint, `step^^` its HEAD, `step:path`) reads the same commit as before.
 *
 * The name is `<key>/chain`, not `<key>` itself: a ref cannot be both a file and a folder, and
 * the session's folder holds its policy anchors and, in a repository guard wrote before, its
 * per-call step refs; both layouts are read side by side.
 *
 * The chain ref moves by fast-import's own compare-and-swap (it refuses a new tip that does not
 * contain the ref's value at the end of the import): a lost race between two hook calls of one
 * session is retried on the new tip (records.ts importCommits), so no step is lost.
 */
export const CHAIN = 'chain';

/** Off with GUARD_SESSION_CHAIN=0: one ref per call, as before. */
export function chainOn(): boolean {
  return process.env.GUARD_SESSION_CHAIN !== '0';
}

/** `refs/guard/sessions/<harness>/<key>/chain`. */
export function isChainRef(ref: string): boolean {
  if (!ref.startsWith(SESSION_REFS)) return false;
  const parts = ref.slice(SESSION_REFS.length).split('/');
  return parts.length === 3 && parts[2] === CHAIN;
}

/** The chain of the session a step ref (`<folder><name>`) belongs to. */
export function chainOf(stepRef: string): string {
  return stepRef.slice(0, stepRef.lastIndexOf('/') + 1) + CHAIN;
}

/** Step commits this process wrote into a chain, by the name their ref would have had (for the session index). */
const written = new Map<string, string>();

/** The step commit written for `stepRef` (its ref name, which no longer exists), or the name itself; asked once (a long-lived plugin keeps no list). */
export function stepCommit(stepRef: string): string {
  const id = written.get(stepRef);
  written.delete(stepRef);
  return id ?? stepRef;
}

/** A ref's value from the ref store's files (loose, then packed-refs); null when absent or not an id. */
export function refFileValue(commonDir: string, ref: string): string | null {
  try {
    const v = readFileSync(path.join(commonDir, ref), 'utf8').trim();
    return /^[0-9a-f]{40,64}$/.test(v) ? v : null;
  } catch {
    const buf = packedRefsBytes(commonDir);
    return buf ? packedLookup(buf, ref) : null;
  }
}

export interface Chained {
  commits: RecordCommit[];
  /** Each step's would-be ref and the mark its commit has, to learn its id after the import. */
  steps: Array<{ ref: string; mark: number }>;
  /** The chain refs moved. */
  chains: string[];
  /** Each link: its chain, mark, and what it continues (an id, or `:mark`: a link or root of this import). */
  links: Array<{ chain: string; mark: number; from: string }>;
}

/** The first commit of every chain (and of what `guard log --prune` keeps of one): no step. */
export const CHAIN_ROOT = 'guard session chain\n\n{"v":1,"kind":"chain"}\n';

/** Marks for the commits chaining gives a mark (between the checkpoint's, 1,000,000 up, and records.ts's journal marks, 2,000,000 up). */
const CHAIN_MARKS = 1_500_000;

/**
 * The commits of one import with its session steps chained: each step loses its ref and gets a
 * link on its session's chain; the decision records and the checkpoints marked `inChain` of the
 * same import lose theirs (the link names them). `tip(ref)`: the chain's value now (null: new).
 * Commits without a step are returned as they are.
 */
export function chainCommits(
  commits: readonly RecordCommit[],
  tip: (chain: string) => string | null,
): Chained | null {
  if (!commits.some((c) => c.chain && c.ref !== undefined && isStep(c.ref))) return null;
  let next = CHAIN_MARKS;
  const marked = commits.map((c) =>
    c.mark || !(c.ref && ((c.chain && isStep(c.ref)) || c.ref.startsWith(REFS.decisions)))
      ? c
      : { ...c, mark: next++ },
  );
  const decisions = marked.filter((c) => c.ref?.startsWith(REFS.decisions));
  // the checkpoints only a chain holds (the others keep their ref: guard log lists them by it)
  const held = new Set(marked.flatMap((c) => (c.inChain && c.mark ? [`:${c.mark}`] : [])));
  let lastStep = -1;
  const chained = (c: RecordCommit) => c.chain === true && c.ref !== undefined && isStep(c.ref);
  marked.forEach((c, i) => {
    if (chained(c)) lastStep = i;
  });
  const out: RecordCommit[] = [];
  const heads = new Map<string, string | null>();
  const steps: Chained['steps'] = [];
  const links: Chained['links'] = [];
  // the links last: a link names the call's decision records, which may come after its step
  const linkCommits: RecordCommit[] = [];
  // the commits that lose their ref are built on the (first) chain's branch: no scratch ref
  const first = marked.find(chained);
  const branch = chainOf(first!.ref!);
  marked.forEach((c, i) => {
    if (c.ref?.startsWith(REFS.decisions) || c.inChain) {
      const { ref: _drop, inChain: _in, ...kept } = c;
      out.push({ ...kept, branch });
      return;
    }
    if (!chained(c)) return void out.push(c);
    const chain = chainOf(c.ref!);
    let prev = heads.has(chain) ? heads.get(chain)! : tip(chain);
    if (prev === null) {
      // a new chain starts on a root of its own: `git log --first-parent` of a chain ends there,
      // never in the user's history through a step's checkpoint
      const root = next++;
      linkCommits.push({
        mark: root,
        branch: chain,
        parent: null,
        message: CHAIN_ROOT,
        changes: [],
      });
      prev = `:${root}`;
    }
    const { ref: stepRef, chain: _c, ...step } = c;
    out.push({ ...step, branch: chain });
    steps.push({ ref: stepRef!, mark: c.mark! });
    const recs = i === lastStep ? decisions : [];
    const mark = next++;
    linkCommits.push({
      ref: chain,
      mark,
      parent: prev,
      merges: [`:${c.mark}`, ...recs.map((d) => `:${d.mark}`)],
      message: linkMessage(c.message, {
        step: stepRef!.slice(stepRef!.lastIndexOf('/') + 1),
        recs,
        held: c.parent !== null && held.has(c.parent),
      }),
      changes: witnessChanges(c.witness ?? [], `:${c.mark}`),
    });
    heads.set(chain, `:${mark}`);
    links.push({ chain, mark, from: prev });
  });
  return { commits: [...out, ...linkCommits], steps, chains: [...heads.keys()], links };
}

const isStep = (ref: string) =>
  ref.startsWith(SESSION_REFS) &&
  ref.slice(SESSION_REFS.length).split('/').length === 3 &&
  !isChainRef(ref);

/**
 * What a link adds to the tree it continues: a gitlink to its step per session index entry the
 * step made first (`touched/<xx>/p-...`, `touched/w/w-...`: git/session-index.ts witnessPath), so
 * the chain's tip names the step of every first touch the session made, and an index entry
 * removed or rewritten to name another commit is noticed (holes8).
 */
function witnessChanges(names: readonly string[], step: string): RecordCommit['changes'] {
  return names.map((n) => ({
    kind: 'blob' as const,
    path: witnessPath(n),
    mode: MODE.gitlink,
    oid: step,
  }));
}

/**
 * The step's message with its name, its records' names and `held` (its checkpoint has no ref of
 * its own: only the chain holds it) added to the JSON.
 */
function linkMessage(
  stepMessage: string,
  x: { step: string; recs: readonly RecordCommit[]; held: boolean },
): string {
  const at = stepMessage.indexOf('\n\n');
  const body = JSON.parse(stepMessage.slice(at + 2)) as Record<string, unknown>;
  const records = x.recs.map((d) => d.ref!.slice(REFS.decisions.length));
  const link = { ...body, step: x.step, records, ...(x.held ? { held: true } : {}) };
  return `${stepMessage.slice(0, at)}\n\n${JSON.stringify(link)}\n`;
}

/** The session index entries a kept link's event makes that no earlier kept link made (`seen` grows). */
function firstOf(message: string, seen: Set<string>): string[] {
  const b = parseRecordMessage(message) as { worktree?: unknown; paths?: unknown } | null;
  if (!b || typeof b.worktree !== 'string') return [];
  const paths = Array.isArray(b.paths)
    ? b.paths.filter((p): p is string => typeof p === 'string')
    : null;
  const out = witnessNames({ worktree: b.worktree, paths }).filter((n) => !seen.has(n));
  for (const n of out) seen.add(n);
  return out;
}

/** Note the step commits an import wrote (`ids`: mark -> commit). */
export function noteWritten(steps: Chained['steps'], ids: ReadonlyMap<number, string>): void {
  for (const s of steps) {
    const id = ids.get(s.mark);
    if (id) written.set(s.ref, id);
  }
}

/** A link as read back: its session event (commit = the step), and its decision records. */
export interface Link {
  link: string;
  chain: string;
  event: SessionEvent;
  /** The decision records' names and commits. */
  records: Array<{ name: string; commit: string }>;
  /** The step's checkpoint has no ref of its own. */
  held: boolean;
  /** The link's own message. */
  message: string;
  /** Committer time, unix seconds. */
  time: number;
}

export interface ChainRead {
  /** Stop after this many links (newest first across the chains). */
  limit?: number;
  /**
   * Only the links that hold a record (their checkpoint, `"held":true`, or a decision record:
   * `"records":["`) or name what a shell call destroyed (`"lost":["`, `"notKept":["`: its
   * checkpoint has a ref, and `guard log` names the paths beside it), chosen by git (`--grep`). JSON
   * escapes a quote inside a string, so these match the link's own fields, or a step's subject
   * line naming such a path: a link more, which holds nothing.
   */
  holding?: boolean;
  /** Only links committed at or after this time (unix seconds). */
  since?: number;
  /** Only links committed at or before this time (unix seconds). */
  until?: number;
}

/**
 * The links of the chains `tips` (chain refs, or `<oid>` values with `chains` naming each), newest
 * first, with ONE `git log --first-parent`. Links whose message is not a step are skipped.
 */
export async function readLinks(
  cwd: string,
  tips: ReadonlyArray<{ chain: string; tip: string }>,
  opts: ChainRead = {},
): Promise<Link[]> {
  if (tips.length === 0) return [];
  const fmt = '%H%x00%P%x00%ct%x00%S%x00%B%x00%x01';
  const args = ['log', '--first-parent', '--source', `--format=${fmt}`];
  if (opts.limit !== undefined) args.push(`--max-count=${opts.limit}`);
  if (opts.since !== undefined) args.push(`--since=${opts.since}`);
  if (opts.until !== undefined) args.push(`--until=${opts.until}`);
  if (opts.holding)
    args.push(
      '--fixed-strings',
      '--grep="held":true',
      '--grep="records":["',
      '--grep="lost":["',
      '--grep="notKept":["',
    );
  const r = await git([...args, ...new Set(tips.map((t) => t.tip)), '--'], { cwd });
  // each commit's chain: the tip (as given) it was reached from (--source)
  const chainOfTip = new Map(tips.map((t) => [t.tip, t.chain]));
  const out: Link[] = [];
  for (const rec of r.stdout.toString('utf8').split('\0\x01\n')) {
    const [link, parents, time, source, ...rest] = rec.replace(/^\n/, '').split('\0');
    if (!link || parents === undefined || source === undefined) continue;
    const ps = parents.split(' ').filter(Boolean);
    const chain = chainOfTip.get(source) ?? '';
    const l = parseLink(link, ps, chain, rest.join('\0').replace(/\n$/, ''));
    if (l) out.push({ ...l, time: Number(time) || 0 });
  }
  return out;
}

/** Every session chain's ref (`<folder>chain`), from the ref store's files, else one for-each-ref. */
export async function chainTips(repo: {
  root: string;
  commonDir: string;
}): Promise<Array<{ chain: string; tip: string }>> {
  const { readRefStore } = await import('./ref-list.js');
  const store = await readRefStore(repo.commonDir);
  if (!store) {
    const r = await git(['for-each-ref', '--format=%(refname)', `${SESSION_REFS}*/*/${CHAIN}`], {
      cwd: repo.root,
    });
    const refs = r.stdout.toString('utf8').split('\n').filter(isChainRef);
    return refs.map((chain) => ({ chain, tip: chain }));
  }
  const out: Array<{ chain: string; tip: string }> = [];
  const end = `${SESSION_REFS.slice(0, -1)}0`;
  // folder by folder (refs/guard/sessions/<harness>/<key>/), two binary searches each
  for (let at = store.firstIn(SESSION_REFS, end); at !== null;) {
    const [harness, key, rest] = at.slice(SESSION_REFS.length).split('/');
    if (rest === undefined) {
      at = store.firstIn(`${at}\0`, end);
      continue;
    }
    const folder = `${SESSION_REFS}${harness}/${key}/`;
    const chain = folder + CHAIN;
    if (store.firstIn(chain, `${chain}\0`) === chain) out.push({ chain, tip: chain });
    at = store.firstIn(`${folder.slice(0, -1)}0`, end);
  }
  return out;
}

function parseLink(
  link: string,
  parents: readonly string[],
  chain: string,
  message: string,
): Omit<Link, 'time'> | null {
  const b = parseRecordMessage(message) as {
    step?: unknown;
    records?: unknown;
    held?: unknown;
  } | null;
  if (!b || typeof b.step !== 'string' || !Array.isArray(b.records)) return null;
  const names = b.records.filter((x): x is string => typeof x === 'string');
  // [previous link or the chain's root, step, ...records]
  const at = parents.length - 1 - names.length;
  if (at !== 1 || !chain) return null;
  const folder = chain.slice(0, -CHAIN.length);
  const step = parseSessionEvent(folder + b.step, parents[at]!, message);
  if (!step) return null;
  const records = names.map((name, i) => ({ name, commit: parents[at + 1 + i]! }));
  const event = { ...step, chain, link, records };
  return { link, chain, event, records, held: b.held === true, message };
}

/** How many times a hook call writes its link again after another call of its session moved the chain first. */
const RETRIES = 40;

type Run = (
  commits: readonly RecordCommit[],
  more: { ask: number[]; onWritten: (w: ReadonlyMap<number, Written>) => void },
) => Promise<Map<number, Written>>;

/**
 * Import `commits` with their session steps chained (chainCommits), retried on the chain's new
 * tip when fast-import refused to move it (another hook call of the session moved it first: its
 * compare-and-swap). The chain's parent is the ref's value; a chain whose ref is gone is continued
 * from the journal's last word on it (a chain removed by hand is put back by the next call, not
 * started anew without its steps), or started anew when that commit is gone too.
 */
export async function importChained(
  cwd: string,
  commits: readonly RecordCommit[],
  run: Run,
  ask: readonly number[],
): Promise<Map<number, Written>> {
  const commonDir = commonDirOf(cwd);
  let fromJournal = commonDir !== null;
  for (let attempt = 0; ; attempt++) {
    const now = new Map(
      chainsOf(commits).map((ch) => [ch, commonDir ? refFileValue(commonDir, ch) : null]),
    );
    const absent = [...now].filter(([, v]) => v === null).map(([ch]) => ch);
    if (attempt === 0 && commonDir) await refusePlantedChains(commonDir, now);
    const journaled =
      fromJournal && commonDir && absent.length > 0
        ? await journaledUnder(commonDir, SESSION_REFS, absent)
        : new Map<string, string>();
    const tip = (chain: string) => now.get(chain) ?? journaled.get(chain) ?? null;
    const c = chainCommits(commits, tip);
    if (!c) return run(commits, { ask: [...ask], onWritten: () => {} });
    const want = [...ask, ...c.steps.map((s) => s.mark), ...c.links.map((l) => l.mark)];
    try {
      const w = await run(c.commits, {
        ask: [...new Set(want)],
        onWritten: (w) => {
          const id = (x: string | null) =>
            x?.startsWith(':') ? (w.get(Number(x.slice(1)))?.commit ?? null) : x;
          noteChainLinks(
            commonDir,
            c.links.map((l) => ({ chain: l.chain, from: id(l.from), to: id(`:${l.mark}`)! })),
          );
        },
      });
      noteWritten(c.steps, new Map([...w].map(([m, x]) => [m, x.commit])));
      return w;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      // fast-import's own check (the chain moved on: not contained), or the ref's lock (another
      // call moving it now, or moved between fast-import's read and its update)
      const lost = c.chains.some(
        (ch) => why.includes(`Not updating ${ch} `) || why.includes(`cannot lock ref '${ch}'`),
      );
      if (!lost && fromJournal && journaled.size > 0 && attempt === 0) {
        fromJournal = false; // the journal's tip is gone (gc --prune=now): a new chain
        continue;
      }
      if (!lost || attempt >= RETRIES) throw err;
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 10 * Math.min(attempt + 1, 5)));
    }
  }
}

/**
 * A chain that is there though guard's journal has no word on it (guard notes `+ CHAIN` before
 * its first link exists) was made by hand: `git update-ref` of a new session's chain name onto
 * another session's chain, or onto forged links, before the session's first call (no door checks
 * a ref the journal does not name). Continuing it would make those links this session's: its
 * log, its rewind, its bases (adv6). Refused; a repository with no journal yet is not asked.
 */
async function refusePlantedChains(
  commonDir: string,
  now: ReadonlyMap<string, string | null>,
): Promise<void> {
  const there = [...now].filter(([, v]) => v !== null).map(([ch]) => ch);
  if (there.length === 0) return;
  const named = await journalNames(commonDir, there);
  const planted = named ? there.filter((ch) => !named.has(ch)) : [];
  if (planted.length === 0) return;
  const { GuardError } = await import('../core/errors.js');
  throw new GuardError(
    'E_RECORD',
    `${planted[0]} is a session chain guard never wrote (its journal has no word on it: made by hand, pointing at another session's links or at commits guard did not write); guard adds nothing to it`,
    `a person: look at it (git log --first-parent ${planted[0]}), remove it (git update-ref -d ${planted[0]}) and run guard doctor`,
  );
}

/** The chains the steps among `commits` go on. */
function chainsOf(commits: readonly RecordCommit[]): string[] {
  return [
    ...new Set(commits.flatMap((c) => (c.chain && c.ref && isStep(c.ref) ? [chainOf(c.ref)] : []))),
  ];
}

/**
 * The session chains whose links name a hook call's checkpoint by its id (`<time>-<random>`, the
 * name its ref would have had), each with the step that names it; the links walked are those of
 * the id's second. More than one step: a chain planted by hand claims the id too (restore.ts).
 */
export async function chainedClaims(
  cwd: string,
  id: string,
): Promise<Array<{ chain: string; step: string }>> {
  const t = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-/.exec(id);
  const commonDir = commonDirOf(cwd);
  if (!t || !commonDir) return [];
  const s = Date.UTC(+t[1]!, +t[2]! - 1, +t[3]!, +t[4]!, +t[5]!, +t[6]!) / 1000;
  const tips = await chainTips({ root: cwd, commonDir });
  const links = await readLinks(cwd, tips, { since: s - 1, until: s + 1 });
  return links
    .filter((l) => l.event.checkpoint === id)
    .map((l) => ({ chain: l.chain, step: l.event.commit }));
}

/** A chained step's checkpoint (`<step>^`): its commit, tree, parents and message, as `for-each-ref` gives a ref's. */
export async function stepCheckpoint(cwd: string, step: string): Promise<string[] | null> {
  const r = await git(['log', '-1', '--format=%H%x00%T%x00%P%x00%B', `${step}^`, '--'], { cwd });
  const [commit, tree, parents, ...rest] = r.stdout.toString('utf8').split('\0');
  return commit && tree ? [commit, tree, parents ?? '', rest.join('\0')] : null;
}

/** A chain as `guard log --prune` leaves it: the links kept (oldest first), on a new root; none: the chain goes. */
export interface ChainCut {
  ref: string;
  /** The tip the prune read: the chain moves only if it still points there. */
  old: string;
  keep: Array<{ message: string; step: string; records: Array<{ name: string; commit: string }> }>;
}

/** What `guard log --prune` does to the chains: cut them, give kept decisions of pruned steps refs, note the steps gone. */
export interface Cuts {
  chains: ChainCut[];
  revive: Array<{ ref: string; oid: string }>;
  gone: string[];
}

/**
 * Write `guard log --prune`'s cut chains: each chain's kept links again on a new root (one
 * fast-import), then ONE `update-ref --stdin` that moves each chain from the tip the prune read
 * (or deletes it when nothing is kept) and gives `revive` (decision records of pruned steps that
 * are kept) refs of their own. The steps cut are noted as removed by guard (`gone`).
 */
export async function cutChains(cwd: string, now: Date, cut: Cuts): Promise<void> {
  const { importCommits } = await import('./records.js');
  const commits: RecordCommit[] = [];
  const tipMark = new Map<string, number>();
  let mark = CHAIN_MARKS;
  for (const c of cut.chains) {
    if (c.keep.length === 0) continue;
    // the kept links witness the first touches among them, as the index rebuilt from them names
    const seen = new Set<string>();
    let prev = `:${++mark}`;
    commits.push({ mark, parent: null, message: CHAIN_ROOT, changes: [] });
    for (const l of c.keep) {
      commits.push({
        mark: ++mark,
        parent: prev,
        merges: [l.step, ...l.records.map((r) => r.commit)],
        message: l.message,
        changes: witnessChanges(firstOf(l.message, seen), l.step),
      });
      prev = `:${mark}`;
    }
    tipMark.set(c.ref, mark);
  }
  const written = await importCommits(cwd, commits, now, { ask: [...tipMark.values()] });
  const lines: string[] = [];
  const tips: Array<{ ref: string; oid: string }> = [];
  for (const c of cut.chains) {
    const m = tipMark.get(c.ref);
    const oid = m === undefined ? null : written.get(m)?.commit;
    if (oid) tips.push({ ref: c.ref, oid });
    lines.push(oid ? `update ${c.ref}\0${oid}\0${c.old}\0` : `delete ${c.ref}\0${c.old}\0`);
  }
  for (const r of cut.revive) (lines.push(`create ${r.ref}\0${r.oid}\0`), tips.push(r));
  const commonDir = commonDirOf(cwd);
  await journaledRefWrite(
    cwd,
    tips.map((t) => t.ref),
    async () => {
      if (lines.length > 0)
        await git(['update-ref', '--no-deref', '--stdin', '-z'], { cwd, input: lines.join('') });
      return tips;
    },
  );
  const deleted = cut.chains.filter((c) => !tipMark.has(c.ref)).map((c) => c.ref);
  noteGone(commonDir, [...deleted, ...cut.gone]);
}
