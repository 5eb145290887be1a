import { spawnSync } from 'node:child_process';
import { existsSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision as decision,
  checkpointsOf,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

/**
 * Holes in `guard hook` found by driving it as an agent would (issue 19,
 * and issue 20's rewind item): each test performs the attack through
 * payloads shaped as Claude Code 2.1.330 sends them, and fails on the hook
 * before these fixes.
 */
afterAll(cleanupRepos);

type Env = Record<string, string | undefined>;
interface P {
  event?: string;
  session?: string;
  id?: string;
  mode?: string;
  cwd?: string;
}

function claude(repo: TestRepo, tool: string, input: object, o: P = {}): string {
  const event = o.event ?? 'PreToolUse';
  return JSON.stringify({
    session_id: o.session ?? 'sess-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: o.cwd ?? repo.dir,
    permission_mode: o.mode ?? 'bypassPermissions',
    hook_event_name: event,
    tool_name: tool,
    tool_input: input,
    tool_use_id: o.id ?? 'toolu_1',
    ...(event !== 'PreToolUse' ? { tool_response: {} } : {}),
  });
}

function hook(repo: TestRepo, payload: string, env: Env = {}, harness = 'claude') {
  const r = repo.guard(['hook', harness], {
    input: payload,
    env: { CLAUDE_PROJECT_DIR: repo.dir, ...env },
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}
const reason = (r: { json: any }): string =>
  r.json?.hookSpecificOutput?.permissionDecisionReason ?? '';
const sh = (repo: TestRepo, command: string) => spawnSync('sh', ['-c', command], { cwd: repo.dir });

describe("fuzzy edits: guard reproduces the harness's loose match, or refuses", () => {
  it('an Edit whose LF old text matches a CRLF file only after normalising line ends is measured (150 lines -> 1): denied', () => {
    const body = Array.from({ length: 150 }, (_, i) => `row ${i}`).join('\r\n') + '\r\n';
    const repo = makeRepo({ 'data.txt': body });
    const r = hook(
      repo,
      claude(repo, 'Edit', {
        file_path: path.join(repo.dir, 'data.txt'),
        old_string: body.replace(/\r\n/g, '\n'),
        new_string: 'row 0\n',
      }),
    );
    expect(decision(r)).toBe('deny');
    expect(reason(r)).toContain('data.txt would lose 149 of 150 lines');
    const ref = /refs\/guard\/rejected\/\S+?(?=\.)/.exec(reason(r))![0];
    expect(repo.git(['show', `${ref}:data.txt`])).toBe('row 0\r\n');
    expect(repo.read('data.txt')).toBe(body);
  });

  it('a small Edit with straight quotes over curly ones is allowed after a checkpoint (the harness applies it)', () => {
    const repo = makeRepo({ 'doc.md': 'Say \u201chello\u201d to them.\nmore\n' });
    const r = hook(
      repo,
      claude(repo, 'Edit', {
        file_path: path.join(repo.dir, 'doc.md'),
        old_string: 'Say "hello"',
        new_string: 'Say "bye"',
      }),
    );
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const [cp] = checkpointsOf(repo);
    expect(repo.git(['show', `${cp}:doc.md`])).toBe('Say \u201chello\u201d to them.\nmore\n');
  });

  it('an Edit guard cannot place (ambiguous after normalising) is refused with a reason to re-read, and the file kept', () => {
    const repo = makeRepo({
      'a.py': lines(120)
        .replace('line 5\n', '  x = "a"\n')
        .replace('line 9\n', '  x = \u201ca\u201d\n'),
    });
    const r = hook(
      repo,
      claude(repo, 'Edit', {
        file_path: path.join(repo.dir, 'a.py'),
        old_string: "x = 'a'",
        new_string: 'y',
      }),
    );
    expect(decision(r)).toBe('deny');
    expect(reason(r)).toMatch(/cannot tell what the file would become.*Read the file again/);
    expect(checkpointsOf(repo)).toHaveLength(1);
    // the refusal is in the audit trail like any other
    const log = repo.guardJson(['log', '--session', 'sess-1']).json;
    expect(log.entries.find((x: any) => x.kind === 'decision')).toMatchObject({
      path: 'a.py',
      decision: 'blocked',
      decider: 'auto',
    });
  });
});

describe('PostToolUseFailure', () => {
  it('a command that exits non-zero still gets its loss report, answered under its own event name', () => {
    const repo = makeRepo({ 'big.py': lines(200) });
    repo.write('big.py', lines(200) + lines(150, 'work'));
    const cmd = 'git checkout -- . && ./test.sh';
    expect(hook(repo, claude(repo, 'Bash', { command: cmd }, { id: 'f1' })).stdout).toBe('');
    sh(repo, cmd);
    const post = hook(
      repo,
      claude(repo, 'Bash', { command: cmd }, { id: 'f1', event: 'PostToolUseFailure' }),
    );
    expect(post.json.hookSpecificOutput.hookEventName).toBe('PostToolUseFailure');
    expect(post.json.hookSpecificOutput.additionalContext).toContain(
      'big.py lost 150 of 350 lines',
    );
  });
});

describe('background commands', () => {
  it('what a background command destroys after its post event is reported at the next call, and guard rewind brings it back', () => {
    const repo = makeRepo({ 'keep.py': lines(200), 'other.txt': 'o\n' });
    const work = lines(200) + lines(120, 'mine');
    repo.write('keep.py', work);
    const bg = { command: 'sleep 1; git checkout -- .', run_in_background: true };
    expect(hook(repo, claude(repo, 'Bash', bg, { id: 'bg1' })).stdout).toBe('');
    // the post event comes while it still runs: nothing lost yet
    expect(hook(repo, claude(repo, 'Bash', bg, { id: 'bg1', event: 'PostToolUse' })).stdout).toBe(
      '',
    );
    repo.git(['checkout', '--', '.']);
    // the session's next call: refused once, with the report
    const next = hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'n1' }));
    expect(decision(next)).toBe('deny');
    expect(reason(next)).toContain('keep.py lost 120 of 320 lines');
    expect(reason(next)).toContain('run in the background');
    // told once: the call after goes through
    expect(hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'n2' })).stdout).toBe('');
    const rw = repo.guardJson(['rewind', 'sess-1']);
    expect(rw.code).toBe(0);
    expect(rw.json.changes).toEqual([{ path: 'keep.py', action: 'rewritten' }]);
    expect(repo.read('keep.py')).toBe(work);
  });
});

describe('rewind without an after-event', () => {
  it("touches only the session's own writes: not another session's file, never a person's new file", () => {
    const repo = makeRepo({ 'a.txt': lines(30, 'a'), 'b.txt': 'b\n' });
    // session A: a command that never got its after-event
    hook(repo, claude(repo, 'Bash', { command: 'rm a.txt' }, { session: 'A', id: 'a1' }));
    sh(repo, 'rm a.txt');
    // session B writes b.txt through its tool; the person makes a new file
    const bWrite = claude(
      repo,
      'Write',
      { file_path: path.join(repo.dir, 'b.txt'), content: 'b from B\n' },
      { session: 'B', id: 'b1' },
    );
    expect(hook(repo, bWrite).stdout).toBe('');
    writeFileSync(path.join(repo.dir, 'b.txt'), 'b from B\n');
    repo.write('person.txt', 'the person wrote this\n');
    const rw = repo.guardJson(['rewind', 'A']);
    expect(rw.code).toBe(0);
    expect(rw.json.changes).toEqual([{ path: 'a.txt', action: 'recreated' }]);
    expect(repo.read('b.txt')).toBe('b from B\n');
    expect(repo.read('person.txt')).toBe('the person wrote this\n');
  });
});

describe('ask only where a person can answer', () => {
  const truncate = (repo: TestRepo) =>
    claude(
      repo,
      'Write',
      { file_path: path.join(repo.dir, 'state.py'), content: lines(10) },
      { mode: 'default' },
    );

  it('claude: default mode with an unknown or print-mode entry point is denied, the proposal kept', () => {
    for (const entry of [undefined, 'sdk-cli', 'sdk-ts', 'something-new']) {
      const repo = makeRepo({ 'state.py': lines(200) });
      const r = hook(repo, truncate(repo), { CI: undefined, CLAUDE_CODE_ENTRYPOINT: entry });
      expect(decision(r), String(entry)).toBe('deny');
      expect(repo.refs('refs/guard/rejected/'), String(entry)).toHaveLength(1);
    }
    const repo = makeRepo({ 'state.py': lines(200) });
    expect(
      decision(hook(repo, truncate(repo), { CI: undefined, CLAUDE_CODE_ENTRYPOINT: 'cli' })),
    ).toBe('ask');
  });

  it('copilot (nothing marks copilot -p): denied, never ask', () => {
    const repo = makeRepo({ 'state.py': lines(200) });
    const p = JSON.stringify({
      sessionId: 's',
      timestamp: 1,
      cwd: repo.dir,
      toolName: 'create',
      toolArgs: { path: path.join(repo.dir, 'state.py'), file_text: lines(10) },
    });
    const r = hook(repo, p, { CI: undefined }, 'copilot');
    expect(r.json.permissionDecision).toBe('deny');
    expect(repo.refs('refs/guard/rejected/')).toHaveLength(1);
  });
});

describe('inputs the agent can move first', () => {
  it('cwd moved outside the repository: a write into the project by absolute path is still judged', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    const r = hook(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
        { cwd: outsideDir() },
      ),
    );
    expect(decision(r)).toBe('deny');
  });

  it('cwd moved outside the repository: a shell command wiping the project is still checkpointed and reported', () => {
    const repo = makeRepo({ 'big.py': lines(200) });
    repo.write('big.py', lines(320));
    const out = outsideDir();
    const cmd = `git -C ${repo.dir} checkout -- .`;
    hook(repo, claude(repo, 'Bash', { command: cmd }, { cwd: out, id: 'o1' }));
    sh(repo, cmd);
    const post = hook(
      repo,
      claude(repo, 'Bash', { command: cmd }, { cwd: out, id: 'o1', event: 'PostToolUse' }),
    );
    expect(post.json?.hookSpecificOutput?.additionalContext).toContain(
      'big.py lost 120 of 320 lines',
    );
  });

  it('a symlinked cwd (or path) into the repository is the repository', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    const link = path.join(outsideDir(), 'link');
    symlinkSync(repo.dir, link);
    const r = hook(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(link, 'state.py'), content: 'x\n' },
        { cwd: link },
      ),
      { CLAUDE_PROJECT_DIR: link },
    );
    expect(decision(r)).toBe('deny');
  });

  it('a looser policy committed at HEAD by the agent mid-session does not loosen the gate', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'l1' }));
    hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'l1', event: 'PostToolUse' }));
    repo.write('guard.config.json', JSON.stringify({ lineThreshold: 100000, changeRatio: 1 }));
    repo.commitAll('loosen');
    const r = hook(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
        { id: 'w1' },
      ),
    );
    expect(decision(r)).toBe('deny');
    // a new session starts from the new HEAD: what a person commits is the policy
    expect(
      decision(
        hook(
          repo,
          claude(
            repo,
            'Write',
            { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
            { session: 'fresh' },
          ),
        ),
      ),
    ).toBeNull();
  });

  it('a file path that escapes through ".." from an outside cwd, or a symlinked folder, is refused', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const out = outsideDir();
    symlinkSync(out, path.join(repo.dir, 'linked'));
    expect(
      decision(
        hook(
          repo,
          claude(
            repo,
            'Write',
            { file_path: path.join(repo.dir, 'linked', 'x.txt'), content: 'x' },
            { cwd: out },
          ),
        ),
      ),
    ).toBe('deny');
    expect(existsSync(path.join(out, 'x.txt'))).toBe(false);
    unlinkSync(path.join(repo.dir, 'linked'));
  });
});

describe('the session base, read from refs the agent can write', () => {
  it('a forged session step holding a 10-line "base" does not let a truncation through', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    // guard has run here (its journal exists): otherwise a ref under refs/guard/ with no journal is
    // refused by the net before anything is measured (holes3, "rm -r .git/guard")
    hook(repo, claude(repo, 'Bash', { command: 'ls' }, { session: 'warm' }));
    // what an agent can do from the shell: a commit whose tree holds the file it wants to write, and a step naming it
    const blob = repo.git(['hash-object', '-w', '--stdin'], { input: lines(10) }).trim();
    const tree = repo.git(['mktree'], { input: `100644 blob ${blob}\tstate.py\n` }).trim();
    const body = {
      v: 1,
      kind: 'write',
      harness: 'claude',
      session: 'sess-1',
      toolCall: 'x',
      tool: 'Write',
      phase: 'pre',
      checkpoint: 'forged',
      paths: ['state.py'],
      worktree: repo.dir,
      time: '2000-01-01T00:00:00.000Z',
      outcome: 'allow',
    };
    const commit = repo
      .git([
        'commit-tree',
        tree,
        '-m',
        `guard session claude sess-1: write state.py\n\n${JSON.stringify(body)}`,
      ])
      .trim();
    repo.git(['update-ref', 'refs/guard/sessions/claude/sess-1/20000101T000000Z-forged', commit]);
    const r = hook(
      repo,
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'state.py'), content: lines(10) }),
    );
    expect(decision(r)).toBe('deny');
    expect(reason(r)).toContain('state.py would lose 260 of 270 lines');
  });
});

describe('more inputs the agent can move', () => {
  it('a cwd that does not exist: the write into the project is still judged', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    const r = hook(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
        { cwd: '/nonexistent/guard/dir' },
      ),
    );
    expect(decision(r)).toBe('deny');
  });

  it('gemini: a background shell command (is_background) is kept open too, and reported once at its own after-event', () => {
    const repo = makeRepo({ 'keep.py': lines(200) });
    repo.write('keep.py', lines(320));
    const g = (event: string, input: object) =>
      JSON.stringify({
        session_id: 'g1',
        cwd: repo.dir,
        hook_event_name: event,
        tool_name: 'run_shell_command',
        tool_input: input,
        ...(event === 'AfterTool' ? { tool_response: {} } : {}),
      });
    const bg = { command: 'git checkout -- .', is_background: true };
    hook(repo, g('BeforeTool', bg), {}, 'gemini');
    repo.git(['checkout', '--', '.']);
    const after = hook(repo, g('AfterTool', bg), {}, 'gemini');
    const msg: string = after.json.hookSpecificOutput.additionalContext;
    expect(msg.split('keep.py lost 120 of 320 lines')).toHaveLength(2);
    // and not again at the next call: it was reported
    expect(hook(repo, g('BeforeTool', { command: 'ls' }), {}, 'gemini').stdout).toBe('');
  });
});

describe("background commands and the session's own writes", () => {
  it('a file the session edited after the background command started, then wiped by it, is still reported', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const bg = { command: 'sleep 1; rm keep.py', run_in_background: true };
    hook(repo, claude(repo, 'Bash', bg, { id: 'bg1' }));
    hook(repo, claude(repo, 'Bash', bg, { id: 'bg1', event: 'PostToolUse' }));
    // the agent's own small edit, allowed and applied
    const edit = {
      file_path: path.join(repo.dir, 'keep.py'),
      old_string: 'line 7\n',
      new_string: 'LINE 7\n',
    };
    expect(hook(repo, claude(repo, 'Edit', edit, { id: 'e1' })).stdout).toBe('');
    repo.write('keep.py', lines(300).replace('line 7\n', 'LINE 7\n'));
    expect(hook(repo, claude(repo, 'Edit', edit, { id: 'e1', event: 'PostToolUse' })).stdout).toBe(
      '',
    );
    // then the background command deletes it
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const next = hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'n1' }));
    expect(decision(next)).toBe('deny');
    expect(reason(next)).toContain('keep.py was deleted (300 lines)');
  });
});

describe("the harness's own config, moved from the shell", () => {
  it('a command that switches the hooks off or loosens the policy is reported, though it deletes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', '.claude/settings.json': '{"hooks":{}}\n' });
    const cmd = `echo '{"disableAllHooks":true}' > .claude/settings.local.json && echo '{"lineThreshold":100000}' > guard.config.json`;
    hook(repo, claude(repo, 'Bash', { command: cmd }, { id: 'g1' }));
    sh(repo, cmd);
    const post = hook(
      repo,
      claude(repo, 'Bash', { command: cmd }, { id: 'g1', event: 'PostToolUse' }),
    );
    const msg: string = post.json?.hookSpecificOutput?.additionalContext ?? '';
    expect(msg).toContain('changed what guards this repository');
    expect(msg).toContain('.claude/settings.local.json');
    expect(msg).toContain('guard.config.json');
  });
});

describe("the session's policy anchor, forged", () => {
  it('a forged earlier step whose HEAD had a loose config does not loosen what the real steps hold', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    // the real session starts under the default policy
    hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'l1' }));
    hook(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'l1', event: 'PostToolUse' }));
    // the agent, from the shell: a loose config at HEAD, and a forged earlier step whose HEAD is that commit
    repo.write('guard.config.json', JSON.stringify({ lineThreshold: 100000, changeRatio: 1 }));
    const loose = repo.commitAll('loosen');
    const cp = repo
      .git(['commit-tree', `${loose}^{tree}`, '-p', loose, '-m', 'guard checkpoint: forged'])
      .trim();
    const body = {
      v: 1,
      kind: 'shell',
      harness: 'claude',
      session: 'sess-1',
      toolCall: 'x',
      tool: 'Bash',
      phase: 'pre',
      checkpoint: 'forged',
      paths: null,
      worktree: repo.dir,
      time: '2000-01-01T00:00:00.000Z',
    };
    const step = repo
      .git([
        'commit-tree',
        `${loose}^{tree}`,
        '-p',
        cp,
        '-m',
        `guard session claude sess-1: pre shell\n\n${JSON.stringify(body)}`,
      ])
      .trim();
    repo.git(['update-ref', 'refs/guard/sessions/claude/sess-1/20000101T000000Z-forged', step]);
    const r = hook(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
        { id: 'w1' },
      ),
    );
    expect(decision(r)).toBe('deny');
  });
});

describe("pure work on the main thread stays inside the hook's budget", () => {
  // Matching a patch's lines is synchronous: while it ran, the timer that answers
  // "ran out of time" could not fire, so the harness timed the hook out first, and
  // Claude Code runs the tool after a hook timeout unless told onFailure: "block".
  // A Codex patch whose 6,000 lines match the file's first 6,000 but the last:
  // lines x pattern comparisons, minutes of work before the budget was checked.
  it('a Codex patch that seeks minutes of lines is refused at the budget, with the reason', () => {
    const file = Array.from({ length: 30_000 }, () => 'x').join('\n') + '\n';
    const repo = makeRepo({ 'big.txt': file });
    const patch = [
      '*** Begin Patch',
      '*** Update File: big.txt',
      ...Array.from({ length: 6_000 }, () => '-x'),
      '-y',
      '+z',
      '*** End Patch',
      '',
    ].join('\n');
    const payload = JSON.stringify({
      session_id: 'cx',
      turn_id: 't',
      cwd: repo.dir,
      hook_event_name: 'PreToolUse',
      model: 'gpt-5.5',
      permission_mode: 'bypassPermissions',
      tool_name: 'apply_patch',
      tool_input: { command: patch },
      tool_use_id: 'call_1',
    });
    const started = Date.now();
    const r = hook(repo, payload, { GUARD_HOOK_TIMEOUT: '2' }, 'codex');
    expect(decision(r), r.stderr).toBe('deny');
    expect(reason(r)).toMatch(/ran out of time \(2 s\)/);
    // (the bound is loose on purpose: it fails only if the loop ignores the budget, which takes minutes)
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(repo.read('big.txt')).toBe(file);
  }, 90_000);

  it('a Write of a million placeholder lines over a large file is answered at the budget (the placeholder search scanned the old file once per line)', () => {
    const file = Array.from({ length: 30_000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const repo = makeRepo({ 'big.txt': file });
    const started = Date.now();
    const r = hook(
      repo,
      claude(repo, 'Write', {
        file_path: path.join(repo.dir, 'big.txt'),
        content: '// ...\n'.repeat(1_000_000),
      }),
      { GUARD_HOOK_TIMEOUT: '2' },
    );
    expect(decision(r), r.stderr).toBe('deny');
    // (loose on purpose: before, the hook ran for many minutes)
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(repo.read('big.txt')).toBe(file);
  }, 90_000);
});
