import { unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';
import { codexPayload } from './codex-payload.js';

/**
 * adv11 (docs/reliability/adv11.md): the newest doors attacked through the real door: `guard hook
 * codex` / `gemini` / `claude` as its own process with the payloads the harness sends
 * (HARNESSES.md), real git in a temp repository. What a detached process does after the call's
 * after event is done by the test (each spelling was run for real in bash 5.2 first: the shell
 * returns, the file is gone a second later).
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
  return hook(repo, 'codex', codexPayload(repo, event, tool, input, id));
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

describe('adv11: detaching spellings adv10 did not read, told at the next call', () => {
  it.each([
    // -c in a cluster of options after the first, or its script after --
    "bash -ce '(sleep 1; rm keep.py) &'",
    "bash -c -- '(sleep 1; rm keep.py) &'",
    // a condition's or a loop's command
    "if setsid -f sh -c 'sleep 1; rm keep.py'; then echo started; fi",
    "while ! setsid -f sh -c 'sleep 1; rm keep.py'; do :; done",
    // a prefix's long option with its value in the next word
    "timeout --signal KILL 60 setsid -f sh -c 'sleep 1; rm keep.py'",
    "env --unset HOME setsid -f sh -c 'sleep 1; rm keep.py'",
    // a script fed to a shell that takes arguments, or names its input as its script
    "printf '%s\\n' '(sleep 1; rm keep.py) &' | bash -s -- x",
    "echo '(sleep 1; rm keep.py) &' | bash /dev/stdin",
    // a quoted here-document piped into a shell
    "cat <<'EOF' | bash\n(sleep 1; rm keep.py) &\nEOF",
    // a glob the shell expands to the detacher's path
    "/usr/bin/sets?d -f sh -c 'sleep 1; rm keep.py'",
    // runners: their options and first argument, then the command
    "taskset -c 0 setsid -f sh -c 'sleep 1; rm keep.py'",
    "flock /tmp/adv11.lock setsid -f sh -c 'sleep 1; rm keep.py'",
    // a tmux window or pane runs its command in the tmux server
    "tmux new-window 'sleep 1; rm keep.py'",
  ])('codex: %s', (command) => {
    expect(codexRun(command)).toContain('keep.py');
  });

  it.each([
    'mapfile -t files < <(git ls-files)',
    "readarray -t found < <(find . -name '*.py')",
    'git commit -m "$(cat <<\'EOF\'\nFix a & b\nEOF\n)"',
    'flock /tmp/adv11.lock make test',
  ])('codex, not a detach (no open call, nothing checked): %s', (command) => {
    expect(codexRun(command)).toBe('');
  });

  // `a & b & wait` waits for both: nothing runs past the shell's return, yet the call is read as
  // detached (30 minutes of whole-tree checkpoints, a person's deletion told as the command's).
  // Telling it apart needs the `&`s at the top level, nothing conditional or exiting between the
  // last `&` and the `wait`, no pipeline stage holding one: not a small change (docs/reliability/adv11.md).
  it.fails('codex, not a detach: parallel jobs the command waits for (a & b & wait)', () => {
    expect(codexRun('npm run lint & npm run test & wait')).toBe('');
  });
});
