import { AGENT_SHELL_VARS, agentAncestor } from '../runtime/agent-ancestry.js';

/**
 * Auto mode: no person is there to ask, so what needs approval is blocked.
 * On with --auto, GUARD_AUTO=1, CI=true (any CI value but empty, 0, false).
 * (No terminal at all also means auto mode: that is found out when guard
 * tries to open /dev/tty, see terminal.ts.) Kept apart from terminal.ts so
 * the hook's path does not load readline and tty.
 */
export function isAutoMode(flag: boolean | undefined): boolean {
  if (flag) return true;
  if (process.env.GUARD_AUTO === '1' || process.env.GUARD_AUTO === 'true') return true;
  const ci = process.env.CI;
  if (ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false') return true;
  return false;
}

/**
 * Is this guard run from an agent's command tool (by the agent, not a person)? Its variables
 * (AGENT_SHELL_VARS) are set in the shell of Claude Code's Bash (CLAUDECODE=1, since 0.2.47) and
 * Gemini CLI's run_shell_command (GEMINI_CLI=1). A terminal there is one the agent made
 * (`script -c 'git commit'`) and types into.
 */
export function inAgentShell(): boolean {
  return AGENT_SHELL_VARS.some((v) => process.env[v] === '1');
}

/**
 * inAgentShell, or the same read from the processes above this one (runtime/agent-ancestry.ts):
 * for the commands that reset guard's own evidence (`guard log --prune`, `guard recover`), which
 * an agent would run with those variables unset. A description of why, null when neither.
 */
export function agentShellWhy(): string | null {
  const set = AGENT_SHELL_VARS.find((v) => process.env[v] === '1');
  if (set) return `${set}=1 is set`;
  return agentAncestor();
}
