import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import type { Classification } from '../core/classify.js';
import { GuardError } from '../core/errors.js';
import { checkpoint, type Checkpoint } from '../git/checkpoint.js';
import { laneRepo, type Lane } from '../git/lanes.js';
import { writeRecords } from '../git/records.js';
import { sessionEventCommit } from '../git/session.js';
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
}

/** Signals guard passes on to the command. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Start or reuse the lane, run the command in it, then checkpoint the lane
 * and measure it against its base, whatever way the command ended.
 */
export async function runInLane(opts: RunOptions): Promise<RunResult> {
  const [file, ...args] = opts.command;
  if (!file) throw new GuardError('E_USAGE', 'no command to run', `name it after --: guard run ${opts.name} -- CMD ARGS...`);
  const { main, lane, created } = await startOrReuse(opts);
  // A run is a session (harness "run", id = the lane): checkpointed before and after, so
  // `guard log --session NAME` lists it and `guard rewind NAME` puts back what it wrote.
  // (a lane made just now is its base commit: no checkpoint needed to know that)
  const before = await runSessionStep(lane, 'pre', [file, ...args].join(' '), created ? { commit: lane.base, id: lane.base } : null);
  const ended = await spawnInLane(file, args, lane.path, path.join(main.root, 'node_modules', '.bin'), opts.stdoutToStderr ?? false);
  const changes = await laneChanges(main, lane, { reason: `after guard run ${lane.name} -- ${file}`, command: 'run' });
  if (changes.checkpoint) await runSessionStep(lane, 'post', [file, ...args].join(' '), changes.checkpoint, before);
  return {
    name: lane.name,
    path: lane.path,
    branch: lane.branch,
    base: lane.base,
    created,
    exitCode: ended.code,
    signal: ended.signal,
    checkpoint: changes.checkpoint ? { id: changes.checkpoint.id, ref: changes.checkpoint.ref, commit: changes.checkpoint.commit } : null,
    filesChanged: changes.filesChanged,
    needsApproval: changes.needsApproval,
    files: changes.files,
  };
}

function spawnInLane(
  file: string,
  args: string[],
  cwd: string,
  mainBin: string,
  stdoutToStderr: boolean,
): Promise<{ code: number; signal: string | null }> {
  // A lane has no node_modules of its own: the main tree's bin folder goes
  // LAST on PATH, so the lane's hook still finds a locally installed guard
  // without shadowing anything the command would otherwise run.
  const env = { ...process.env };
  if (existsSync(mainBin)) env.PATH = [env.PATH, mainBin].filter(Boolean).join(path.delimiter);
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ['inherit', stdoutToStderr ? 2 : 'inherit', 'inherit'] });
    let exited = false;
    const forward = (signal: NodeJS.Signals) => () => {
      // Ctrl-C at a terminal already reached the command (same foreground
      // process group): a second SIGINT would read as "press again to quit".
      // guard itself stays alive either way, to checkpoint when it ends; a
      // signal that arrives after the command ended (during that checkpoint)
      // is ignored, so the checkpoint is never cut short. The handlers stay
      // for the rest of this process, which ends when `guard run` does.
      if (exited || (signal === 'SIGINT' && process.stdin.isTTY)) return;
      child.kill(signal);
    };
    const handlers = FORWARDED.map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const done = () => {
      exited = true;
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      done();
      const why = err.code === 'ENOENT' ? 'not found' : err.code === 'EACCES' ? 'not executable' : err.message;
      reject(new GuardError('E_USAGE', `cannot run "${file}": ${why}`, 'the command runs without a shell: for shell syntax use -- sh -c "..."'));
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

async function runSessionStep(lane: Lane, phase: 'pre' | 'post', command: string, taken: Taken | null, pre?: Taken | null): Promise<Taken | null> {
  if (lane.broken) return null;
  const repo = await laneRepo(lane);
  const now = new Date();
  const cp = taken ?? (await checkpoint(repo, { reason: `before guard run ${lane.name} -- ${command}`, command: 'run', lane: lane.name, session: { harness: 'run', session: lane.name, toolCall: null }, now }));
  const toolCall = pre ? pre.id : cp.id;
  await writeRecords(repo.root, [
    sessionEventCommit(cp.commit, { harness: 'run', session: lane.name, toolCall, tool: 'run', phase, kind: 'shell', checkpoint: cp.id, paths: null, worktree: repo.root, time: now.toISOString(), command: command.slice(0, 200) }, now),
  ], now);
  return cp;
}
