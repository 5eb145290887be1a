import { RECORD_VERSION, parseRecordMessage } from '../core/record.js';
import type { SessionMeta } from './checkpoint.js';
import { REFS, newRef, type RecordCommit } from './records.js';
import { git } from './run.js';
import { sha256Hex } from '../core/digest.js';

/**
 * An agent session's trail: one ref per hook event that took a checkpoint,
 *
 *   refs/guard/sessions/<harness>/<session key>/<time>-<random>
 *
 * pointing at a small commit whose parent is the checkpoint and whose tree
 * is the checkpoint's tree, with the event in its message. Refs are only
 * ever added (unique names, no compare-and-swap races between parallel
 * hook calls), and a session is read back with ONE for-each-ref. A file's
 * session base is its content at the session's earliest event that holds
 * it (a write's checkpoint of that path, or a shell call's whole tree).
 */
export const SESSION_REFS = `${REFS.root}sessions/`;

/** A session step's ref (<harness>/<session key>/<name>), not a policy anchor beside the steps (git/session-policy.ts), nor a session's chain (git/session-chain.ts). */
export function isStepRef(ref: string): boolean {
  if (!ref.startsWith(SESSION_REFS)) return false;
  const parts = ref.slice(SESSION_REFS.length).split('/');
  return parts.length === 3 && parts[2] !== 'chain';
}

/** A session's chain: `<harness>/<session key>/chain` (git/session-chain.ts). */
export function isChainTip(ref: string): boolean {
  if (!ref.startsWith(SESSION_REFS)) return false;
  const parts = ref.slice(SESSION_REFS.length).split('/');
  return parts.length === 3 && parts[2] === 'chain';
}

/**
 * A ref-safe name for a session id: itself when it is plain, else a hash. An id spelled as a
 * hash is hashed too: a plain `h<32 hex>` would be another session's key (adv9: `guard log
 * --session` and `guard rewind` of one read the other's links), in any case of its letters
 * (adv11: `H<32 HEX>` names the same ref files on a case-insensitive file system, macOS's and
 * Windows' default).
 */
export function sessionKey(id: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/.test(id) && !/^h[0-9a-f]{32}$/i.test(id)) return id;
  return 'h' + sha256Hex(id).slice(0, 32);
}

export function sessionPrefix(harness: string, id: string): string {
  return `${SESSION_REFS}${harness}/${sessionKey(id)}/`;
}

export interface SessionEvent {
  ref: string;
  /** The event commit: its tree is the checkpoint's. */
  commit: string;
  harness: string;
  session: string;
  toolCall: string | null;
  tool: string;
  phase: 'pre' | 'post';
  kind: 'write' | 'shell';
  /** The checkpoint's id (what guard restore takes). */
  checkpoint: string;
  /** A write's checkpoint holds only these paths; null: the whole work tree. */
  paths: string[] | null;
  worktree: string;
  time: string;
  /** What guard answered (write: allow / ask); lost paths after a shell call. */
  outcome?: string;
  lost?: string[];
  /** Gone after a shell call and in no checkpoint (over the cap or the budget): named, never kept. */
  notKept?: string[];
  command?: string;
  /** A write put to a person: the decisions to record as approved when it ran. */
  asked?: unknown[];
  /** A shell call run in the background: its post event comes while it runs, so it stays open (flows/hook/hook.ts). */
  background?: boolean;
  /** A background check's step: the writes' results it found as they left the files (holes7). */
  seen?: string[];
  /** A write's step whose second parent holds what the write leaves (kept while a background command of the session is open: holes7). */
  result?: boolean;
  /** A step read from a session chain (git/session-chain.ts): the chain's ref, and the link that holds the step. */
  chain?: string;
  link?: string;
  /** The call's decision records the link names (their names under refs/guard/decisions/, and commits). */
  records?: Array<{ name: string; commit: string }>;
}

export function sessionMessage(e: Omit<SessionEvent, 'ref' | 'commit'>): string {
  const body = { v: RECORD_VERSION, ...e };
  const what = e.kind === 'shell' ? `${e.phase} shell` : `write ${e.paths?.join(', ') ?? ''}`;
  return `guard session ${e.harness} ${e.session}: ${what}\n\n${JSON.stringify(body)}\n`;
}

/**
 * Every event of the sessions matching `pattern` (a ref prefix, or a glob, or several
 * such as refs/guard/sessions/x/KEY/x), oldest first, with one for-each-ref: the steps
 * with a ref each, and the steps of each session chain the pattern matches, with one
 * `git log` of their tips (git/session-chain.ts).
 */
export async function readSessionEvents(
  cwd: string,
  pattern: string | readonly string[],
): Promise<SessionEvent[]> {
  const fmt = '%(refname)%00%(objectname)%00%(contents)%00%01';
  const r = await git(
    ['for-each-ref', `--format=${fmt}`, ...(typeof pattern === 'string' ? [pattern] : pattern)],
    { cwd },
  );
  const out: SessionEvent[] = [];
  const chains: Array<{ chain: string; tip: string }> = [];
  for (const rec of r.stdout.toString('utf8').split('\0\x01\n')) {
    const [ref, commit, ...rest] = rec.split('\0');
    if (!ref || !commit) continue;
    if (isChainTip(ref)) {
      chains.push({ chain: ref, tip: commit });
      continue;
    }
    const e = parseSessionEvent(ref, commit, rest.join('\0').replace(/\n$/, ''));
    if (e) out.push(e);
  }
  if (chains.length > 0) {
    const { readLinks } = await import('./session-chain.js');
    for (const l of await readLinks(cwd, chains)) out.push(l.event);
  }
  return sortEvents(out);
}

/** Oldest first; time has milliseconds, the ref name (time + random) breaks ties. */
export function sortEvents(events: SessionEvent[]): SessionEvent[] {
  return events.sort((a, b) =>
    a.time !== b.time ? (a.time < b.time ? -1 : 1) : a.ref < b.ref ? -1 : 1,
  );
}

/** One event from its step commit's message; null when the message is not one. */
export function parseSessionEvent(
  ref: string,
  commit: string,
  message: string,
): SessionEvent | null {
  const b = parseRecordMessage(message) as unknown as Partial<SessionEvent> | null;
  if (
    !b ||
    typeof b.checkpoint !== 'string' ||
    typeof b.time !== 'string' ||
    typeof b.session !== 'string'
  )
    return null;
  return {
    ref,
    commit,
    harness: String(b.harness ?? ''),
    session: b.session,
    toolCall: typeof b.toolCall === 'string' ? b.toolCall : null,
    tool: String(b.tool ?? ''),
    phase: b.phase === 'post' ? 'post' : 'pre',
    kind: b.kind === 'shell' ? 'shell' : 'write',
    checkpoint: b.checkpoint,
    paths: Array.isArray(b.paths)
      ? b.paths.filter((p): p is string => typeof p === 'string')
      : null,
    worktree: String(b.worktree ?? ''),
    time: b.time,
    ...(typeof b.outcome === 'string' ? { outcome: b.outcome } : {}),
    ...(Array.isArray(b.lost)
      ? { lost: b.lost.filter((p): p is string => typeof p === 'string') }
      : {}),
    ...(Array.isArray(b.notKept)
      ? { notKept: b.notKept.filter((p): p is string => typeof p === 'string') }
      : {}),
    ...(typeof b.command === 'string' ? { command: b.command } : {}),
    ...(Array.isArray(b.asked) ? { asked: b.asked } : {}),
    ...(b.background === true ? { background: true } : {}),
    ...(b.result === true ? { result: true } : {}),
    ...(Array.isArray(b.seen)
      ? { seen: b.seen.filter((p): p is string => typeof p === 'string') }
      : {}),
  };
}

/** The earliest event of a session that holds `path` (a write of it, or a whole-tree checkpoint). */
export function baseEventFor(
  events: readonly SessionEvent[],
  worktree: string,
  path: string,
): SessionEvent | null {
  for (const e of events) {
    if (e.worktree !== worktree) continue;
    if (e.paths === null || e.paths.includes(path)) return e;
  }
  return null;
}

export type { SessionMeta };

/** The commit (and ref) of one session event, for writeRecords: parent = the checkpoint, same tree. */
export function sessionEventCommit(
  checkpointCommit: string,
  e: Omit<SessionEvent, 'ref' | 'commit'>,
  now: Date,
): RecordCommit {
  return {
    ref: newRef(sessionPrefix(e.harness, e.session), now),
    parent: checkpointCommit,
    message: sessionMessage(e),
    changes: [],
  };
}
