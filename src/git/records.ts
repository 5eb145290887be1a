import { cQuote } from '../core/quote.js';
import { packedLookup } from './packed-refs.js';
import { lstatSync, readFileSync } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { GuardError } from '../core/errors.js';
import { MODE } from '../core/modes.js';
import {
  batchMessage,
  recordId,
  rejectedMessage,
  type DecisionRecord,
  type RecordContext,
} from '../core/record.js';
import type { DiffEntry } from './diff.js';
import { git, gitEnv, gitSpawnArgs, type GitOptions } from './run.js';
import { commonDirOf, journaledRefWrite, noteGone } from './journal.js';
import { faultPoint } from '../runtime/faults.js';
import { randomHex } from '../core/digest.js';

export const REFS = {
  root: 'refs/guard/',
  checkpoints: 'refs/guard/checkpoints/',
  rejected: 'refs/guard/rejected/',
  decisions: 'refs/guard/decisions/',
} as const;

export function newRef(prefix: string, now = new Date()): string {
  return prefix + recordId(now, randomHex(4));
}

/** What a commit under refs/guard/ should hold. */
export interface RecordCommit {
  /** The ref to create; omit for an intermediate commit that only a later one names by `mark`. */
  ref?: string;
  /** fast-import mark (a positive number), so a later commit can name this one as `:N`. */
  mark?: number;
  message: string;
  /** Parent commit (an id, or `:N` for a marked commit above); null for a root commit (empty tree, plus the changes below). */
  parent: string | null;
  /** Further parents (ids or `:N`), after `parent`: e.g. a checkpoint's commit of the staged index. */
  merges?: string[];
  /** An existing tree to start from instead of the parent's (the changes below apply on top of it). */
  tree?: string;
  /**
   * For a commit without a ref: the branch fast-import builds it on, whose final value is another
   * commit's ref (a session chain's: git/session-chain.ts), instead of a scratch ref deleted at the
   * end (a deletion takes packed-refs' lock, which hook calls at once would contend for).
   */
  branch?: string;
  /** A hook call's session step: chained on its session's chain instead of a ref of its own (git/session-chain.ts). */
  chain?: boolean;
  /** A hook call's checkpoint that its session step reaches: no ref of its own when the step is chained (git/session-chain.ts). */
  inChain?: boolean;
  /** A chained step that made these session index entries first (w-, p-): its link witnesses them (git/session-chain.ts). */
  witness?: readonly string[];
  /** Tree changes relative to the parent's tree. */
  changes: Array<
    | { kind: 'blob'; path: string; mode: string; oid: string }
    | { kind: 'inline'; path: string; mode: string; data: Buffer }
    | { kind: 'delete'; path: string }
  >;
}

/**
 * The two records every gate keeps, built in one place (check, write,
 * review, the hook and the branch gate each decide what goes in them):
 *
 * - the decision record of a run: every file's decision, in one commit with
 *   no tree of its own, under refs/guard/decisions/;
 * - a rejected ref: what was refused (or left out by a strategy or a partial
 *   take), under refs/guard/rejected/, with the base (or a mark) as parent
 *   and the base plus the proposal as tree, so `git diff R^ R` shows it.
 */
export function decisionBatch(
  ctx: RecordContext,
  records: readonly DecisionRecord[],
  now: Date,
  ref = newRef(REFS.decisions, now),
): RecordCommit {
  return { ref, parent: null, message: batchMessage(ctx, [...records]), changes: [] };
}

export interface RejectedCommitInput {
  kept: DecisionRecord | DecisionRecord[];
  ref: string;
  parent: string | null;
  changes: RecordCommit['changes'];
}

export function rejectedCommit(
  ctx: RecordContext,
  { kept, ref, parent, changes }: RejectedCommitInput,
): RecordCommit {
  return { ref, parent, message: rejectedMessage(ctx, kept), changes };
}

const COMMITTER = 'guard <guard@localhost>';
/** Marks given to commits that have a ref but no mark of their own (callers' marks stay below). */
const JOURNAL_MARKS = 2_000_000;
/** git's null object id: "no object" in update-index input and in trailers for a deletion. */
export const ZERO_OID = '0000000000000000000000000000000000000000';
/** fast-import needs a ref for every commit; `reset` to the null id at the end deletes it. */
const SCRATCH_PREFIX = 'refs/guard/tmp/';

function data(buf: Buffer): Buffer[] {
  return [Buffer.from(`data ${buf.length}\n`), buf, Buffer.from('\n')];
}

export interface WriteRecordsOptions {
  /** Extra environment for the git process (e.g. config a repository guard does not trust must not set). */
  env?: NodeJS.ProcessEnv;
  /** Marks whose commit and tree ids the caller needs back (`get-mark`, `ls`: answered on stdout, in the same process). */
  ask?: readonly number[];
  /** Called with the marks asked for once fast-import wrote them, before the journal notes the refs. */
  onWritten?: (written: ReadonlyMap<number, Written>) => void;
}

/** A marked commit's id and its tree's, as fast-import wrote them. */
export interface Written {
  commit: string;
  tree: string;
}

/**
 * Write any number of commits and their refs with ONE `git fast-import`
 * process: no per-record commit-tree/update-ref, and the refs are created
 * together at the end or (if fast-import fails) not at all.
 * https://git-scm.com/docs/git-fast-import
 */
export async function writeRecords(
  cwd: string,
  commits: readonly RecordCommit[],
  now = new Date(),
): Promise<void> {
  await importCommits(cwd, commits, now);
}

/** writeRecords, and the ids of the marks asked for (`opts.ask`). */
export async function importCommits(
  cwd: string,
  commits: readonly RecordCommit[],
  now = new Date(),
  opts: WriteRecordsOptions = {},
): Promise<Map<number, Written>> {
  // (loaded only for a hook's session steps: check and write load one file of guard's own)
  if (!commits.some((c) => c.chain)) return importOnce(cwd, commits, now, opts);
  const chain = await import('./session-chain.js');
  if (!chain.chainOn()) return importOnce(cwd, commits, now, opts);
  return chain.importChained(
    cwd,
    commits,
    (cs, more) => importOnce(cwd, cs, now, { ...opts, ...more }),
    opts.ask ?? [],
  );
}

async function importOnce(
  cwd: string,
  commits: readonly RecordCommit[],
  now: Date,
  opts: WriteRecordsOptions,
): Promise<Map<number, Written>> {
  const written = new Map<number, Written>();
  if (commits.length === 0) return written;
  const when = `${Math.floor(now.getTime() / 1000)} +0000`;
  const parts: Buffer[] = [Buffer.from('feature done\n')];
  const SCRATCH = SCRATCH_PREFIX + randomHex(6);
  const scratch: string[] = [];
  // each ref's commit is noted in guard's journal (journal.ts): a mark to ask its id by
  const noted: Array<{ ref: string; mark: number }> = [];
  let nextMark = JOURNAL_MARKS;
  const used = new Set<string>();
  for (const c0 of commits) {
    const c = c0.ref !== undefined && !c0.mark ? { ...c0, mark: nextMark++ } : c0;
    if (c.ref !== undefined) noted.push({ ref: c.ref, mark: c.mark! });
    // an intermediate commit goes on a scratch ref of its own (a parentless one must not
    // follow another's tip), deleted at the end
    let branch = c.ref ?? c.branch;
    if (branch === undefined) scratch.push((branch = `${SCRATCH}-${scratch.length + 1}`));
    // (a parentless commit on a branch this import used already: `reset` first, or it follows the tip)
    else if (!c.parent && used.has(branch)) parts.push(Buffer.from(`reset ${branch}\n\n`));
    used.add(branch);
    parts.push(Buffer.from(`commit ${branch}\n`));
    if (c.mark) parts.push(Buffer.from(`mark :${c.mark}\n`));
    parts.push(Buffer.from(`committer ${COMMITTER} ${when}\n`));
    parts.push(...data(Buffer.from(c.message, 'utf8')));
    if (c.parent) parts.push(Buffer.from(`from ${c.parent}\n`));
    for (const m of c.merges ?? []) parts.push(Buffer.from(`merge ${m}\n`));
    // the root tree as a whole: `M 040000 <tree> ""`
    if (c.tree) parts.push(Buffer.from(`M ${MODE.tree} ${c.tree} ""\n`));
    for (const ch of c.changes) {
      // fast-import's paths are always C-quoted, so spaces, quotes and newlines survive
      if (ch.kind === 'delete') parts.push(Buffer.from(`D ${cQuote(ch.path)}\n`));
      else if (ch.kind === 'blob')
        parts.push(Buffer.from(`M ${ch.mode} ${ch.oid} ${cQuote(ch.path)}\n`));
      else parts.push(Buffer.from(`M ${ch.mode} inline ${cQuote(ch.path)}\n`), ...data(ch.data));
    }
    parts.push(Buffer.from('\n'));
  }
  for (const b of scratch) parts.push(Buffer.from(`reset ${b}\nfrom ${'0'.repeat(40)}\n\n`));
  // "<oid> LF" for get-mark; "040000 tree <oid> HT LF" for ls of the root
  const ask = opts.ask ?? [];
  for (const m of ask) parts.push(Buffer.from(`get-mark :${m}\nls :${m} ""\n`));
  for (const n of noted) parts.push(Buffer.from(`get-mark :${n.mark}\n`));
  // the ids fast-import wrote, read before its `done` moves any ref where a note must come first:
  // a chain's link is in the journal before the chain holds it (another call of the session
  // reading the net then sees the move guard is making, not one made outside guard)
  const answered = (out: string) => {
    readWritten(out.split('\n'), ask, written);
    opts.onWritten?.(written);
    return 'done\n';
  };
  const n = 2 * ask.length + noted.length;
  const twoPart = opts.onWritten !== undefined && n > 0;
  const io = twoPart
    ? { input: Buffer.concat(parts), thenInput: { lines: n, rest: answered } }
    : { input: Buffer.concat([...parts, Buffer.from('done\n')]) };
  refusePlanted(
    cwd,
    [...used].filter((r) => !r.startsWith(SCRATCH)),
  );
  // every ref named as coming in guard's journal before fast-import can write it, each tip noted
  // after (the scratch refs are reset to nothing in the same run: fast-import never writes them)
  await journaledRefWrite(
    cwd,
    noted.map((n) => n.ref),
    async () => {
      const out = await runFastImport(cwd, opts.env, io);
      faultPoint('records:refs-moved');
      if (!twoPart) answered(out);
      const lines = out.split('\n');
      const tips = noted
        .map((n, i) => ({ ref: n.ref, oid: lines[2 * ask.length + i]?.trim() ?? '' }))
        .filter((t) => OID.test(t.oid));
      faultPoint('records:before-note');
      return tips;
    },
  );
  return written;
}

/**
 * Refuse to write refs that are not plain ref files where they are: a symbolic ref (`ref:
 * refs/heads/main`) or a symlink planted at a name guard writes by rule (a session's chain,
 * `refs/guard/sessions/<harness>/<key>/chain`, for a session that has none yet), or a folder on
 * the way that is a symlink. fast-import writes through a symbolic ref: a hook call moved the
 * user's branch onto the chain's new root (adv6). File reads only: an lstat per folder.
 */
function refusePlanted(cwd: string, refs: readonly string[]): void {
  const commonDir = commonDirOf(cwd);
  if (!commonDir) return;
  for (const ref of refs) {
    const parts = ref.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const at = path.join(commonDir, ...parts.slice(0, i));
      let st: import('node:fs').Stats;
      try {
        st = lstatSync(at);
      } catch {
        break;
      }
      const last = i === parts.length;
      const planted =
        st.isSymbolicLink() || (last && st.isFile() && readFileSync(at, 'utf8').startsWith('ref:'));
      if (planted)
        throw new GuardError(
          'E_RECORD',
          `${ref} is not a ref guard wrote (${path.relative(commonDir, at)} is a symbolic ref or a symlink, put there by hand): guard writes nothing through it`,
          `a person: look at it, then remove it (git update-ref -d --no-deref ${ref}) and run guard doctor`,
        );
    }
  }
}

/** One `git fast-import --quiet` of `input`; its stdout (the get-mark and ls answers). */
/** The commit and root tree ids fast-import answered for the marks asked (`get-mark`, `ls`), into `written`. */
function readWritten(
  lines: readonly string[],
  ask: readonly number[],
  written: Map<number, Written>,
) {
  ask.forEach((m, i) => {
    const commit = lines[2 * i]?.trim() ?? '';
    const tree = ROOT_TREE_LINE.exec(lines[2 * i + 1] ?? '')?.[1] ?? '';
    if (!OID.test(commit) || !OID.test(tree))
      throw new GuardError(
        'E_RECORD',
        `git fast-import did not say what it wrote for mark :${m}`,
        'run guard again; GUARD_DEBUG=1 shows more',
      );
    written.set(m, { commit, tree });
  });
}

async function runFastImport(
  cwd: string,
  env: WriteRecordsOptions['env'],
  io: Pick<GitOptions, 'input' | 'thenInput'>,
): Promise<string> {
  try {
    // --quiet: no statistics on stderr; refs are new and unique, so no --force.
    return (
      await git(['fast-import', '--quiet'], { cwd, ...io, ...(env ? { env } : {}) })
    ).stdout.toString('utf8');
  } catch (err) {
    if (err instanceof GuardError && err.code === 'E_RECORD') throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new GuardError(
      'E_RECORD',
      `could not record guard's decision under refs/guard/: ${why}`,
      'check that .git is writable and has space; guard fails closed',
    );
  }
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** fast-import's answer to `ls :<mark> ""`: "040000 tree <oid> HT LF" */
const ROOT_TREE_LINE = new RegExp(`^${MODE.tree} tree ([0-9a-f]+)\t`);

export interface RefRecord {
  ref: string;
  oid: string;
  /** committer time, unix seconds */
  time: number;
  parent: string | null;
  message: string;
}

/**
 * Every ref under refs/guard/ with its commit message, in one for-each-ref.
 * Fields are separated by NUL and records by NUL NUL... except messages may
 * not contain NUL, so the format below is unambiguous.
 */
export async function listRecords(cwd: string, prefix: string = REFS.root): Promise<RefRecord[]> {
  const fmt = '%(refname)%00%(objectname)%00%(committerdate:unix)%00%(parent)%00%(contents)%00%01';
  const r = await git(['for-each-ref', `--format=${fmt}`, prefix], { cwd });
  const text = r.stdout.toString('utf8');
  const out: RefRecord[] = [];
  for (const rec of text.split('\0\x01\n')) {
    if (!rec) continue;
    const [ref, oid, time, parent, ...rest] = rec.split('\0');
    if (!ref || !oid) continue;
    out.push({
      ref,
      oid,
      time: Number(time) || 0,
      parent: parent ? parent.split(' ')[0]! : null,
      message: rest.join('\0'),
    });
  }
  return out;
}

/**
 * The tree change that turns a base into a proposed version of one diff
 * entry, for a rejected ref: `git diff REF^ REF` then shows the proposal.
 */
export function proposalChanges(e: DiffEntry): RecordCommit['changes'] {
  const changes: RecordCommit['changes'] = [];
  if (e.oldPath !== undefined) changes.push({ kind: 'delete', path: e.oldPath });
  if (e.newOid && e.newMode)
    changes.push({ kind: 'blob', path: e.path, mode: e.newMode, oid: e.newOid });
  else changes.push({ kind: 'delete', path: e.path });
  return changes;
}

/**
 * Delete refs in one transaction, each only if it still points where it was
 * seen (a ref moved meanwhile fails the whole deletion, nothing is lost).
 * https://git-scm.com/docs/git-update-ref  --stdin -z: "delete SP <ref> NUL <old-oid> NUL"
 */
export async function deleteRefs(
  cwd: string,
  refs: ReadonlyArray<{ ref: string; oid: string }>,
): Promise<void> {
  if (refs.length === 0) return;
  const input = refs.map((r) => `delete ${r.ref}\0${r.oid}\0`).join('');
  await git(['update-ref', '--no-deref', '--stdin', '-z'], { cwd, input });
  noteGone(
    commonDirOf(cwd),
    refs.map((r) => r.ref),
  );
}

export interface RefType {
  ref: string;
  /** commit, tree, blob or tag: a ref may point at a non-commit after a hand edit. */
  type: string;
  oid: string;
}

/** Every ref under `prefix` with the type of the object it points at, in one for-each-ref. */
export async function listRefTypes(cwd: string, prefix: string = REFS.root): Promise<RefType[]> {
  // "refs/guard/checkpoints/20250101T000000Z-ab12cd34 commit <oid>" (ref names hold no spaces: git check-ref-format)
  const r = await git(['for-each-ref', '--format=%(refname) %(objecttype) %(objectname)', prefix], {
    cwd,
  });
  const out: RefType[] = [];
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [ref, type, oid] = line.split(' ');
    if (ref && type && oid) out.push({ ref, type, oid });
  }
  return out;
}

/**
 * A ref's value from packed-refs, read as bytes and searched, never split
 * into lines: the file grows with every ref git packs (100,000 refs under
 * refs/guard/ make it ~10 MB), and a hot path that splits it pays for all
 * of them. Null when it is not there.
 *
 *   <oid> SP <refname> LF      (a `^<oid>` line may follow: the peeled tag)
 *
 * https://git-scm.com/docs/git-pack-refs
 */
export async function packedRefOid(commonDir: string, ref: string): Promise<string | null> {
  const buf = await readFile(`${commonDir}/packed-refs`).catch(() => null);
  return buf ? packedLookup(buf, ref) : null;
}

/** Loose objects before guard asks git to pack (git's own gc.auto is 6,700). */
const LOOSE_OBJECTS_MAX = 2048;
/**
 * Loose refs in refs/guard/'s flat folders (checkpoints, decisions,
 * rejected) before guard packs refs: the session steps grow about as fast
 * as the checkpoints, so refs/guard/ holds about twice this many loose refs
 * at most (issue 22: <= 1,000), each a file every ref read of git lists.
 */
const LOOSE_REFS_MAX = 400;
/**
 * The fan-out folders guard counts loose objects in: 16 of the 256 (objects/07, 17, ..., f7),
 * objects/17 among them. git's own estimate counts objects/17 alone, so it fires when the 9th
 * object lands there: after ~2,200 loose objects at the median, but past 3,000 one time in five
 * and past 3,350 one time in ten (the 10,000-call soak saw 3,364: docs/performance.md). Sixteen
 * folders: the 129th object in them, 1,790-2,360 nineteen times in twenty.
 */
const SAMPLE_FOLDERS = [...'0123456789abcdef'].map((h) => `objects/${h}7`);

/**
 * Every hook call leaves ~10 loose objects (fast-import unpacks a small
 * import), and with time thousands of loose refs; left alone they slow the
 * user's own git and trigger git's automatic gc on their next commit. After
 * writing records, guard estimates the loose objects (the files in 16 of the
 * 256 fan-out folders: 16 readdirs, no process) and past LOOSE_OBJECTS_MAX
 * starts `git gc --auto` in the background, detached: it packs the loose
 * objects into one pack and the loose refs into packed-refs (gc.packRefs),
 * and holds its own lock (gc.pid) so calls that race start nothing twice.
 * git checks again from objects/17 alone: guard's gc.auto is set so that
 * the objects/17 guard read passes that check (256 per object there, less
 * one), and with fewer than two objects there (rare past 2,048: 3 in 1,000)
 * it starts nothing this call. No hook of the repository runs
 * (core.hooksPath: pre-auto-gc is the agent's to write), unreachable
 * objects keep git's two weeks of grace, and no server info is written
 * (repack.updateServerInfo: info/refs would copy every ref again). git's own
 * detaching is off (gc.autoDetach=false: guard's spawn is the background):
 * a detached gc writes any warning to .git/gc.log, and git then skips every
 * `gc --auto` for a day (gc.logExpiry) until someone removes it; the one it
 * prints when loose objects are still many after its run (calls keep
 * writing while it packs) would stop guard's packing with nobody told.
 * GUARD_NO_AUTO_PACK=1 turns it off. Amortised: about one start per 200 tool
 * calls, none on the hot path's answer. Past LOOSE_REFS_MAX loose refs
 * (three readdirs) with few loose objects (fast-import writes a pack past its
 * unpackLimit), `git pack-refs --all --prune` alone, the same way: gc.auto
 * counts objects, never refs.
 * https://git-scm.com/docs/git-gc#Documentation/git-gc.txt---auto
 */
const GC_CONFIG = [
  // no repository hook runs (pre-auto-gc is the agent's to write)
  ...['-c', 'core.hooksPath=/dev/null'],
  // guard's own spawn is the background: git's detaching would read and write .git/gc.log (above)
  ...['-c', 'gc.autoDetach=false'],
  // git's default grace for unreachable objects, whatever the repository says: a
  // `gc.pruneExpire=now` would race another guard's fast-import whose refs are not written yet
  ...['-c', 'gc.pruneExpire=2.weeks.ago'],
  // no dumb-HTTP server info (info/refs, objects/info/packs): info/refs is a second list of every
  // ref, ~230 kB per 1,000 tool calls (docs/performance.md, "What .git grows by"); only a
  // repository served over dumb HTTP reads it, and its own post-update hook writes it there
  ...['-c', 'repack.updateServerInfo=false'],
  // the user's commit-graph written as git's own gc writes it (gc.writeCommitGraph): guard's reads
  // turn the graph off (run.ts GIT_GLOBAL_ARGS, adv7), which would stop gc from writing it; gc and
  // prune find what is reachable from the commits themselves, not from a graph
  ...['-c', 'core.commitGraph=true'],
];

/** git's name for a loose object in a fan-out folder: 38 hex digits (SHA-1), or 62 (SHA-256). */
const LOOSE_NAME = /^(?:[0-9a-f]{38}|[0-9a-f]{62})$/;

/**
 * What to start in the background, from the sampled folders' names and the flat ref folders'
 * (null: nothing). Exported for the unit test.
 */
export function packArgs(sampled: readonly string[][], flatRefs: number): string[] | null {
  const counts = sampled.map((names) => names.filter((n) => LOOSE_NAME.test(n)).length);
  const estimate = (counts.reduce((a, b) => a + b, 0) * 256) / sampled.length;
  // objects/17 (git's own sample): gc.auto such that git's `count > ceil(gc.auto / 256)` holds
  const in17 = counts[1]!;
  if (estimate > LOOSE_OBJECTS_MAX && in17 >= 2) {
    const auto = Math.min(LOOSE_OBJECTS_MAX, 256 * (in17 - 1));
    return [...GC_CONFIG, '-c', `gc.auto=${auto}`, 'gc', '--auto', '--quiet'];
  }
  return flatRefs > LOOSE_REFS_MAX ? ['pack-refs', '--all', '--prune'] : null;
}

/**
 * The repository reads objects from elsewhere too (objects/info/alternates, or the variable). gc
 * repacks with `-l`, which leaves out, and so deletes, every object an alternate also holds: an
 * alternate naming a copy of the store, removed after guard's gc ran, took every commit and
 * checkpoint with it (adv9). guard starts no gc there (the user's own gc --auto still runs at
 * git's 6,700 loose objects). Read only when guard would pack: no cost per call.
 */
async function borrowsObjects(commonDir: string): Promise<boolean> {
  if (process.env.GIT_ALTERNATE_OBJECT_DIRECTORIES) return true;
  return (await stat(`${commonDir}/objects/info/alternates`).catch(() => null)) !== null;
}

export async function packWhenLoose(commonDir: string, cwd: string): Promise<boolean> {
  if (process.env.GUARD_NO_AUTO_PACK === '1') return false;
  const read = (d: string) => readdir(`${commonDir}/${d}`).catch(() => [] as string[]);
  const [sampled, flat] = await Promise.all([
    Promise.all(SAMPLE_FOLDERS.map(read)),
    Promise.all([REFS.checkpoints, REFS.decisions, REFS.rejected].map(read)),
  ]);
  const args = packArgs(
    sampled,
    flat.reduce((n, names) => n + names.length, 0),
  );
  if (!args || (args.includes('gc') && (await borrowsObjects(commonDir)))) return false;
  try {
    const child = spawn('git', gitSpawnArgs(args), {
      cwd,
      env: gitEnv(),
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
