import { existsSync, readFileSync, readdirSync, realpathSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { CLI, cleanEnv, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';
import { codexPayload, copilotPayload } from './codex-payload.js';

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
    // the command it names brings the ignored file back
    const restore = /guard restore (\S+) -- local\/notes\.md/.exec(why(first));
    expect(restore).not.toBeNull();
    expect(repo.guard(['restore', restore![1]!, '--', 'local/notes.md']).code).toBe(0);
    expect(repo.read('local/notes.md')).toBe(lines(120));
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

describe("gemini: the session's edit, then undone by the background command", () => {
  // open (adv8.md): a write's before event keeps the file as it was, and only a check at the write's
  // after event (gone where nobody can be asked) kept its result, so the edit is in no checkpoint
  it('an edit the background command put back to its committed text is told', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 1; git checkout -- keep.py');
    const edited = lines(300) + lines(200, 'mine');
    const w = { file_path: path.join(repo.dir, 'keep.py'), content: edited };
    const ran = g(repo, 'BeforeTool', 'write_file', w);
    if (denied(ran)) throw new Error(`the write itself was refused: ${why(ran)}`);
    repo.write('keep.py', edited);
    repo.git(['checkout', '--', 'keep.py']);
    const next = g(repo, 'BeforeTool', 'write_file', {
      file_path: path.join(repo.dir, 'other.py'),
      content: 'y = 2\n',
    });
    expect(why(next)).toContain('keep.py');
  });
});

describe('gemini: a background command, then nothing (the session ends) or another session', () => {
  function wipeAfterWrite(repo: TestRepo) {
    repo.write('local/notes.md', lines(120));
    const w = { file_path: path.join(repo.dir, 'a.py'), content: 'a = 1\n' };
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(false);
    repo.write('a.py', 'a = 1\n');
    startBackground(repo, 'sleep 1; rm -rf keep.py local');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    rmSync(path.join(repo.dir, 'local'), { recursive: true });
  }

  it('guard rewind puts back the tracked work it deleted, though no call came after', () => {
    const repo = makeRepo({ 'keep.py': lines(300), '.gitignore': 'local/\n' });
    wipeAfterWrite(repo);
    const rw = repo.guardJson(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('keep.py')).toBe(lines(300));
    expect(existsSync(path.join(repo.dir, 'a.py'))).toBe(false);
  });

  // not of s2f: rewind diffs the checkpoints' trees, and ignored files are kept beside them (the
  // kept parent); after a foreground command too, only `guard restore CP -- PATH` puts them back
  it('guard rewind puts back the ignored work it deleted', () => {
    const repo = makeRepo({ 'keep.py': lines(300), '.gitignore': 'local/\n' });
    wipeAfterWrite(repo);
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(repo.read('local/notes.md')).toBe(lines(120));
  });

  it('a new session id in the same work tree: the first session is still rewound; the new one is not told (documented)', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 1; rm keep.py', 'g1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const w = { file_path: path.join(repo.dir, 'b.py'), content: 'b = 1\n' };
    // the harness restarted: another session's write is not refused for g1's background command
    expect(denied(g(repo, 'BeforeTool', 'write_file', w, 'g2'))).toBe(false);
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(repo.read('keep.py')).toBe(lines(300));
  });
});

describe('the one-time deny is one time', () => {
  it('after it, writes, shell calls and writes of the same file run; a new loss is told once more', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'two.py': lines(300, 'two') });
    startBackground(repo, 'sleep 1; rm keep.py; sleep 5; rm two.py');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    // the agent writes the lost file back whole: refused once for the report, then it runs
    const w = { file_path: path.join(repo.dir, 'keep.py'), content: lines(300) };
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(true);
    const retry = g(repo, 'BeforeTool', 'write_file', w);
    expect(why(retry)).toBe('');
    expect(denied(retry)).toBe(false);
    repo.write('keep.py', lines(300));
    for (let i = 0; i < 3; i++) {
      const ls = { command: 'ls' };
      expect(denied(g(repo, 'BeforeTool', 'run_shell_command', ls))).toBe(false);
      g(repo, 'AfterTool', 'run_shell_command', ls);
    }
    unlinkSync(path.join(repo.dir, 'two.py'));
    const again = g(repo, 'BeforeTool', 'write_file', w);
    expect(denied(again)).toBe(true);
    expect(why(again)).toContain('two.py');
    expect(why(again)).not.toContain('keep.py was deleted');
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(false);
  });
});

describe('the one-time deny under concurrent calls', () => {
  /** `guard hook gemini` as its own process, not waited for. */
  function hookAsync(repo: TestRepo, payload: object): Promise<{ code: number; json: any }> {
    return new Promise((resolve) => {
      const p = spawn(process.execPath, [CLI, 'hook', 'gemini'], {
        cwd: repo.dir,
        env: cleanEnv({ GEMINI_PROJECT_DIR: repo.dir }),
      });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('close', (code) =>
        resolve({ code: code ?? -1, json: out.trim() ? JSON.parse(out) : null }),
      );
      p.stdin.end(JSON.stringify(payload));
    });
  }

  it('two calls at once after a background loss: the loss is told by at least one, and once told it stays told', async () => {
    for (let round = 0; round < 3; round++) {
      const repo = makeRepo({ 'keep.py': lines(300) });
      startBackground(repo, 'sleep 1; rm keep.py');
      unlinkSync(path.join(repo.dir, 'keep.py'));
      const write = (f: string) =>
        gemini(repo, 'BeforeTool', 'write_file', {
          file_path: path.join(repo.dir, f),
          content: 'x\n',
        });
      const both = await Promise.all([
        hookAsync(repo, write('a.py')),
        hookAsync(repo, write('b.py')),
      ]);
      expect(both.map((r) => r.code)).toEqual([0, 0]);
      const told = both.filter((r) => denied(r) && why(r).includes('keep.py was deleted'));
      expect(told.length).toBeGreaterThanOrEqual(1);
      expect(denied(g(repo, 'BeforeTool', 'write_file', write('c.py').tool_input))).toBe(false);
    }
  });
});

describe('codex: a command detached with & (Codex has no background flag)', () => {
  function codex(repo: TestRepo, event: string, tool: string, input: object, id: string) {
    return hook(repo, 'codex', codexPayload(repo, event, tool, input, id));
  }
  const codexDenied = (r: { json: any }) =>
    r.json?.hookSpecificOutput?.permissionDecision === 'deny';

  // not of s2f (the write's after event never checked for it): a shell call that returned is paired
  // with its after event, and what changed after it is no call's
  it('guard rewind puts back what it deleted after its after event, with only patches after it', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const cmd = { command: '(sleep 1; rm keep.py) >/dev/null 2>&1 &' };
    codex(repo, 'PreToolUse', 'Bash', cmd, 'b1');
    codex(repo, 'PostToolUse', 'Bash', cmd, 'b1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };
    // told once (holes7: the next test), then the patch sent again runs
    expect(codexDenied(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'))).toBe(true);
    expect(codexDenied(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p2'))).toBe(false);
    repo.write('n.py', 'n = 1\n');
    expect(repo.guardJson(['rewind', 'c1']).code).toBe(0);
    expect(repo.read('keep.py')).toBe(lines(300));
  });

  it('the next call of the session tells what it deleted (nothing marks it as running on: no call checks)', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const cmd = { command: '(sleep 1; rm keep.py) >/dev/null 2>&1 &' };
    codex(repo, 'PreToolUse', 'Bash', cmd, 'b1');
    codex(repo, 'PostToolUse', 'Bash', cmd, 'b1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };
    expect(codexDenied(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'))).toBe(true);
  });
});

describe("withCallCatFile: one cat-file for a hook call's reads", () => {
  /** git cat-file processes whose work folder is the repository's. */
  function catFiles(repo: TestRepo): number[] {
    const out: number[] = [];
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (cmd.includes('cat-file') && realpathSync(`/proc/${pid}/cwd`) === realpathSync(repo.dir))
          out.push(Number(pid));
      } catch {
        // gone, or not ours
      }
    }
    return out;
  }

  it('a hook killed while its cat-file reads leaves no cat-file running, and the next call is judged whole', async () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const w = { file_path: path.join(repo.dir, 'keep.py'), content: lines(10) };
    const killed = repo.guard(['hook', 'gemini'], {
      input: JSON.stringify(gemini(repo, 'BeforeTool', 'write_file', w)),
      env: { GEMINI_PROJECT_DIR: repo.dir, GUARD_FAULT: 'catfile:reading' },
    });
    expect(killed.code).not.toBe(0);
    // its cat-file reads a closed stdin and ends
    for (let i = 0; i < 100 && catFiles(repo).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(catFiles(repo)).toEqual([]);
    const again = g(repo, 'BeforeTool', 'write_file', w);
    expect(denied(again)).toBe(true);
    expect(why(again)).toContain('keep.py would lose');
  });
});

describe('copilot: a command detached with & (no background flag; every tool has both events)', () => {
  const copilot = (repo: TestRepo, tool: string, args: object, post = false) =>
    hook(repo, 'copilot', copilotPayload(repo, tool, args, post));
  const copilotDenied = (r: { json: any }) => r.json?.permissionDecision === 'deny';

  // as Codex's: nothing marks the command as running on, and no later call checks
  it('the next call, a write and its after event, tells what it deleted', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const cmd = { command: '(sleep 1; rm keep.py) >/dev/null 2>&1 &' };
    copilot(repo, 'bash', cmd);
    copilot(repo, 'bash', cmd, true);
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const create = { path: path.join(repo.dir, 'n.py'), file_text: 'n = 1\n' };
    const pre = copilot(repo, 'create', create);
    repo.write('n.py', 'n = 1\n');
    const post = copilot(repo, 'create', create, true);
    expect(copilotDenied(pre) || JSON.stringify(post.json ?? {}).includes('keep.py')).toBe(true);
  });
});
