import { RECORD_VERSION, parseRecordMessage } from '../core/record.js';
import { catFileBatch } from './catfile.js';
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
 *   refs/guard/write-base/<YYYY-MM-DD>/<time>-<random>
 */
export const dayBaseStore = (now: Date): string =>
  `${REFS.root}write-base/${now.toISOString().slice(0, 10)}/`;

export interface SessionBase {
  /** The checkpoint that holds the base. */
  checkpoint: string;
  /** The file's content then; null when it did not exist. */
  content: Buffer | null;
}

/** The earliest checkpoint of this session, in this work tree, that holds `rel`; null when the session has not touched it. */
export async function sessionBase(
  root: string,
  session: string,
  rel: string,
  store?: string,
): Promise<SessionBase | null> {
  const fmt = '%(refname)%00%(objectname)%00%(contents)%00%01';
  const r = await git(['for-each-ref', `--format=${fmt}`, store ?? prefix(session)], { cwd: root });
  let best: { commit: string; time: string; ref: string; checkpoint: string } | null = null;
  for (const rec of r.stdout.toString('utf8').split('\0\x01\n')) {
    const [ref, commit, ...rest] = rec.split('\0');
    if (!ref || !commit) continue;
    const b = parseRecordMessage(rest.join('\0').replace(/\n$/, '')) as {
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
  if (!best) return null;
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
