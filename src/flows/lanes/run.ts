import { shellQuote } from '../../core/quote.js';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import type { Classification } from '../../core/classify.js';
import { GuardError } from '../../core/errors.js';
import { apply, record, takeCheckpoint } from '../../apply/apply.js';
import type { Checkpoint } from '../../git/checkpoint.js';
import { changedPaths } from '../../git/diff.js';
import { laneRepo, type Lane } from '../../git/lanes.js';
import type { Repo } from '../../git/repo.js';
import { sessionEventCommit } from '../../git/session.js';
import { laneChanges, startOrReuse, type StartOptions } from './lanes.js';

export interface RunOptions extends StartOptions {
  /** argv of the command: run without a shell. */
  command: string[];
  /** Send the command's stdout to guard's stderr (under --json stdout holds only guard's document). */
  stdoutToStderr?: boolean;
}

export interface RunResult {
  name: string;
  path: string;
  branch: string;
  base: string;
  created: boolean;
  /** The command's exit code; 128 + signal number when a signal ended it. */
  exitCode: number;
  signal: string | null;
  checkpoint: { id: string; ref: string; commit: string } | null;
  filesChanged: number;
  needsApproval: number;
  files: Classification[];
  /** What the command changed in the main tree, outside the lane. */
  mainTree: MainTreeChanges;
}

/** Signals guard passes on to the command. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Start or reuse the lane, run the command in it, then checkpoint the lane
 * and measure it against its base, whatever way the command ended.
 */
export async function runInLane(opts: RunOptions): Promise<RunResult> {
  const [file, ...args] = opts.command;
  if (!file)
    throw new GuardError(
      'E_USAGE',
      'no command to run',
      `name it after --: guard run ${opts.name} -- CMD ARGS...`,
    );
  const { main, lane, created } = await startOrReuse(opts);
  // A run is a session (harness "run", id = the lane): checkpointed before and after, so
  // `guard log --session NAME` lists it and `guard rewind NAME` puts back what it wrote.
  // (a lane made just now is its base commit: no checkpoint needed to know that)
  const before = await runSessionStep(lane, {
    phase: 'pre',
    command: [file, ...args].join(' '),
    taken: created ? { commit: lane.base, id: lane.base } : null,
  });
  // A lane is not a sandbox: it sits inside the main tree, and the command can
  // write anywhere. The main tree is checkpointed around it, so that whatever
  // the command did there can be named and put back.
  const mainBefore = await takeCheckpoint('run', main, {
    reason: `before guard run ${lane.name} -- ${file}`,
    command: 'run',
    lane: null,
  });
  let ended: { code: number; signal: string | null };
  try {
    ended = await spawnInLane(file, args, {
      cwd: lane.path,
      mainBin: path.join(main.root, 'node_modules', '.bin'),
      stdoutToStderr: opts.stdoutToStderr ?? false,
    });
  } catch (err) {
    // The command never started: a lane made just for it holds nothing, so it goes again.
    if (created)
      await apply({
        gate: 'run',
        repo: main,
        now: new Date(),
        records: [],
        target: { kind: 'lane-discard', lane, keep: false },
      }).catch(() => undefined);
    throw err;
  }
  const [changes, outside] = await Promise.all([
    laneChanges(main, lane, { reason: `after guard run ${lane.name} -- ${file}`, command: 'run' }),
    mainTreeChanges(main, mainBefore, `after guard run ${lane.name} -- ${file}`),
  ]);
  if (changes.checkpoint)
    await runSessionStep(lane, {
      phase: 'post',
      command: [file, ...args].join(' '),
      taken: changes.checkpoint,
      pre: before,
    });
  return {
    name: lane.name,
    path: lane.path,
    branch: lane.branch,
    base: lane.base,
    created,
    exitCode: ended.code,
    signal: ended.signal,
    checkpoint: changes.checkpoint
      ? {
          id: changes.checkpoint.id,
          ref: changes.checkpoint.ref,
          commit: changes.checkpoint.commit,
        }
      : null,
    filesChanged: changes.filesChanged,
    needsApproval: changes.needsApproval,
    files: changes.files,
    mainTree: outside,
  };
}

interface LaneSpawn {
  cwd: string;
  mainBin: string;
  stdoutToStderr: boolean;
}

function spawnInLane(
  file: string,
  args: string[],
  { cwd, mainBin, stdoutToStderr }: LaneSpawn,
): Promise<{ code: number; signal: string | null }> {
  // A lane has no node_modules of its own: the main tree's bin folder goes
  // LAST on PATH, so the lane's hook still finds a locally installed guard
  // without shadowing anything the command would otherwise run.
  // One `guard run` is one session (DESIGN): each `guard write` the command makes is
  // measured against the file as this run first saw it, unless a harness named its own.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GUARD_SESSION:
      process.env.GUARD_SESSION || `run-${path.basename(cwd)}-${Date.now().toString(36)}`,
  };
  if (existsSync(mainBin)) env.PATH = [env.PATH, mainBin].filter(Boolean).join(path.delimiter);
  return new Promise((resolve, reject) => {
    // The handlers go in before the spawn: the command can start, print and be
    // signalled by whoever watches it before spawn() has even returned here,
    // and a signal with no handler yet would kill guard before its checkpoint.
    let child: ReturnType<typeof spawn> | null = null;
    let exited = false;
    let pending: NodeJS.Signals | null = null;
    const forward = (signal: NodeJS.Signals) => () => {
      // Ctrl-C at a terminal already reached the command (same foreground
      // process group): a second SIGINT would read as "press again to quit".
      // guard itself stays alive either way, to checkpoint when it ends; a
      // signal that arrives after the command ended (during that checkpoint)
      // is ignored, so the checkpoint is never cut short. The handlers stay
      // for the rest of this process, which ends when `guard run` does.
      if (exited || (signal === 'SIGINT' && process.stdin.isTTY)) return;
      if (child) child.kill(signal);
      else pending = signal;
    };
    const handlers = FORWARDED.map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    child = spawn(file, args, {
      cwd,
      env,
      stdio: ['inherit', stdoutToStderr ? 2 : 'inherit', 'inherit'],
    });
    if (pending) child.kill(pending);
    const done = () => {
      exited = true;
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      done();
      const why =
        err.code === 'ENOENT'
          ? 'not found'
          : err.code === 'EACCES'
            ? 'not executable'
            : err.message;
      reject(
        new GuardError(
          'E_USAGE',
          `cannot run "${file}": ${why}`,
          'the command runs without a shell: for shell syntax use -- sh -c "..."',
        ),
      );
    });
    child.once('exit', (code, signal) => {
      done();
      if (signal) resolve({ code: 128 + (constants.signals[signal] ?? 0), signal });
      else resolve({ code: code ?? 1, signal: null });
    });
  });
}

/** One step of a run's session trail (git/session.ts): the checkpoint, then its event. */
type Taken = Pick<Checkpoint, 'commit' | 'id'>;

interface SessionStep {
  phase: 'pre' | 'post';
  command: string;
  taken: Taken | null;
  pre?: Taken | null;
}

async function runSessionStep(
  lane: Lane,
  { phase, command, taken, pre }: SessionStep,
): Promise<Taken | null> {
  if (lane.broken) return null;
  const repo = await laneRepo(lane);
  const now = new Date();
  const cp =
    taken ??
    (await takeCheckpoint('run', repo, {
      reason: `before guard run ${lane.name} -- ${command}`,
      command: 'run',
      lane: lane.name,
      session: { harness: 'run', session: lane.name, toolCall: null },
      now,
    }));
  const toolCall = pre ? pre.id : cp.id;
  await record(
    'run',
    repo,
    [
      sessionEventCommit(
        cp.commit,
        {
          harness: 'run',
          session: lane.name,
          toolCall,
          tool: 'run',
          phase,
          kind: 'shell',
          checkpoint: cp.id,
          paths: null,
          worktree: repo.root,
          time: now.toISOString(),
          command: command.slice(0, 200),
        },
        now,
      ),
    ],
    { now },
  );
  return cp;
}

export interface MainTreeChanges {
  /** The main tree before the command: `guard restore` it to put back what the command changed there. */
  checkpoint: string;
  /** Paths of the main tree (outside the lane) that differ after the command: added, modified, deleted. */
  changed: Array<{ path: string; change: 'added' | 'modified' | 'deleted' }>;
  /** The command that brings them back (null when nothing changed). */
  restore: string | null;
}

/** How many paths the restore command names before it restores the whole tree instead. */
const MAX_NAMED = 20;

/**
 * What changed in the main tree (tracked and untracked-not-ignored files,
 * and what is staged) between the checkpoint before the command and one
 * after it: one checkpoint, and one diff-tree only when the trees differ.
 */
async function mainTreeChanges(
  main: Repo,
  before: Checkpoint,
  reason: string,
): Promise<MainTreeChanges> {
  const after = await takeCheckpoint('run', main, { reason, command: 'run', lane: null });
  const result: MainTreeChanges = { checkpoint: before.id, changed: [], restore: null };
  if (after.tree === before.tree && after.index === before.index) return result;
  result.changed = await changedPaths(main.root, before.tree, after.tree);
  // what was staged: the index's own tree, or the work tree's when they were the same
  const staged = (after.index ?? after.tree) !== (before.index ?? before.tree) ? ' --staged' : '';
  if (result.changed.length === 0 && !staged) return result;
  const named = result.changed.length > 0 && result.changed.length <= MAX_NAMED;
  result.restore = named
    ? `guard restore ${before.id}${staged} -- ${result.changed.map((c) => shellQuote(c.path)).join(' ')}`
    : `guard restore ${before.id}${staged}`;
  return result;
}
