import { rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

/**
 * adv8 (docs/reliability/adv8.md): the after event of writes is gone where nobody can be asked
 * (s2f). Each attack goes through the real door, `guard hook gemini` / `guard hook codex` with
 * payloads shaped as the harness sends them, and only the events `guard init` now installs:
 * BeforeTool on writes and the shell, AfterTool on the shell alone.
 */
afterAll(cleanupRepos);

function hook(repo: TestRepo, harness: string, payload: object) {
  const r = repo.guard(['hook', harness], {
    input: JSON.stringify(payload),
    env: { GEMINI_PROJECT_DIR: repo.dir, CLAUDE_PROJECT_DIR: repo.dir },
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

/** Gemini's payloads (HARNESSES.md): no tool call id. */
function gemini(repo: TestRepo, event: string, tool: string, input: object, session = 'g1') {
  return {
    session_id: session,
    cwd: repo.dir,
    hook_event_name: event,
    tool_name: tool,
    tool_input: input,
    ...(event === 'AfterTool' ? { tool_response: {} } : {}),
  };
}
const g = (repo: TestRepo, event: string, tool: string, input: object, session = 'g1') =>
  hook(repo, 'gemini', gemini(repo, event, tool, input, session));
const denied = (r: { json: any }) => r.json?.decision === 'deny';
const why = (r: { json: any }): string => r.json?.reason ?? '';

/** A background shell call as Gemini sends it: BeforeTool, then AfterTool at once while it runs. */
function startBackground(repo: TestRepo, command: string, session = 'g1') {
  const bg = { command, is_background: true };
  expect(denied(g(repo, 'BeforeTool', 'run_shell_command', bg, session))).toBe(false);
  g(repo, 'AfterTool', 'run_shell_command', bg, session);
}

describe('gemini: a background command, then writes alone (no after event on writes)', () => {
  it('tracked and ignored work deleted after its after event: the next write is refused once, naming both and how to restore', () => {
    const repo = makeRepo({ 'keep.py': lines(300), '.gitignore': 'local/\n' });
    repo.write('local/notes.md', lines(120));
    startBackground(repo, 'sleep 1; rm -rf keep.py local');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    rmSync(path.join(repo.dir, 'local'), { recursive: true });
    const w = { file_path: path.join(repo.dir, 'new.py'), content: 'x = 1\n' };
    const first = g(repo, 'BeforeTool', 'write_file', w);
    expect(denied(first)).toBe(true);
    expect(why(first)).toContain('keep.py');
    expect(why(first)).toContain('local/notes.md');
    expect(why(first)).toMatch(/guard (restore|rewind)/);
    // one time: the same write sent again runs
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(false);
  });

  it("the session's own edit of a file, then wiped by the background command, is still reported (no write after event to move the baseline)", () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 1; rm keep.py');
    const edit = {
      file_path: path.join(repo.dir, 'keep.py'),
      old_string: 'line 7\n',
      new_string: 'LINE 7\n',
    };
    expect(denied(g(repo, 'BeforeTool', 'replace', edit))).toBe(false);
    repo.write('keep.py', lines(300).replace('line 7\n', 'LINE 7\n'));
    // the background command deletes it; the session's next call is another write
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const next = g(repo, 'BeforeTool', 'write_file', {
      file_path: path.join(repo.dir, 'other.py'),
      content: 'y = 2\n',
    });
    expect(denied(next)).toBe(true);
    expect(why(next)).toContain('keep.py');
  });
});
