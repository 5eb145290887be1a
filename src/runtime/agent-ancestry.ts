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
 * and for a process that left the tree (`setsid -f`, re-parented to init), nothing is found.
 */

/** The variables a harness sets in its command tool's shell, each to 1. */
export const AGENT_SHELL_VARS = ['CLAUDECODE', 'GEMINI_CLI'] as const;

/** How far up the tree is read (a shell, a script's interpreter, env, npx, ...). */
const DEPTH = 32;

/** A harness's own process, by its command line: the binary's name or the package its script is in. */
function harnessCommand(argv: readonly string[]): string | null {
  for (const a of argv.slice(0, 2)) {
    const base = path.basename(a);
    if (base === 'claude' || a.includes('/@anthropic-ai/claude-code/')) return 'Claude Code';
    if (base === 'gemini' || a.includes('/@google/gemini-cli/')) return 'Gemini CLI';
  }
  return null;
}

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

function nulList(file: string): string[] {
  try {
    return readFileSync(file, 'latin1').split('\0');
  } catch {
    return [];
  }
}

/**
 * The ancestor that makes this an agent's command tool, as a short description; null when none
 * is found (no /proc, or none above).
 */
export function agentAncestor(): string | null {
  if (process.platform !== 'linux') return null;
  const marks = new Set(AGENT_SHELL_VARS.map((v) => `${v}=1`));
  let pid = process.ppid;
  for (let depth = 0; depth < DEPTH && pid > 1; depth++) {
    const env = nulList(`/proc/${pid}/environ`);
    const set = env.find((e) => marks.has(e));
    if (set) return `process ${pid} above it was started with ${set}`;
    const harness = harnessCommand(nulList(`/proc/${pid}/cmdline`));
    if (harness) return `process ${pid} above it is ${harness}`;
    pid = parentOf(pid);
  }
  return null;
}
