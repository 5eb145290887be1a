import { makePolicy, type Classification, type Policy } from '../../core/classify.js';
import { type Config } from '../../core/config.js';
import { type Judged, type Planned } from '../../harness/decide.js';
import type { Outcome } from '../../harness/types.js';
import { readSessionEvents, type SessionEvent } from '../../git/session.js';
import { configAt, configObject, readConfig } from '../../git/policy.js';

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
 * not add or change one.
 */
export const PLUGIN_DIRS =
  /^(?:\.cline\/plugins\/|\.(?:opencode|kilo|kilocode)\/plugins?\/|(?:\.(?:opencode|kilo|kilocode)\/)?(?:opencode|kilo)\.jsonc?$)/;

/**
 * The policy a hook call is judged by, and HEAD. HEAD is the agent's to
 * move (a `git commit --no-verify` of a looser guard.config.json before
 * the write), so the committed config of HEAD as each of the session's
 * calls found it counts as well, and the strictest applies: a step forged
 * with an older, looser HEAD cannot loosen what the real steps hold. One
 * cat-file; each distinct config parsed once.
 */
export async function readSessionPolicy(
  root: string,
  events: readonly SessionEvent[],
): Promise<{ head: string | null; policy: Policy; config: Config }> {
  const anchors = events.filter((x) => x.worktree === root);
  // a session event's parent is its checkpoint, whose parent is HEAD as it was then
  const read = await readConfig(root, 'HEAD', {
    also: ['HEAD', ...anchors.map((x) => configObject(`${x.commit}^^`))],
  });
  const [head, ...then] = read.also;
  const headOid = head && head.type === 'commit' ? head.oid : null;
  let config = read.config;
  let bootstrap = read.oid === null;
  // (no config at all counts once, as the defaults)
  const seen = new Set<string>([read.oid ?? '']);
  for (const [i, blob] of then.entries()) {
    const key = blob ? blob.oid : '';
    if (seen.has(key)) continue;
    seen.add(key);
    config = stricter(config, configAt(`${anchors[i]!.checkpoint}^`, blob?.data));
    bootstrap &&= blob === null;
  }
  return { head: headOid, policy: makePolicy(config, { bootstrap }), config };
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
