import { unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

/**
 * adv10 (docs/reliability/adv10.md): holes7's reading of a detached shell command, attacked
 * through the real door: `guard hook codex` / `copilot` / `claude` as its own process with the
 * payloads the harness sends (HARNESSES.md), real git in a temp repository. What the detached
 * process does after the call's after event is done by the test (its real timing is shown in
 * docs/reliability/adv10.md: bash returns, the process deletes the file a second later).
 */
afterAll(cleanupRepos);

function hook(repo: TestRepo, harness: string, payload: object) {
  const r = repo.guard(['hook', harness], {
    input: JSON.stringify(payload),
    env: { CLAUDE_PROJECT_DIR: repo.dir },
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

function codex(repo: TestRepo, event: string, tool: string, input: object, id: string) {
  return hook(repo, 'codex', {
    session_id: 'c1',
    turn_id: 't1',
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    hook_event_name: event,
    model: 'gpt-5',
    permission_mode: 'default',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
    ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
  });
}
const codexWhy = (r: { json: any }): string =>
  r.json?.hookSpecificOutput?.permissionDecisionReason ?? '';
const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };

/** Codex runs `command` (both events), the detached process deletes keep.py, then the next call. */
function codexRun(command: string): string {
  const repo = makeRepo({ 'keep.py': lines(300) });
  codex(repo, 'PreToolUse', 'Bash', { command }, 'b1');
  codex(repo, 'PostToolUse', 'Bash', { command }, 'b1');
  unlinkSync(path.join(repo.dir, 'keep.py'));
  return codexWhy(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'));
}

describe('adv10: detached spellings holes7 did not read, told at the next call', () => {
  it.each([
    // process substitutions: bash does not wait for them
    ': <(sleep 1; rm keep.py)',
    'echo go > >(sleep 1; rm keep.py)',
    'exec 3< <(sleep 1; rm keep.py)',
    // bash runs a coprocess as it runs `cmd &`
    'coproc { sleep 1; rm keep.py; }',
    // a prefix with options before the shell or the detacher
    'timeout 60 bash -c "(sleep 1; rm keep.py) &"',
    'nice -n 5 setsid -f sh -c "sleep 1; rm keep.py"',
    'env -u HOME bash -c "(sleep 1; rm keep.py) &"',
    // a script fed to a shell on its input, or a trap's
    'echo "(sleep 1; rm keep.py) &" | sh',
    'sh <<< "(sleep 1; rm keep.py) &"',
    'trap "(sleep 1; rm keep.py) &" EXIT',
    // an apostrophe in a here-document swallowed the rest of the command
    "cat > notes.md <<EOF\nit's started\nEOF\n(sleep 1; rm keep.py) >/dev/null 2>&1 &",
    // a subshell inside a substitution in double quotes: its ) closed the substitution
    'echo "$( (sleep 1; rm keep.py) >/dev/null 2>&1 & )"',
    // $'..' escapes
    "bash -c $'(sleep 1; rm keep.py) \\x26'",
  ])('codex: %s', (command) => {
    expect(codexRun(command)).toContain('keep.py');
  });

  it.each([
    'x=$((6 & 3)); echo $x',
    '(( 6 & 3 )) && echo odd',
    'v=a; echo ${v//&/and}',
    "cat > notes.md <<'EOF'\nTom & Jerry\nEOF",
    'case a in a) echo a;& b) echo b;; esac',
    'diff <(sort a.txt) <(sort b.txt)',
  ])('codex, not a detach (no open call, nothing checked): %s', (command) => {
    // a loss after the after event with nothing running on is not the command's (no check)
    expect(codexRun(command)).toBe('');
  });

  it('copilot: a coprocess is told at the next call', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const copilot = (tool: string, args: object, post = false) =>
      hook(repo, 'copilot', {
        sessionId: 'cp1',
        timestamp: Date.now(),
        cwd: repo.dir,
        toolName: tool,
        toolArgs: args,
        ...(post ? { toolResult: { resultType: 'success', textResultForLlm: '' } } : {}),
      });
    const cmd = { command: 'coproc { sleep 1; rm keep.py; }' };
    copilot('bash', cmd);
    copilot('bash', cmd, true);
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const create = { path: path.join(repo.dir, 'n.py'), file_text: 'n = 1\n' };
    const pre = copilot('create', create);
    repo.write('n.py', 'n = 1\n');
    const post = copilot('create', create, true);
    const said = JSON.stringify(pre.json ?? {}) + JSON.stringify(post.json ?? {});
    expect(said).toContain('keep.py');
  });

  it('claude: a process substitution in Bash (no run_in_background) is told at the next call', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const claude = (event: string, tool: string, input: object, id: string) =>
      hook(repo, 'claude', {
        session_id: 'cl1',
        transcript_path: '/tmp/t.jsonl',
        cwd: repo.dir,
        permission_mode: 'default',
        hook_event_name: event,
        tool_name: tool,
        tool_input: input,
        tool_use_id: id,
        ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
      });
    const cmd = { command: ': <(sleep 1; rm keep.py)', description: 'start' };
    claude('PreToolUse', 'Bash', cmd, 'b1');
    claude('PostToolUse', 'Bash', cmd, 'b1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const w = { file_path: path.join(repo.dir, 'n.py'), content: 'n = 1\n' };
    const pre = claude('PreToolUse', 'Write', w, 'w1');
    repo.write('n.py', 'n = 1\n');
    const post = claude('PostToolUse', 'Write', w, 'w1');
    const said = JSON.stringify(pre.json ?? {}) + JSON.stringify(post.json ?? {});
    expect(said).toContain('keep.py');
  });
});
