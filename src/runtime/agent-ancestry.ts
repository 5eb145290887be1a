import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Whether this process runs under an agent's command tool, read from the processes above it
 * rather than from its own environment (docs/reliability/holes6.md). The variables a harness sets
 * for its shell (CLAUDECODE=1, GEMINI_CLI=1: ui/auto-mode.ts) are the agent's to unset in its own
 * command (`env -u CLAUDECODE guard ...`, `unset CLAUDECODE; eval "$x"`, a script it wrote); the
 * shell the harness started still holds them in the environment it was started with
 * (/proc/PID/environ, which no later `unset` changes), and the harness itself is still an ancestor
 * when that shell was replaced (`exec env -u CLAUDECODE sh -c ...`). Linux only (/proc); elsewhere,
 * and for a process that started a session of its own outside the tree (`setsid -f`, a tmux
 * server started with the variables unset), nothing is found (docs/reliability/adv7.md).
 */

/** The variables a harness sets in its command tool's shell, each to 1. */
export const AGENT_SHELL_VARS = ['CLAUDECODE', 'GEMINI_CLI'] as const;

/**
 * How far up the tree is read (a shell, a script's interpreter, env, npx, ...); a tree deeper than
 * this is read as the agent's (adv7: 40 nested `sh` with CLAUDECODE unset hid the agent's shell
 * past the 32 levels read before).
 */
const DEPTH = 1024;

/** A harness's own process, by its command line: the binary's name or the package its script is in. */
function harnessCommand(argv: readonly string[]): string | null {
  for (const a of argv.slice(0, 2)) {
    const base = path.basename(a);
    if (base === 'claude' || a.includes('/@anthropic-ai/claude-code/')) return 'Claude Code';
    if (base === 'gemini' || a.includes('/@google/gemini-cli/')) return 'Gemini CLI';
  }
  return null;
}

/** A process's parent and session ("pid (comm) state ppid pgrp session ..."); null when it is gone. */
function statOf(pid: number): { ppid: number; sid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // comm may hold spaces and parentheses
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), sid: Number(f[3]) };
  } catch {
    return null;
  }
}

function nulList(file: string): string[] {
  try {
    return readFileSync(file, 'latin1').split('\0');
  } catch {
    return [];
  }
}

interface Link {
  pid: number;
  sid: number;
}

/**
 * The processes from this one up to init, or why they are the agent's; null when one of them
 * exited while it was read (this one was re-parented: read again).
 */
function walkUp(): string | Link[] | null {
  const marks = new Set(AGENT_SHELL_VARS.map((v) => `${v}=1`));
  const self = statOf(process.pid);
  if (!self) return null;
  const chain: Link[] = [{ pid: process.pid, sid: self.sid }];
  // up to and with init (1): Claude Code run as a container's first process is init there (adv7)
  for (let pid = self.ppid, depth = 0; pid > 0; depth++) {
    if (depth === DEPTH) return `more than ${DEPTH} processes are above it`;
    const env = nulList(`/proc/${pid}/environ`);
    const set = env.find((e) => marks.has(e));
    if (set) return `process ${pid} above it was started with ${set}`;
    const harness = harnessCommand(nulList(`/proc/${pid}/cmdline`));
    if (harness) return `process ${pid} above it is ${harness}`;
    const stat = statOf(pid);
    if (!stat) return null;
    chain.push({ pid, sid: stat.sid });
    pid = stat.ppid;
  }
  return chain;
}

/**
 * The ancestor that makes this an agent's command tool, as a short description; null when none
 * is found (no /proc, or none above).
 */
export function agentAncestor(): string | null {
  if (process.platform !== 'linux') return null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const walked = walkUp();
    if (typeof walked === 'string') return walked;
    // A process re-parented out of its tree (`nohup ... &`, `& disown`, a double fork) keeps a
    // session whose leader is then not above it: that would tell the agent's detached command.
    // Not used: a person's own process can be the same (a job whose shell exited, a CI runner's
    // detached job), and the refusal of a person's recover or commit prompt has no way around it
    // (adv7.md, open).
    if (walked) return null;
  }
  // (processes above it exiting while they are read, three times over: made to, so not a person's)
  return 'the processes above it changed each time they were read';
}
