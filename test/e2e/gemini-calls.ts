import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import { CLI, cleanEnv, type TestRepo } from '../helpers.js';

/**
 * Gemini CLI's tool calls through `guard hook gemini` as its own process (HARNESSES.md's payloads),
 * for holes7 and adv11: `env` is read at each call (holes7 runs some tests with
 * GUARD_SESSION_CHAIN=0).
 */
export function geminiCalls(env: () => Record<string, string> = () => ({})) {
  const hook = (repo: TestRepo, harness: string, payload: object) => {
    const r = repo.guard(['hook', harness], {
      input: JSON.stringify(payload),
      env: { GEMINI_PROJECT_DIR: repo.dir, CLAUDE_PROJECT_DIR: repo.dir, ...env() },
    });
    return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
  };
  const g = (repo: TestRepo, event: string, tool: string, input: object, session = 'g1') =>
    hook(repo, 'gemini', {
      session_id: session,
      cwd: repo.dir,
      hook_event_name: event,
      tool_name: tool,
      tool_input: input,
      ...(event === 'AfterTool' ? { tool_response: {} } : {}),
    });
  const denied = (r: { json: any }) => r.json?.decision === 'deny';
  const why = (r: { json: any }): string => r.json?.reason ?? '';
  /** A shell call run in the background: both events at once, as Gemini sends them. */
  function startBackground(repo: TestRepo, command: string, session = 'g1') {
    const bg = { command, is_background: true };
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', bg, session))).toBe(false);
    g(repo, 'AfterTool', 'run_shell_command', bg, session);
  }
  /** The write_file call allowed, then the harness writes it. */
  function write(repo: TestRepo, rel: string, content: string, session = 'g1') {
    const r = g(
      repo,
      'BeforeTool',
      'write_file',
      { file_path: path.join(repo.dir, rel), content },
      session,
    );
    if (denied(r)) throw new Error(`the write itself was refused: ${why(r)}`);
    repo.write(rel, content);
  }
  /** Another call of the session: a small new file. */
  const other = (repo: TestRepo, n = 'other.py') =>
    g(repo, 'BeforeTool', 'write_file', { file_path: path.join(repo.dir, n), content: 'y = 2\n' });
  return { hook, g, denied, why, startBackground, write, other };
}

/** `guard hook gemini` as its own process, not waited for (calls at once): its exit and output. */
export function hookAsync(repo: TestRepo, payload: object): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'hook', 'gemini'], {
      cwd: repo.dir,
      env: cleanEnv({ GEMINI_PROJECT_DIR: repo.dir }),
    });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('close', (code) => resolve({ code: code ?? -1, out }));
    p.stdin.end(JSON.stringify(payload));
  });
}
