import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { sha1Hex } from '../core/digest.js';
import { GuardError } from '../core/errors.js';
import { RECORD_VERSION, parseRecordMessage } from '../core/record.js';
import { catFileBatch, type CatResult } from './catfile.js';
import { journaledTipsUnder } from './journal.js';
import { packedUnder, type PackedRef } from './packed-refs.js';
import { REFS, newRef, type RecordCommit } from './records.js';
import { sessionKey } from './session.js';
import { git } from './run.js';

/**
 * The session base of `guard write` (DESIGN "base"): the file as it was when
 * the session first touched it, so that many small writes cannot add up to
 * an unapproved rewrite. A session is named by `--session ID` or
 * GUARD_SESSION; with none, the file on disk is the base.
 *
 * Stored the way the harness hook stores its sessions (branch `hook`,
 * src/git/session.ts), so that one store can serve both once it is on main:
 *
 *   refs/guard/sessions/cli/<session key>/<time>-<random>
 *
 * one ref per checkpoint a write took, pointing at a commit whose parent and
 * tree are the checkpoint's, with the event as a JSON record. Read back with
 * one for-each-ref and one cat-file.
 */
export const WRITE_HARNESS = 'cli';

const prefix = (session: string) => `${REFS.root}sessions/${WRITE_HARNESS}/${sessionKey(session)}/`;

/**
 * Writes outside any session: the base is the file as `guard write` first saw
 * it that day (UTC), kept the same way under its own prefix (not a session:
 * `guard rewind` and `guard log --session` never see it), so three writes
 * that each take a little cannot empty a file step by step:
 *
 *   refs/guard/write-base/<YYYY-MM-DD>/f/<key of the work tree and path>/<time>-<random>
 *
 * (named by the file, so that a write finds its file's base from the ref
 * files alone and reads it in the policy's cat-file: no listing of the
 * day's refs and no second cat-file. Before 2026-11-28 the names were
 * `<YYYY-MM-DD>/<time>-<random>`; a day that holds such a ref, which only
 * an older guard writes, is still read by listing it, as it was then.)
 */
export const dayBaseStore = (now: Date): string =>
  `${REFS.root}write-base/${now.toISOString().slice(0, 10)}/`;

/** The folder of the day's refs for one file of one work tree. */
export const dayBaseFileStore = (now: Date, worktree: string, rel: string): string =>
  `${dayBaseStore(now)}f/${sha1Hex(`${worktree}\0${rel}`).slice(0, 16)}/`;

/**
 * The refs that may hold a file's base today, from the ref files (no
 * process): its own folder's, loose and packed; or 'list' when the day also
 * holds refs under the older names, or the refs are not files (reftable): read
 * with for-each-ref, sessionBase.
 * Loose before packed, as git reads them, so a concurrent `pack-refs
 * --prune` cannot hide a ref from both reads.
 */
export function dayBaseRefs(
  commonDir: string,
  now: Date,
  worktree: string,
  rel: string,
): PackedRef[] | 'list' {
  const day = dayBaseStore(now);
  const store = dayBaseFileStore(now, worktree, rel);
  // the refs guard wrote for this file today, as it wrote them, when its journal has them: a base
  // ref removed (`git update-ref -d`) or moved is still read, and one planted beside them (an
  // earlier-looking record holding the shrunk file) is not, so writes that each take a little
  // still add up (docs/reliability/adv4.md). A journal with no word on the file's folder means guard
  // wrote no base of it today: a ref there was planted (before the day's first write, a record
  // holding an empty file made every later write a growth: adv5), so none is read. Only with no
  // journal at all, the ref files, as below.
  const noted = journaledTipsUnder(commonDir, store);
  if (noted === 'unreadable')
    throw new GuardError(
      'E_UNREADABLE',
      `guard's journal (.git/guard/journal), which holds the record of ${rel} as guard write first saw it today, is not the one guard kept (removed, replaced by a pipe, or rewritten outside guard), so this write cannot be measured against it`,
      "a person: guard doctor shows what changed; guard recover starts guard's journal again from the refs there are",
    );
  if (noted) return noted.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  try {
    // another ref store (reftable: git 2.45 and later) has no ref files: git lists them
    if (existsSync(path.join(commonDir, 'reftable'))) return 'list';
    if (looseNames(commonDir, day).some((n) => n !== 'f')) return 'list';
    const loose: PackedRef[] = [];
    // (a `.lock` is a ref being written: git does not read it either)
    for (const n of looseNames(commonDir, store).filter((n) => !n.endsWith('.lock'))) {
      const oid = readFileSync(path.join(commonDir, store, n), 'latin1').trim();
      if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(oid)) return 'list';
      loose.push({ ref: store + n, oid });
    }
    const packedFile = path.join(commonDir, 'packed-refs');
    // the older names start with the time (a digit), so they sort before f/
    const [first] = packedUnder(packedFile, day, 1);
    if (first && !first.ref.startsWith(`${day}f/`)) return 'list';
    const packed = packedUnder(packedFile, store).filter(
      (p) => !loose.some((l) => l.ref === p.ref),
    );
    return [...loose, ...packed].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  } catch {
    // anything unusual (a ref removed while read, a folder where a file was, no permission): git lists them
    return 'list';
  }
}

function looseNames(commonDir: string, dir: string): string[] {
  try {
    return readdirSync(path.join(commonDir, dir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** What cat-file reads of `refs` for dayBaseOf: each commit, then the file in it. */
export const dayBaseObjects = (refs: readonly PackedRef[], rel: string): string[] =>
  refs.flatMap((r) => [r.oid, `${r.oid}:${rel}`]);

/** The day's base of `rel` from dayBaseObjects' answers (the earliest that holds it in this work tree). */
export async function dayBaseOf(
  root: string,
  rel: string,
  refs: readonly PackedRef[],
  read: readonly CatResult[],
): Promise<SessionBase | null> {
  // bases guard wrote today whose commits are all gone (the refs removed, then `git gc
  // --prune=now`): not a first write of the day, a sum the agent erased (docs/reliability/adv4.md)
  if (refs.length > 0 && refs.every((_, i) => read[2 * i]?.type !== 'commit'))
    throw new GuardError(
      'E_UNREADABLE',
      `guard's record of ${rel} as guard write first saw it today is gone (its commit was removed outside guard), so this write cannot be measured against it`,
      "a person: guard doctor shows what was removed; guard recover starts guard's journal again from the refs there are, and the next write starts today's base anew",
    );
  const best = earliest(
    root,
    rel,
    refs.map((r, i) => {
      const commit = read[2 * i];
      const raw = commit?.type === 'commit' ? (commit.data?.toString('utf8') ?? '') : '';
      const at = raw.indexOf('\n\n');
      return { ref: r.ref, commit: r.oid, message: at < 0 ? '' : raw.slice(at + 2) };
    }),
  );
  if (!best) return null;
  const blob = read[2 * refs.findIndex((r) => r.ref === best.ref) + 1];
  if (!blob) return { checkpoint: best.checkpoint, content: null };
  // (larger than the policy read holds: read alone)
  if (!blob.data) return readBase(root, rel, best);
  return { checkpoint: best.checkpoint, content: blob.data };
}

export interface SessionBase {
  /** The checkpoint that holds the base. */
  checkpoint: string;
  /** The file's content then; null when it did not exist. */
  content: Buffer | null;
}

/**
 * The earliest checkpoint of this session, in this work tree, that holds `rel`; null when the
 * session has not touched it. A named session's records are read as guard's journal says it wrote
 * them (`commonDir` given), as the day's base is (dayBaseRefs): a record planted under the
 * session's folder before its first write (an empty file as "the session's first sight", adv5) is
 * not guard's word, and one removed by hand is still read. With no journal at all, the refs.
 */
export async function sessionBase(
  root: string,
  session: string,
  rel: string,
  { store, commonDir }: { store?: string; commonDir?: string } = {},
): Promise<SessionBase | null> {
  const folder = store ?? prefix(session);
  const noted = commonDir ? journaledTipsUnder(commonDir, folder) : null;
  if (noted === 'unreadable')
    throw new GuardError(
      'E_UNREADABLE',
      `guard's journal (.git/guard/journal), which holds the record of ${rel} as session ${session} first saw it, is not the one guard kept (removed, replaced by a pipe, or rewritten outside guard), so this write cannot be measured against it`,
      "a person: guard doctor shows what changed; guard recover starts guard's journal again from the refs there are",
    );
  const records = noted ? await notedRecords(root, noted) : await listedRecords(root, folder);
  const best = earliest(root, rel, records);
  return best ? readBase(root, rel, best) : null;
}

/** The session's records under `folder` as the ref store has them (one for-each-ref). */
async function listedRecords(root: string, folder: string): Promise<Candidate[]> {
  const fmt = '%(refname)%00%(objectname)%00%(contents)%00%01';
  const r = await git(['for-each-ref', `--format=${fmt}`, folder], { cwd: root });
  return r.stdout
    .toString('utf8')
    .split('\0\x01\n')
    .map((rec) => {
      const [ref, commit, ...rest] = rec.split('\0');
      return { ref: ref ?? '', commit: commit ?? '', message: rest.join('\0') };
    });
}

/** The records guard's journal names, read from the commits it noted (one cat-file; none: no process). */
async function notedRecords(root: string, tips: readonly PackedRef[]): Promise<Candidate[]> {
  if (tips.length === 0) return [];
  const read = await catFileBatch(
    root,
    tips.map((t) => t.oid),
    Number.MAX_SAFE_INTEGER,
  );
  return tips.map((t, i) => {
    const c = read[i];
    const raw = c?.type === 'commit' ? (c.data?.toString('utf8') ?? '') : '';
    const at = raw.indexOf('\n\n');
    return { ref: t.ref, commit: t.oid, message: at < 0 ? '' : raw.slice(at + 2) };
  });
}

interface Candidate {
  ref: string;
  commit: string;
  message: string;
}

/** The earliest record (by its time, then its ref) of a checkpoint in this work tree that holds `rel`. */
function earliest(
  root: string,
  rel: string,
  records: readonly Candidate[],
): { commit: string; time: string; ref: string; checkpoint: string } | null {
  let best: { commit: string; time: string; ref: string; checkpoint: string } | null = null;
  for (const { ref, commit, message } of records) {
    if (!ref || !commit) continue;
    const b = parseRecordMessage(message.replace(/\n$/, '')) as {
      worktree?: unknown;
      paths?: unknown;
      time?: unknown;
      checkpoint?: unknown;
    } | null;
    if (!b || b.worktree !== root || typeof b.time !== 'string' || typeof b.checkpoint !== 'string')
      continue;
    if (b.paths !== null && !(Array.isArray(b.paths) && b.paths.includes(rel))) continue;
    if (!best || b.time < best.time || (b.time === best.time && ref < best.ref))
      best = { commit, time: b.time, ref, checkpoint: b.checkpoint };
  }
  return best;
}

async function readBase(
  root: string,
  rel: string,
  best: { commit: string; checkpoint: string },
): Promise<SessionBase> {
  // "<commit>:<path>" is missing when the file did not exist at the session's first touch
  const [blob] = await catFileBatch(root, [`${best.commit}:${rel}`], Number.MAX_SAFE_INTEGER);
  if (!blob?.data) return { checkpoint: best.checkpoint, content: null };
  return { checkpoint: best.checkpoint, content: blob.data };
}

/** The record of a write's checkpoint in its session (for writeRecords). */
export function sessionEvent(
  checkpointCommit: string,
  e: {
    session: string;
    checkpoint: string;
    path: string;
    worktree: string;
    outcome: string;
    store?: string;
  },
  now: Date,
): RecordCommit {
  const body = {
    v: RECORD_VERSION,
    harness: WRITE_HARNESS,
    session: e.session,
    toolCall: null,
    tool: 'guard write',
    phase: 'pre',
    kind: 'write',
    checkpoint: e.checkpoint,
    paths: [e.path],
    worktree: e.worktree,
    time: now.toISOString(),
    outcome: e.outcome,
  };
  const message = `guard session ${WRITE_HARNESS} ${e.session}: write ${e.path}\n\n${JSON.stringify(body)}\n`;
  return {
    ref: newRef(e.store ?? prefix(e.session), now),
    parent: checkpointCommit,
    message,
    changes: [],
  };
}
