import { existsSync } from 'node:fs';
import path from 'node:path';
import { packedLookup, packedRefsBytes } from './packed-refs.js';
import {
  commonDirOf,
  journaledRefWrite,
  journaledUnder,
  noteGone,
  readJournal,
} from './journal.js';
import { git } from './run.js';

/**
 * Where guard keeps, per local branch, the last tip that passed its gate:
 * `refs/guard/verified/heads/NAME` for `refs/heads/NAME`. Written only by the
 * reference-transaction hook after it measured a move (and by check and init
 * when a branch has none yet). Every later move, and every guard command, is
 * measured from there, so neither a commit message nor one more commit on top
 * hides a move that skipped the gate: only a move the gate measured advances it.
 */
export const VERIFIED_REFS = 'refs/guard/verified/';

export const verifiedRef = (branchRef: string): string =>
  VERIFIED_REFS + branchRef.replace(/^refs\//, '');

/** git's null object id, in either hash: all zeroes. */
export const isZeroOid = (oid: string): boolean => /^0+$/.test(oid);

/**
 * Where guard keeps, per local branch and per day, the tip the branch had
 * when it first moved that day, or the last tip a person approved since:
 * `refs/guard/anchor/<YYYY-MM-DD>/heads/NAME`. The branch gate measures every
 * move from there as well, so that three commits that each take a little of
 * one file cannot empty it (step by step, "salami"). The day is in the name,
 * so one for-each-ref reads it with the tips; older days are deleted.
 */
export const ANCHOR_REFS = 'refs/guard/anchor/';

/** Kept tips of moves that dropped commits: `refs/guard/dropped/<time>-<id>` (docs/refs.md). */
export const DROPPED_REFS = 'refs/guard/dropped/';

export interface Anchor {
  day: string;
  oid: string;
  /** The anchor ref itself. */
  ref: string;
}

/** The anchor ref of `branchRef` for `day` (YYYY-MM-DD, UTC). */
export const anchorRef = (branchRef: string, day: string): string =>
  `${ANCHOR_REFS}${day}/${branchRef.replace(/^refs\//, '')}`;

/** The day of `now` as anchors name it (UTC). */
export const anchorDay = (now: Date): string => now.toISOString().slice(0, 10);

/**
 * Every branch tip, every verified tip and every anchor, in one for-each-ref:
 *   "refs/heads/main 1f3c...\n"
 */
export async function branchTips(cwd: string): Promise<{
  heads: Map<string, string>;
  verified: Map<string, string>;
  anchors: Map<string, Anchor[]>;
}> {
  const r = await git(
    [
      'for-each-ref',
      '--format=%(refname) %(objectname)',
      'refs/heads/',
      VERIFIED_REFS,
      ANCHOR_REFS,
    ],
    { cwd },
  );
  const heads = new Map<string, string>();
  const verified = new Map<string, string>();
  const anchors = new Map<string, Anchor[]>();
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    const ref = line.slice(0, sp);
    const oid = line.slice(sp + 1);
    if (ref.startsWith(VERIFIED_REFS)) verified.set('refs/' + ref.slice(VERIFIED_REFS.length), oid);
    else if (ref.startsWith(ANCHOR_REFS)) {
      const rest = ref.slice(ANCHOR_REFS.length);
      const slash = rest.indexOf('/');
      if (slash <= 0) continue;
      const branch = 'refs/' + rest.slice(slash + 1);
      anchors.set(branch, [
        ...(anchors.get(branch) ?? []),
        { day: rest.slice(0, slash), oid, ref },
      ]);
    } else heads.set(ref, oid);
  }
  await Promise.all([anchorsAsJournaled(cwd, anchors), verifiedAsJournaled(cwd, verified)]);
  return { heads, verified, anchors };
}

/**
 * A verified tip is where every later move is measured from: an agent that
 * commits past every hook and then moves it onto its commit
 * (`git update-ref refs/guard/verified/heads/main HEAD`) would make the
 * ungated commit look measured. guard journals every verified tip it writes,
 * so the journaled commit wins over the ref store (the doors also say so:
 * flows/doctor/integrity.ts), as for anchors. `verified` is keyed by branch ref.
 */
async function verifiedAsJournaled(cwd: string, verified: Map<string, string>): Promise<void> {
  const common = commonDirOf(cwd);
  if (!common) return;
  for (const [ref, oid] of await journaledUnder(common, VERIFIED_REFS).catch(
    () => new Map<string, string>(),
  )) {
    verified.set('refs/' + ref.slice(VERIFIED_REFS.length), oid);
  }
}

/**
 * The verified tip of one branch: the journaled one when guard journaled it, else the ref store's.
 * `present`: a commit the caller knows git has (HEAD, read beside): when the journaled tip is it,
 * no process asks git whether it still has it (the usual case: the branch is where the gate left it).
 */
export async function verifiedTip(
  cwd: string,
  branchRef: string,
  present?: string,
): Promise<string | null> {
  const ref = verifiedRef(branchRef);
  const common = commonDirOf(cwd);
  const journaled = common
    ? (
        await journaledUnder(common, VERIFIED_REFS, [ref]).catch(() => new Map<string, string>())
      ).get(ref)
    : undefined;
  if (journaled !== undefined && journaled === present) return journaled;
  // the journaled commit, while git still has it (a gc two weeks after a branch was rewritten may not)
  return (journaled ? await resolveRev(cwd, journaled) : null) ?? (await resolveRev(cwd, ref));
}

/**
 * The day's anchor is where step-by-step losses are measured from: an agent
 * that moves it to the branch's tip (`git update-ref refs/guard/anchor/...
 * HEAD`) or deletes it before each small trim would reset the count. guard
 * journals every anchor it writes (settleMoves), so the journaled commit
 * wins over the ref store for an anchor moved or removed outside guard (the
 * doors also say so: flows/doctor/integrity.ts). One file read.
 */
async function anchorsAsJournaled(cwd: string, anchors: Map<string, Anchor[]>): Promise<void> {
  const common = commonDirOf(cwd);
  if (!common) return;
  const journaled = (await readJournal(common).catch(() => [])).filter((t) =>
    t.ref.startsWith(ANCHOR_REFS),
  );
  for (const t of journaled) {
    const rest = t.ref.slice(ANCHOR_REFS.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) continue;
    const branch = 'refs/' + rest.slice(slash + 1);
    const list = anchors.get(branch) ?? [];
    const here = list.find((a) => a.ref === t.ref);
    if (here) here.oid = t.oid;
    else anchors.set(branch, [...list, { day: rest.slice(0, slash), oid: t.oid, ref: t.ref }]);
  }
}

/** What a move that passed the gate leaves behind, for `settleMoves`. */
export interface Settled {
  branchRef: string;
  to: string;
  /** The anchor to set for today (absent: leave it). */
  anchor?: string;
  /** refs/guard/dropped/... -> each dropped tip. */
  dropped?: ReadonlyArray<{ ref: string; tip: string }>;
}

/**
 * Record, in one `update-ref --stdin` (one transaction), what moves that
 * passed the gate leave: the verified tips, today's anchors, the tips of
 * dropped commits kept. Not a compare-and-swap (see markVerified).
 * https://git-scm.com/docs/git-update-ref#_description
 */
export async function settleMoves(
  cwd: string,
  moves: readonly Settled[],
  day: string,
  staleAnchors: readonly string[] = [],
): Promise<void> {
  let input = '';
  for (const m of moves) {
    input += `update ${verifiedRef(m.branchRef)} ${m.to}\n`;
    if (m.anchor) input += `update ${anchorRef(m.branchRef, day)} ${m.anchor}\n`;
    for (const d of m.dropped ?? []) input += `create ${d.ref} ${d.tip}\n`;
  }
  // a dropped tip is the last ref holding that work, and the verified tip and the day's anchor are what moves are
  // measured from: all journaled as guard writes them, so a deletion or a move from outside is noticed (flows/doctor/integrity.ts)
  const tips = moves.flatMap((m) => [
    { ref: verifiedRef(m.branchRef), oid: m.to },
    ...(m.anchor ? [{ ref: anchorRef(m.branchRef, day), oid: m.anchor }] : []),
    ...(m.dropped ?? []).map((d) => ({ ref: d.ref, oid: d.tip })),
  ]);
  if (input !== '')
    await journaledRefWrite(
      cwd,
      tips.map((t) => t.ref),
      async () => {
        await git(['update-ref', '--no-deref', '-m', 'guard: passed the gate', '--stdin'], {
          cwd,
          input,
        });
        return tips;
      },
    );
  // Other days' anchors (of every branch, discarded lanes too), once a day: on their own and
  // best effort, so that two moves racing to delete them never fail the move itself
  if (staleAnchors.length > 0) {
    const del = staleAnchors.map((ref) => `delete ${ref}\n`).join('');
    await git(['update-ref', '--no-deref', '--stdin'], { cwd, input: del, okCodes: [128] }).catch(
      () => undefined,
    );
    noteGone(commonDirOf(cwd), staleAnchors);
  }
}

/**
 * What a move of a branch from `from` to `to` brings in is measured from the
 * best common ancestor: `from` itself for a fast-forward, the parent of the
 * replaced commit for an amend, the fork point for a rebase or a reset and
 * commit. Null when the two share no history (an orphan): then the whole of
 * `to` is measured against `from`.
 * https://git-scm.com/docs/git-merge-base
 */
export async function moveBase(cwd: string, from: string, to: string): Promise<string> {
  const r = await git(['merge-base', from, to], { cwd, okCodes: [1] });
  const base = r.stdout.toString('utf8').trim().split('\n')[0];
  return r.code === 0 && base ? base : from;
}

/**
 * Record that `branchRef` at `tip` passed the gate. Not a compare-and-swap:
 * the hook runs while git holds the branch's lock, so moves of one branch are
 * already serialised, and the newest measured tip is the one to keep.
 */
export async function markVerified(cwd: string, branchRef: string, tip: string): Promise<void> {
  await journaledRefWrite(cwd, [verifiedRef(branchRef)], async () => {
    await git(
      ['update-ref', '--no-deref', '-m', 'guard: passed the gate', verifiedRef(branchRef), tip],
      {
        cwd,
      },
    );
    return [{ ref: verifiedRef(branchRef), oid: tip }];
  });
}

/** Committer time (unix seconds) of each commit, in one process; 0 where unknown. */
export async function commitTimes(
  cwd: string,
  commits: readonly string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (commits.length === 0) return out;
  // --no-walk: exactly these commits; "%H %ct"
  const r = await git(['log', '--no-walk=unsorted', '--format=%H %ct', ...commits, '--'], {
    cwd,
    okCodes: [128],
  });
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [oid, t] = line.split(' ');
    if (oid && t) out.set(oid, Number(t) || 0);
  }
  return out;
}

/** The commit id of `rev`, or null. */
export async function resolveRev(cwd: string, rev: string): Promise<string | null> {
  const r = await git(['rev-parse', '-q', '--verify', '--end-of-options', `${rev}^{commit}`], {
    cwd,
    okCodes: [1, 128],
  });
  const oid = r.stdout.toString('utf8').trim();
  return r.code === 0 && oid ? oid : null;
}

/**
 * Take every branch that has no verified tip yet as it is (guard init: what
 * was there before guard is not guard's to judge), in one `update-ref
 * --stdin`; "create" never overwrites a tip the gate recorded.
 * https://git-scm.com/docs/git-update-ref#_description
 */
export async function adoptTips(cwd: string): Promise<string[]> {
  const { heads, verified } = await branchTips(cwd);
  const missing = [...heads].filter(([ref]) => !verified.has(ref));
  if (missing.length === 0) return [];
  const input = missing.map(([ref, oid]) => `create ${verifiedRef(ref)} ${oid}\n`).join('');
  const tips = missing.map(([ref, oid]) => ({ ref: verifiedRef(ref), oid }));
  await journaledRefWrite(
    cwd,
    tips.map((t) => t.ref),
    async () => {
      const r = await git(['update-ref', '--no-deref', '--stdin'], { cwd, input, okCodes: [128] });
      return r.code === 0 ? tips : [];
    },
  );
  return missing.map(([ref]) => ref);
}

/**
 * The base a lane is measured against: the merge-base of what the lane holds
 * with the main tree's HEAD, so it comes from the main tree's own history.
 * refs/guard/lanes/NAME says where the lane started, but any process in the
 * lane can move it; it is never read as the base. A lane that shares no
 * history with the main tree (an orphan) is measured against HEAD itself.
 */
export async function laneBase(
  mainRoot: string,
  laneHead: string,
): Promise<{ base: string; policyRev: string } | null> {
  // run in the main tree, "HEAD" is the main tree's HEAD: one process in the usual case
  const r = await git(['merge-base', laneHead, 'HEAD'], { cwd: mainRoot, okCodes: [1, 128] });
  const base = r.stdout.toString('utf8').trim().split('\n')[0];
  if (r.code === 0 && base) return { base, policyRev: 'HEAD' };
  const mainHead = await resolveRev(mainRoot, 'HEAD');
  return mainHead ? { base: mainHead, policyRev: mainHead } : null;
}

/**
 * Commits that `.git/shallow` cuts off from their parents, among those a move
 * brings in (reachable from `to`, not from `from`). A shallow clone cuts deep
 * history that both sides share; a cut inside what the move brings in only
 * hides its merge-base (an amend then looks like a small change on top of
 * the commit it replaces). Two processes, the second only in a shallow repository.
 * https://git-scm.com/docs/shallow
 */
export async function shallowCutsIn(cwd: string, from: string, to: string): Promise<string[]> {
  const { readFile } = await import('node:fs/promises');
  const path = await import('node:path');
  const dir = (
    await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd })
  ).stdout
    .toString('utf8')
    .trim();
  const text = await readFile(path.join(dir, 'shallow'), 'utf8').catch(() => '');
  const cut = new Set(text.split('\n').filter(Boolean));
  if (cut.size === 0) return [];
  const r = await git(['rev-list', to, '--not', from], { cwd, okCodes: [128] });
  return r.stdout
    .toString('utf8')
    .split('\n')
    .filter((oid) => cut.has(oid));
}

/**
 * `git pack-refs --prune` (and `git gc`, which runs it) moves loose branches
 * into packed-refs and then deletes the loose files in one transaction each:
 * the reference-transaction hook sees a deletion of a branch that still
 * exists. True when that is all it is: packed-refs already holds the branch
 * at the same tip, and no packed-refs.lock is held. A real deletion of a
 * packed branch holds that lock while the hook runs (git rewrites
 * packed-refs in the same transaction), and one of a loose-only branch has
 * no packed copy, so both are still seen as deletions.
 */
export function packedStill(commonDir: string, ref: string, tip: string): boolean {
  if (existsSync(path.join(commonDir, 'packed-refs.lock'))) return false;
  const buf = packedRefsBytes(commonDir);
  return buf !== null && packedLookup(buf, ref) === tip;
}

/**
 * Does any branch, remote-tracking branch, tag or tip guard already kept,
 * other than `except`, hold `tip`? One for-each-ref. (`git branch -D` runs
 * two ref transactions, packed and loose, so the hook sees one deletion
 * twice: the first keeps the tip, the second finds it kept.)
 * https://git-scm.com/docs/git-for-each-ref#Documentation/git-for-each-ref.txt---containsltobjectgt
 */
export async function heldElsewhere(
  cwd: string,
  tip: string,
  except: ReadonlySet<string>,
): Promise<boolean> {
  const r = await git(
    [
      'for-each-ref',
      '--format=%(refname)',
      `--contains=${tip}`,
      'refs/heads/',
      'refs/remotes/',
      'refs/tags/',
      DROPPED_REFS,
    ],
    { cwd, okCodes: [128, 129] },
  );
  return r.stdout
    .toString('utf8')
    .split('\n')
    .some((ref) => ref !== '' && !except.has(ref));
}

/** Keep tips as refs/guard/dropped/ refs, in one update-ref. */
export async function keepDropped(
  cwd: string,
  kept: ReadonlyArray<{ ref: string; tip: string }>,
): Promise<void> {
  if (kept.length === 0) return;
  await journaledRefWrite(
    cwd,
    kept.map((d) => d.ref),
    async () => {
      await git(['update-ref', '--no-deref', '-m', 'guard: kept a dropped tip', '--stdin'], {
        cwd,
        input: kept.map((d) => `create ${d.ref} ${d.tip}\n`).join(''),
      });
      return kept.map((d) => ({ ref: d.ref, oid: d.tip }));
    },
  );
}
