import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../../core/errors.js';
import type { FileChange, HookEvent, Outcome } from '../../harness/types.js';
import type { SessionMeta } from '../../git/checkpoint.js';
import {
  lostRepository,
  noteWorkTreeSeen,
  repositoryFolder,
  storeElsewhere,
} from '../../git/discover.js';
import { openRepo, type Repo } from '../../git/repo.js';
import { markAsked, settleAsked } from '../../git/asked-marks.js';
import { askGate } from '../setup/hook-command.js';
import {
  integrityDenial,
  integrityProblems,
  integritySentence,
  type IntegrityProblem,
} from '../doctor/integrity.js';
import { NONE, eventsRead, shellWord, type HookResult } from './hook-common.js';
import { nearestFolder, realAbs, within } from './hook-place.js';
import { detaches } from './detached.js';
import { netCommand } from './net-commands.js';
import { reportBackground, shellAfter, shellBefore, withLate } from './hook-shell.js';
import { writeAfter, writeBefore } from './hook-write.js';

/**
 * `guard hook`: one tool call of an agent harness, already translated
 * (src/harness). A write is one more front end to the gate's plan: read
 * (where each file lands, its session base, the file after the call,
 * measured), then plan (core/plan, with no answers: what needs a person is
 * blocked), then apply (checkpoint or rejected ref, and the records), and
 * the plan mapped onto the harness's allow (no opinion) / ask / deny by
 * harness/decide.ts (flows/hook/hook-write.ts). Shell calls get a whole-tree
 * checkpoint before, and a report of what they destroyed after
 * (flows/hook/hook-shell.ts). The flow never writes the work tree: the harness
 * does, or does not.
 *
 * Git processes for a write (the repository found from the file system,
 * git/discover.ts; rev-parse when anything about it is unusual): for-each-ref (the session's
 * policy anchors: a few refs, git/session-policy.ts), cat-file of HEAD and
 * the configs and of the session bases (named by the session index,
 * git/session-index.ts; both reads through one cat-file process, git/resident.ts
 * withCallCatFile), one diff --no-index (when a base differs: against it and the disk), one
 * fast-import: the same at the 10,000th call as at the 10th. Nothing scans
 * the work tree, and no call lists the session's steps unless the index is
 * missing or does not match the anchors, or a background command of the
 * session is open. The index answers the post event of a write alone.
 */
export interface HookOptions {
  event: HookEvent;
  /** guard's own auto mode (GUARD_AUTO, CI): nobody to ask. */
  auto: boolean;
  /**
   * The project the harness runs the hook for ($CLAUDE_PROJECT_DIR and
   * alike, else the hook's own working folder): set by the harness, not
   * by the agent, unlike the payload's cwd (which follows the shell's cd).
   */
  projectDir?: string;
  now?: Date;
}

export type { HookResult } from './hook-common.js';

export async function runHook(opts: HookOptions): Promise<HookResult> {
  const e = opts.event;
  if (e.action.kind === 'other') return { outcome: NONE, notes: [] };
  eventsRead.clear();
  const now = opts.now ?? new Date();
  // The payload's cwd is the agent's to move (a `cd /tmp` first): the project the harness named is
  // judged as well, so a command or a write aimed at it from outside is still seen.
  const here = await repoAt(e.cwd);
  // (usually the same tree: not looked up twice then)
  const project =
    opts.projectDir && !(here && within(here.root, opts.projectDir))
      ? await repoAt(opts.projectDir)
      : null;
  const repos = [here, project].filter(
    (r, i, all): r is Repo => r !== null && all.findIndex((x) => x?.root === r.root) === i,
  );
  const lost = repos.length === 0 ? lostWorkTree(e, opts.projectDir) : null;
  if (lost) return lost;
  for (const r of repos) noteWorkTreeSeen(who(e), r.root, r.gitDir);
  // the net itself first (file reads only): removed outside guard, it is said before anything runs
  // (hooks that git clean -X took are put back from guard's copy here, and said once)
  const net = repos.length > 0 ? await integrityProblems(repos[0]!.commonDir, { heal: true }) : [];
  if (net.length > 0 && e.phase === 'pre')
    return { outcome: { kind: 'deny', reason: integrityDenial(net) }, notes: [] };
  const r = await judgeCall(opts, repos, now);
  askedMarks(opts, r, now);
  if (net.length === 0) return r;
  const said =
    integritySentence(net) + (e.phase === 'post' ? await movedWhileGone(repos[0]!, net) : '');
  const outcome: Outcome =
    r.outcome.kind === 'inform'
      ? { kind: 'inform', message: `${r.outcome.message} ${said}` }
      : {
          kind: 'inform',
          message: `guard: ${said} ${net.every((p) => p.healed) ? 'Tell the user.' : 'Tell the user: the safety net is down until guard recover (or guard init) is run.'}`,
        };
  return { ...r, outcome };
}

const who = (e: HookEvent) => `${e.harness}\0${e.sessionId}`;

/**
 * Claude Code's after event of a write starts guard only while the project holds a mark
 * (git/asked-marks.ts; the test init installs: setup/hook-command.ts askGate): made here before
 * an `ask` goes out, taken away by that write's after event.
 */
function askedMarks(opts: HookOptions, r: HookResult, now: Date): void {
  const e = opts.event;
  if (!opts.projectDir || e.action.kind !== 'write' || !e.toolCallId) return;
  if (e.phase === 'pre' && r.outcome.kind === 'ask')
    markAsked(opts.projectDir, e.sessionId, e.toolCallId, now);
  else if (e.phase === 'post' && askGate(e.harness) !== null)
    settleAsked(opts.projectDir, e.sessionId, e.toolCallId, now);
}

/**
 * A call in a folder that is no repository, though guard checkpointed it earlier in this session
 * (`mv .git .git.bak`, the repository moved away: git/discover.ts lostRepository): guard would
 * keep nothing of what the call does, so a tool call is refused before it runs (and a finished
 * one reported), naming what happened. A folder that never was a repository in this session has
 * no opinion, as before: a person who removed git on purpose starts a new session.
 */
function lostWorkTree(e: HookEvent, projectDir: string | undefined): HookResult | null {
  if (e.action.kind === 'other') return null;
  const lost = lostRepository(who(e), projectDir ? [e.cwd, projectDir] : [e.cwd]);
  if (!lost) return null;
  const where = lost.movedTo
    ? `; ${lost.movedTo} holds a repository now (moved there?)`
    : ' (moved away or removed)';
  const said = `guard checkpointed ${lost.root} earlier in this session, and it is no longer a git work tree: its repository ${lost.gitDir} is gone${where}. guard keeps nothing of this folder now, and its checkpoints and records are with the repository.`;
  const fix = lost.movedTo
    ? `Put it back (mv ${shellWord(lost.movedTo)} ${shellWord(path.join(lost.root, '.git'))})`
    : 'Put the repository back';
  if (e.phase === 'pre')
    return {
      outcome: {
        kind: 'deny',
        reason: `${said} guard refuses tool calls here until then: ${fix}, or tell the user (a person who removed git from this folder on purpose starts a new session).`,
      },
      notes: [],
    };
  return { outcome: { kind: 'inform', message: `guard: ${said} Tell the user.` }, notes: [] };
}

/**
 * The hooks were gone while the command ran (`git clean -fdX && git commit`
 * in one command): what its commits brought into the branch is measured now,
 * as the branch gate will at the branch's next move, and said with the
 * report. Kept as it is: the branch's verified tip still holds what was
 * there, and that next move is refused until a person approves. Only when
 * guard had to put its hooks back: otherwise the gate ran.
 */
async function movedWhileGone(repo: Repo, net: readonly IntegrityProblem[]): Promise<string> {
  if (!net.some((p) => p.id === 'hooks' && p.healed)) return '';
  const [{ resolveRev }, { bypassChecks }] = await Promise.all([
    import('../../git/moves.js'),
    import('../doctor/doctor-hooks.js'),
  ]);
  const moved = await bypassChecks(repo, await resolveRev(repo.root, 'HEAD')).catch(() => []);
  return moved.map((m) => ` While they were gone, ${m.message} (${m.hint}).`).join('');
}

/** One call in the work trees it touches: background reports first, then the shell or write flow. */
async function judgeCall(opts: HookOptions, repos: Repo[], now: Date): Promise<HookResult> {
  const e = opts.event;
  if (e.action.kind === 'other') return { outcome: NONE, notes: [] };
  const meta: SessionMeta = { harness: e.harness, session: e.sessionId, toolCall: e.toolCallId };
  // what a command still running in the background destroyed since the last call (reportBackground)
  const { late, open } = await reportBackground(repos, e, now);
  // before a tool: refused once, untouched, so the model reads the report first (no checkpoint, no step)
  if (late.length > 0 && e.phase === 'pre')
    return withLate({ outcome: NONE, notes: [] }, late, 'pre');
  let r: HookResult;
  if (e.action.kind === 'shell') {
    if (repos.length === 0)
      return withLate(
        { outcome: NONE, notes: [`${e.cwd} is not in a git work tree: no opinion`] },
        late,
        e.phase,
      );
    const action = e.action;
    // guard's own evidence reset from the agent's shell (net-commands.ts): a person's to run
    const resets = e.phase === 'pre' ? netCommand(action.command) : null;
    if (resets)
      return withLate(
        {
          outcome: {
            kind: 'deny',
            reason: `guard refuses this command: ${resets}, which would leave guard nothing to tell the user what happened in this session. A person runs it in a terminal after looking at guard doctor and guard log; tell the user why you wanted it.`,
          },
          notes: [],
        },
        late,
        e.phase,
      );
    const each = await Promise.all(
      repos.map((repo) =>
        e.phase === 'pre'
          ? shellBefore(repo, e, {
              command: action.command,
              // a command detached with `&` (or nohup, setsid): as the harness's own background flag
              background: action.background === true || detaches(action.command),
              meta,
              now,
            })
          : shellAfter(repo, e, { command: action.command, meta, now }),
      ),
    );
    r = mergeResults(each);
  } else {
    const files = e.action.files;
    const repo = await repoOfWrite(repos, e.cwd, files);
    if (!repo)
      return withLate(
        {
          outcome: NONE,
          notes: [
            `${files.map((f) => f.path).join(', ')}: outside every git work tree: no opinion`,
          ],
        },
        late,
        e.phase,
      );
    r =
      e.phase === 'pre'
        ? await writeBefore(repo, e, {
            ...{ files, auto: opts.auto, now },
            // what the write leaves is kept with its step while a background command is open (holes7)
            keepResult: open.has(repo.root),
          })
        : await writeAfter(repo, e, meta, now);
  }
  return withLate(r, late, e.phase);
}

async function repoAt(dir: string): Promise<Repo | null> {
  const repo = await openRepo(dir).catch((err) => {
    // a harness working outside any repository: not guard's business
    if (err instanceof GuardError && err.code === 'E_NOT_A_REPO') return null;
    throw err;
  });
  // ... unless a repository is there and git no longer takes the folder as its work tree (adv3)
  const held = repositoryFolder(dir);
  if (held !== null && (!repo || (await realpath(repo.root).catch(() => repo.root)) !== held))
    throw new GuardError(
      'E_UNREADABLE',
      `${path.join(held, '.git')} holds a repository, but git ${repo ? `takes ${repo.root} as its work tree` : 'does not take this folder as a work tree'} (core.worktree, core.bare, a broken HEAD, or GIT_DIR and GIT_WORK_TREE in the environment)`,
      "put the repository back as it was (git config --unset core.worktree, core.bare false, HEAD; no GIT_DIR in a harness setting's env); guard keeps nothing of this folder until then",
    );
  // ... or git's objects or refs are sent elsewhere by the environment (adv5)
  const moved = held !== null && repo ? storeElsewhere(held, repo) : null;
  if (moved)
    throw new GuardError(
      'E_UNREADABLE',
      `${moved} in the environment sends git's ${moved === 'GIT_OBJECT_DIRECTORY' ? 'objects' : 'refs and objects'} out of ${path.join(held!, '.git')}: what guard keeps of this call would be written there, not in the repository`,
      `remove ${moved} from the harness's environment (a settings file's env); guard keeps nothing of this folder until then`,
    );
  return repo;
}

/**
 * The work tree a write call lands in: the one around the payload's cwd or
 * the project's, whichever holds its files; for a file in neither (an
 * absolute path into another checkout), the checkout around that file. A
 * call whose files land in two work trees is refused: harnesses apply it
 * whole, and guard judges one tree at a time.
 */
async function repoOfWrite(known: Repo[], cwd: string, files: FileChange[]): Promise<Repo | null> {
  const found = new Map<string, Repo>();
  for (const f of files) {
    // named inside a known tree (even through a link that leads out: place() refuses that), or really inside it
    const lexical = path.resolve(cwd, f.path);
    const abs = await realAbs(lexical);
    let repo: Repo | null = null;
    // the innermost tree that holds it (a nested checkout inside the project is its own)
    for (const k of known)
      if (
        (within(k.root, lexical) || within(await realpath(k.root), abs)) &&
        (!repo || k.root.length > repo.root.length)
      )
        repo = k;
    // leaving the cwd's tree through "..": judged there, where place() refuses it
    if (!repo && f.path.split(/[\\/]/).includes('..'))
      repo = known.find((k) => within(k.root, cwd)) ?? null;
    if (!repo) repo = await repoAt(await nearestFolder(abs));
    if (repo) found.set(repo.root, repo);
  }
  if (found.size > 1)
    throw new GuardError(
      'E_PATH_ESCAPE',
      `this call writes into ${found.size} work trees (${[...found.keys()].join(', ')})`,
      'write the files of one checkout per call',
    );
  return [...found.values()][0] ?? null;
}

/** Several work trees' answers to one shell call: any report is told, checkpoints listed. */
function mergeResults(rs: HookResult[]): HookResult {
  if (rs.length === 1) return rs[0]!;
  const informs = rs.flatMap((r) => (r.outcome.kind === 'inform' ? [r.outcome.message] : []));
  return {
    outcome: informs.length ? { kind: 'inform', message: informs.join('\n\n') } : NONE,
    checkpoint: rs
      .map((r) => r.checkpoint)
      .filter(Boolean)
      .join(' '),
    files: rs.flatMap((r) => r.files ?? []),
    notes: rs.flatMap((r) => r.notes),
  };
}
