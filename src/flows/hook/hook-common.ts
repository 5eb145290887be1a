import { makePolicy, type Classification, type Policy } from '../../core/classify.js';
import { type Config } from '../../core/config.js';
import { type Judged, type Planned } from '../../harness/decide.js';
import type { Outcome } from '../../harness/types.js';
import type { CatResult } from '../../git/catfile.js';
import type { RecordCommit } from '../../git/records.js';
import type { Repo } from '../../git/repo.js';
import { readSessionEvents, sessionPrefix, type SessionEvent } from '../../git/session.js';
import { notePolicy, readPolicyNote } from '../../git/session-index.js';
import { anchorCommit, policyPrefix, readAnchors } from '../../git/session-policy.js';
import { configAt, configObject, readConfig, type ConfigRead } from '../../git/policy.js';

/**
 * What the hook's write and shell calls share (flows/hook/hook.ts runs them):
 * the answer's shape, the session's steps read once per call, the files
 * that make up the gate itself, and the policy a call is judged by.
 */

export interface HookResult {
  outcome: Outcome;
  /** For the log and tests: what was checkpointed and kept. */
  checkpoint?: string;
  rejected?: string;
  files?: Planned[];
  /** Said on stderr only (e.g. why there was no opinion). */
  notes: string[];
}

export const NONE: Outcome = { kind: 'none' };

/**
 * A session's events, read once per hook call (one for-each-ref): the
 * background check and the call's own flow both need them, and what the
 * check records (reports of a background call) changes nothing the flow
 * reads.
 */
export const eventsRead = new Map<string, Promise<SessionEvent[]>>();
export function sessionEventsOnce(root: string, prefix: string): Promise<SessionEvent[]> {
  const key = `${root}\0${prefix}`;
  let p = eventsRead.get(key);
  if (!p) eventsRead.set(key, (p = readSessionEvents(root, prefix)));
  return p;
}

/** Files that hold the harnesses' hook configuration (flows/setup/agents.ts CONFIG_FILES, plus Claude's local settings). */
export const GATE_FILES = new Set([
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.gemini/settings.json',
  '.codex/hooks.json',
  '.codex/config.toml',
  '.cursor/hooks.json',
  '.clinerules/hooks/PreToolUse',
  '.clinerules/hooks/PostToolUse',
  '.cline/plugins/guard.js',
  '.opencode/plugins/guard.js',
  '.kilo/plugins/guard.js',
  '.github/hooks/guard.json',
  // the Claude-style rows (harness/table.ts) and the other files they read hooks from
  '.continue/settings.json',
  '.continue/settings.local.json',
  '.qwen/settings.json',
  '.augment/settings.json',
  '.augment/settings.local.json',
  '.factory/settings.json',
  '.factory/settings.local.json',
  '.factory/hooks.json',
  'crush.json',
  '.crush.json',
]);

/**
 * The folders the plugin harnesses load code from, and their project
 * configs (which can name plugins too): a plugin there runs in the
 * harness with guard's and can rewrite a call's input after guard judged
 * it (Cline's beforeTool `input`, opencode's output.args), so an agent may
 * not add or change one. opencode's custom tools (`tools/`, `tool/`) too: one
 * named as a built-in read-only tool (`read`) takes its place, and guard lets
 * those pass unseen (adv3).
 */
export const PLUGIN_DIRS =
  /^(?:\.cline\/plugins\/|\.(?:opencode|kilo|kilocode)\/(?:plugins?|tools?)\/|(?:\.(?:opencode|kilo|kilocode)\/)?(?:opencode|kilo)\.jsonc?$)/;

/**
 * The policy a hook call is judged by, and HEAD. HEAD is the agent's to
 * move (a `git commit --no-verify` of a looser guard.config.json before
 * the write), so every config the session's calls found at HEAD counts as
 * well, and the strictest applies. They are read from the session's policy
 * anchors (git/session-policy.ts: one ref per config, one for-each-ref of
 * a few refs, whatever the length of the session), and from its steps
 * (HEAD as each call found it: a step's parent is its checkpoint, whose
 * parent is HEAD then) only when the session index's note of the anchors
 * is missing or does not match them (an anchor removed, an index deleted
 * or edited: the index is the agent's to write, so it only ever decides
 * whether the steps are read too, never what counts). A forged anchor or
 * step adds a config: it cannot loosen what the real ones hold. The configs
 * that no anchor holds yet come back as `anchors`, for the call to write
 * with its own records. One cat-file; each distinct config parsed once.
 */
export interface PolicyQuery {
  harness: string;
  session: string;
  now: Date;
  /** Further revisions whose committed config counts (a shell call's post event: HEAD as its pre step found it). */
  also?: readonly string[];
  /** The session's events, when the call read them already (background commands): the steps count as well. */
  events?: SessionEvent[];
}

export interface SessionPolicyRead {
  head: string | null;
  policy: Policy;
  config: Config;
  /** Anchors of the configs this call saw that none held: written with the call's records. */
  anchors: RecordCommit[];
}

export async function readSessionPolicy(repo: Repo, q: PolicyQuery): Promise<SessionPolicyRead> {
  const root = repo.root;
  const who = { harness: q.harness, session: q.session, worktree: root };
  const [held, note] = await Promise.all([
    readAnchors(repo, policyPrefix(q.harness, q.session, root)),
    readPolicyNote(repo, who),
  ]);
  const noted =
    note !== null && note.every((n) => held.some((a) => a.ref === n.ref && a.oid === n.oid));
  const events =
    q.events ??
    (noted ? undefined : await sessionEventsOnce(root, sessionPrefix(q.harness, q.session)));
  const steps = (events ?? []).filter((x) => x.worktree === root);
  const also = q.also ?? [];
  const read = await readConfig(root, 'HEAD', {
    also: [
      'HEAD',
      ...[...also, ...held.map((a) => a.oid), ...steps.map((x) => `${x.commit}^^`)].map(
        configObject,
      ),
    ],
  });
  const [head, ...then] = read.also;
  const revs = [...also, ...held.map((a) => a.ref), ...steps.map((x) => `${x.checkpoint}^`)];
  const seen = strictest(read, then, revs);
  const anchored = new Set(then.slice(also.length, also.length + held.length).map(blobKey));
  const missing = [...seen.blobs].filter((b) => !anchored.has(b));
  // noted only when the anchors hold every config seen: else the steps are read again until a call has written them
  if (missing.length === 0 && (!noted || note.length !== held.length))
    await notePolicy(repo, { ...who, events }, held);
  return {
    head: head && head.type === 'commit' ? head.oid : null,
    policy: makePolicy(seen.config, { bootstrap: seen.bootstrap }),
    config: seen.config,
    anchors: missing.map((blob) => anchorCommit(who, { blob }, q.now)),
  };
}

const blobKey = (b: CatResult | null | undefined) => (b && b.type === 'blob' ? b.oid : '');

/** HEAD's config and every other one read (`revs` name them in errors): the strictest, the distinct blobs ("" none), and whether none is committed anywhere. */
function strictest(
  read: ConfigRead,
  then: ReadonlyArray<CatResult | null | undefined>,
  revs: readonly string[],
): { config: Config; blobs: Set<string>; bootstrap: boolean } {
  let config = read.config;
  let bootstrap = read.oid === null;
  // (no config at all counts once, as the defaults)
  const blobs = new Set<string>([read.oid ?? '']);
  for (const [i, blob] of then.entries()) {
    const key = blobKey(blob);
    if (blobs.has(key)) continue;
    blobs.add(key);
    config = stricter(config, configAt(revs[i]!, key ? blob!.data : undefined));
    bootstrap &&= key === '';
  }
  return { config, blobs, bootstrap };
}

/** Of two policies, what each would ask a person about. */
function stricter(a: Config, b: Config): Config {
  return {
    lineThreshold: Math.min(a.lineThreshold, b.lineThreshold),
    byteThreshold: Math.min(a.byteThreshold, b.byteThreshold),
    changeRatio: Math.min(a.changeRatio, b.changeRatio),
    protect: [...new Set([...a.protect, ...b.protect])],
    ignore: a.ignore.filter((g) => b.ignore.includes(g)),
    maxFileBytes: Math.min(a.maxFileBytes, b.maxFileBytes),
    preview: a.preview,
    judge: a.judge === 'all' || b.judge === 'all' ? 'all' : 'agents',
  };
}

export function judgedOf(c: Classification): Judged {
  return {
    path: c.path,
    status: c.status,
    existingLines: c.existingLines,
    linesDeleted: c.linesDeleted,
    changeRatio: c.changeRatio,
    needsApproval: c.needsApproval,
    reasons: c.reasons,
    rules: c.rules,
  };
}

export function oneLine(s: string): string {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > 200 ? l.slice(0, 197) + '...' : l;
}

/** A shell-safe word for a path in a command the person copies. */
export function shellWord(p: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}
